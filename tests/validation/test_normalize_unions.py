"""``normalize_json_schema`` on unions (issue 29): an ``anyOf`` proven disjoint by type, by
distinct ``const``/``enum`` values or by a required discriminator is kept as ``oneOf``; a union that
cannot be kept is refused even with ``allow_unkept``; ``propertyNames`` every key satisfies is
dropped; ``optional_defaults``. Local acceptance is compared with ``jsonschema`` of the original."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

import trio_harness as th
from trio_harness.lowlevel import compile_extended_validator


async def _body(args: Any, ctx: Any) -> Any:
    return "ran"


def _accepts(schema: Any) -> Any:
    """``value -> bool`` of the normalised schema (asserted exact)."""
    report = th.schema.normalize_json_schema(schema)
    assert report.exact, report.unkept
    check = compile_extended_validator(report.schema)
    return lambda value: check(value, "") == []


def _agrees(schema: Any, values: list[Any]) -> None:
    ours = _accepts(schema)
    theirs = jsonschema.Draft202012Validator(schema)
    assert [ours(v) for v in values] == [theirs.is_valid(v) for v in values]


NUMBERS = {"anyOf": [{"type": "number", "const": 1}, {"type": "number", "const": -1}]}
ZOD_UNION = {
    "type": "object",
    "properties": {
        "step": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "op": {"type": "string", "const": "add"},
                        "n": {"type": "number"},
                    },
                    "required": ["op", "n"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {"op": {"type": "string", "const": "reset"}},
                    "required": ["op"],
                    "additionalProperties": False,
                },
            ]
        }
    },
    "required": ["step"],
}


def test_an_any_of_of_distinct_consts_is_kept_as_one_of() -> None:
    report = th.schema.normalize_json_schema(NUMBERS, tool_input=False)
    assert report.exact
    assert report.schema == {"oneOf": NUMBERS["anyOf"]}
    assert report.changes == (
        "schema.anyOf: branches disjoint by const/enum values: written as oneOf",
    )
    _agrees(NUMBERS, [1, -1, 1.0, 0, 5, "1", None, True])


def test_a_discriminated_union_is_kept_as_one_of() -> None:
    report = th.schema.normalize_json_schema(ZOD_UNION)
    assert report.exact
    assert (
        'schema.properties.step.anyOf: branches disjoint by the required discriminator "op": '
        in ("\n".join(report.changes))
    )
    _agrees(
        ZOD_UNION,
        [
            {"step": {"op": "add", "n": 2}},
            {"step": {"op": "reset"}},
            {"step": {"op": "add"}},
            {"step": {"op": 5}},
            {"step": {"op": "reset", "n": 1}},
            {"step": {}},
            {"step": "add"},
        ],
    )


def test_distinct_enums_and_nested_unions_count_by_their_values() -> None:
    schema = {"anyOf": [{"enum": ["a", "b"]}, {"anyOf": [{"const": "c"}, {"enum": ["d", 4]}]}]}
    report = th.schema.normalize_json_schema(schema, tool_input=False)
    assert report.exact, report.unkept
    _agrees(schema, ["a", "b", "c", "d", 4, 4.0, "e", 5, None])


@pytest.mark.parametrize(
    "schema",
    [
        # a value in two branches: 1 and 1.0 are one JSON value
        {"anyOf": [{"enum": [1, 2]}, {"enum": [3, 1.0]}]},
        {"anyOf": [{"enum": ["a", "b"]}, {"enum": ["b", "c"]}]},
        # one branch does not require the discriminator
        {
            "anyOf": [
                {"type": "object", "properties": {"op": {"const": "a"}}, "required": ["op"]},
                {"type": "object", "properties": {"op": {"const": "b"}}},
            ]
        },
        # the discriminator's values overlap
        {
            "anyOf": [
                {"type": "object", "properties": {"op": {"enum": ["a", "b"]}}, "required": ["op"]},
                {"type": "object", "properties": {"op": {"const": "b"}}, "required": ["op"]},
            ]
        },
        # same type, one branch without values
        {"anyOf": [{"type": "string", "const": "a"}, {"type": "string", "maxLength": 3}]},
    ],
)
def test_branches_that_may_overlap_stay_unkept(schema: Any) -> None:
    report = th.schema.normalize_json_schema(schema, tool_input=False)
    assert report.unkept == (
        "schema.anyOf: branches overlap by type (anyOf is not expressible as oneOf); removed",
    )
    assert report.refused == report.unkept


SMALL = st.sampled_from([0, 1, 1.0, 2, -1, 0.5, "a", "b", True, False, None])


@given(st.lists(st.lists(SMALL, min_size=1, max_size=3), min_size=2, max_size=4))
def test_a_union_kept_as_one_of_accepts_what_jsonschema_accepts(enums: list[list[Any]]) -> None:
    schema = {"anyOf": [{"enum": members} for members in enums]}
    report = th.schema.normalize_json_schema(schema, tool_input=False)
    theirs = jsonschema.Draft202012Validator(schema)
    branches = [jsonschema.Draft202012Validator(branch) for branch in schema["anyOf"]]
    values = [0, 1, 1.0, 2, -1, 0.5, "a", "b", "c", True, False, None, [], {}, 3]
    assert report.violations == ()
    if not report.exact:
        # Refused only where two branches really share a value.
        assert any(sum(b.is_valid(v) for b in branches) > 1 for v in values)
        return
    check = compile_extended_validator(report.schema)
    assert [check(v, "") == [] for v in values] == [theirs.is_valid(v) for v in values]


def test_property_names_every_key_satisfies_is_dropped() -> None:
    record = {
        "type": "object",
        "propertyNames": {"type": "string"},
        "additionalProperties": {"type": "string"},
    }
    report = th.schema.normalize_json_schema(record)
    assert report.exact
    assert report.changes == ("schema.propertyNames: dropped (every object key is a string)",)
    assert report.schema == {"type": "object", "additionalProperties": {"type": "string"}}
    _agrees(record, [{}, {"a": "x"}, {"a": 1}])


@pytest.mark.parametrize(
    "names", [{"type": "string", "minLength": 2}, {"pattern": "^a"}, {"enum": ["a"]}, False]
)
def test_other_property_names_stay_unkept_by_name(names: Any) -> None:
    report = th.schema.normalize_json_schema({"type": "object", "propertyNames": names})
    assert report.unkept == ("schema.propertyNames: not supported (removed)",)


OVERLAPPING = {
    "anyOf": [
        {"type": "object", "properties": {"op": {"type": "string"}}, "required": ["op"]},
        {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]},
    ]
}


def test_allow_unkept_never_widens_a_union_to_anything() -> None:
    with pytest.raises(th.JsonSchemaError) as raised:
        th.define_json_tool(
            name="t", description="", input_schema=OVERLAPPING, execute=_body, allow_unkept=True
        )
    assert raised.value.violations == [
        "schema.anyOf: branches overlap by type (anyOf is not expressible as oneOf); removed"
    ]


def test_a_one_of_whose_branches_lost_parts_and_may_overlap_is_refused() -> None:
    schema = {
        "oneOf": [
            {"type": "string", "not": {"const": "x"}},
            {"type": "string", "maxLength": 3},
        ]
    }
    report = th.schema.normalize_json_schema(schema, tool_input=False)
    assert report.refused == (
        "schema.oneOf: its branches lost parts and may overlap now (not disjoint by type, by "
        "const/enum values or by a required discriminator); removed",
    )
    with pytest.raises(th.JsonSchemaError):
        th.define_json_tool(
            name="t",
            description="",
            input_schema={"type": "object", "properties": {"s": schema}},
            execute=_body,
            allow_unkept=True,
        )


async def test_allow_unkept_keeps_what_can_be_kept_of_each_branch() -> None:
    lossy = {
        "type": "object",
        "properties": {
            "step": {
                "anyOf": [
                    {**ZOD_UNION["properties"]["step"]["anyOf"][0], "patternProperties": {}},
                    ZOD_UNION["properties"]["step"]["anyOf"][1],
                ]
            }
        },
        "required": ["step"],
    }
    tool, report = th.define_json_tool(
        name="t", description="", input_schema=lossy, execute=_body, allow_unkept=True
    )
    assert report.unkept == (
        "schema.properties.step.anyOf[0].patternProperties: not supported (removed)",
    )
    assert report.refused == ()
    runtime = th.ToolRuntime()
    runtime.register(tool)
    bad = await runtime.execute(th.ToolExecutionInput("c1", "t", {"step": {"op": 5}}))
    assert bad.is_error
    assert bad.error is not None
    assert bad.error.info is not None
    assert bad.error.info.code == "INVALID_ARGS"
    good = await runtime.execute(th.ToolExecutionInput("c2", "t", {"step": {"op": "reset"}}))
    assert not good.is_error
    assert good.value == "ran"


def test_optional_defaults_makes_defaulted_required_properties_optional() -> None:
    schema = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["png", "jpeg"], "default": "png"},
            "scale": {"type": "string", "enum": ["css", "device"], "default": "css"},
            "filename": {"type": "string"},
        },
        "required": ["type", "scale", "filename"],
    }
    published = th.schema.normalize_json_schema(schema)
    assert published.schema["required"] == ["type", "scale", "filename"]
    report = th.schema.normalize_json_schema(schema, optional_defaults=True)
    assert report.exact
    assert report.schema["required"] == ["filename"]
    assert report.changes == (
        'schema.required: "type" has a default: optional (optional_defaults)',
        'schema.required: "scale" has a default: optional (optional_defaults)',
    )


def test_listed_values_the_other_branch_refuses_are_disjoint_from_it() -> None:
    # excel-mcp-server's totals cell: a function name, or a formula starting with "=".
    total = {
        "anyOf": [
            {"type": "string", "enum": ["none", "sum", "average"]},
            {"type": "string", "pattern": "^="},
        ]
    }
    report = th.schema.normalize_json_schema(total, tool_input=False)
    assert report.exact
    _agrees(total, ["sum", "none", "=A1", "=", "sums", "", 3, None])
    clash = {"anyOf": [total["anyOf"][0], {"type": "string", "pattern": "^s"}]}
    assert not th.schema.normalize_json_schema(clash, tool_input=False).exact


def test_a_nested_union_counts_by_its_branches_without_being_disjoint_inside() -> None:
    # notion's page parent: a oneOf of object shapes (overlapping among themselves), or a string.
    parent = {
        "anyOf": [
            {
                "oneOf": [
                    {"type": "object", "properties": {"page_id": {"type": "string"}}},
                    {"type": "object", "additionalProperties": True},
                ]
            },
            {"type": "string"},
        ]
    }
    report = th.schema.normalize_json_schema(parent, tool_input=False)
    assert report.exact
    assert report.changes[-1] == "schema.anyOf: branches disjoint by type: written as oneOf"
    _agrees(parent, ["id", {"x": 1}, {"page_id": "p"}, {"page_id": 3}, 5, None])


def test_an_unconstrained_branch_holds_the_others_of_its_type() -> None:
    sorts = {
        "anyOf": [
            {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
            {"type": "string"},
            {"type": "object", "additionalProperties": True},
        ]
    }
    report = th.schema.normalize_json_schema(sorts, tool_input=False)
    assert report.exact
    assert "schema.anyOf[0]: included in the object branch; dropped" in report.changes
    _agrees(sorts, [{}, {"key": 1}, {"key": "k"}, "s", 3, None, []])
