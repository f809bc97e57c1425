"""Hostile schemas and values (issue 18, items 16, 17 and 26): work bounded by the input.

No test times anything: work is counted (normalized schema objects) where a defect was a
blow-up, and answers are compared where it was a wrong answer.
"""

from __future__ import annotations

import re
from typing import Any

import hypothesis
import pytest
from hypothesis import strategies as st

import trio_harness as th
from trio_harness._validation import compile_extended_validator
from trio_harness._validation import normalize as normalize_module
from trio_harness._validation.formats import FORMAT_ASSERTIONS
from trio_harness.lowlevel import set_json_node_limit


def _fan_out(levels: int, width: int, fields: int = 0) -> dict[str, Any]:
    """Definitions ``d0 .. d<levels>``, each referring ``width`` times to the next: the inlined
    schema has ``width ** levels`` copies of the last one."""
    defs: dict[str, Any] = {}
    for level in range(levels):
        properties: dict[str, Any] = {f"f{j}": {"type": "string"} for j in range(fields)}
        properties.update({f"p{j}": {"$ref": f"#/$defs/d{level + 1}"} for j in range(width)})
        defs[f"d{level}"] = {"type": "object", "properties": properties}
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def _too_large(limit: int) -> str:
    return (
        f"schema is larger than the JSON node limit of {limit} nodes (a container shared by "
        "several places counts at each; see set_json_node_limit)"
    )


@pytest.fixture
def normalized_nodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The path of every schema object the normaliser visits."""
    visits: list[str] = []
    real = normalize_module._Normalizer.node

    def counting(self: Any, schema: object, path: str) -> object:
        visits.append(path)
        return real(self, schema, path)

    monkeypatch.setattr(normalize_module._Normalizer, "node", counting)
    return visits


# -- item 16: $ref fan-out and wide unions -------------------------------------------------------


def test_references_fanning_out_past_the_node_limit_are_refused_before_expanding(
    normalized_nodes: list[str],
) -> None:
    # 20 levels of 2 references and 40 fields each: about 45 KB of JSON that inlines to
    # 2**20 * 42 schema objects. It used to expand 10,000 references (96 s) and then keep them.
    schema = _fan_out(20, 2, fields=40)
    report = th.schema.normalize_json_schema(schema)
    assert report.violations == (_too_large(1_000_000),)
    assert report.unkept == (
        'schema.properties.root.$ref: "#/$defs/d0" not inlined: the references expand to more '
        "than the JSON node limit of 1000000 schema objects; nothing normalized",
    )
    assert report.schema == {}
    assert not report.exact
    assert len(normalized_nodes) == 2  # the root and the referring property, nothing inlined
    with pytest.raises(th.JsonSchemaError, match="larger than the JSON node limit"):
        th.define_json_tool(name="t", description="", input_schema=schema, execute=_never)


def test_the_fan_out_limit_follows_the_configured_node_limit(
    normalized_nodes: list[str],
) -> None:
    previous = set_json_node_limit(1000)
    try:
        report = th.schema.normalize_json_schema(_fan_out(12, 2))  # 8,191 objects once inlined
    finally:
        set_json_node_limit(previous)
    assert report.violations == (_too_large(1000),)
    assert len(normalized_nodes) == 2
    small = th.schema.normalize_json_schema(_fan_out(8, 2))  # 511: well inside the default limit
    assert small.exact
    assert small.schema["properties"]["root"]["properties"]["p1"]["properties"]["p0"]


def test_a_reference_chain_is_normalized_once_per_level(normalized_nodes: list[str]) -> None:
    # Each inlined schema used to be walked again at every level above it: 100 levels visited
    # 5,000+ schema objects.
    levels = 100
    report = th.schema.normalize_json_schema(_fan_out(levels, 1))
    assert report.exact
    node = report.schema["properties"]["root"]
    for _ in range(levels):
        node = node["properties"]["p0"]
    assert node == {"type": "string"}
    assert len(normalized_nodes) <= 3 * levels + 5


def test_inlining_is_charged_as_it_goes_when_the_estimate_cannot_see_it(
    normalized_nodes: list[str],
) -> None:
    # allOf branches are merged, so the up-front count leaves them out; the running count
    # still stops the expansion at the limit.
    defs: dict[str, Any] = {
        f"d{level}": {
            "allOf": [{"$ref": f"#/$defs/d{level + 1}"}, {"$ref": f"#/$defs/d{level + 1}"}]
        }
        for level in range(12)
    }
    defs["d12"] = {"type": "object", "properties": {"a": {"type": "string"}}}
    previous = set_json_node_limit(1000)
    try:
        report = th.schema.normalize_json_schema({"$ref": "#/$defs/d0", "$defs": defs})
    finally:
        set_json_node_limit(previous)
    assert report.violations == (_too_large(1000),)
    assert len(normalized_nodes) <= 1002


def test_a_wide_any_of_drops_duplicates_by_json_equality() -> None:
    # Python's ``True == 1`` made the old check (``branch in unique``) drop the second branch,
    # and its annotation with it.
    # (Bounded branches: an unconstrained integer branch would hold the other, issue 29.)
    branches = [
        {"type": "integer", "minimum": 0, "default": 1},
        {"type": "integer", "minimum": 0, "default": True},
    ]
    report = th.schema.normalize_json_schema({"anyOf": branches}, tool_input=False)
    assert "schema.anyOf: duplicate branch removed" not in report.changes
    assert report.unkept == (
        "schema.anyOf: branches overlap by type (anyOf is not expressible as oneOf); removed",
    )
    same = th.schema.normalize_json_schema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 0, "default": 1},
                {"default": 1.0, "minimum": 0, "type": "integer"},
            ]
        },
        tool_input=False,
    )
    assert same.schema == {"type": "integer", "minimum": 0, "default": 1}
    assert "schema.anyOf: duplicate branch removed" in same.changes


def test_ten_thousand_any_of_branches_are_deduplicated() -> None:
    branches = [
        {"type": "object", "properties": {f"k{i}": {"type": "string"}}} for i in range(10_000)
    ]
    report = th.schema.normalize_json_schema(
        {"anyOf": [*branches, *branches[:3], {"type": "string"}]}, tool_input=False
    )
    assert report.changes.count("schema.anyOf: duplicate branch removed") == 3


async def _never(args: Any, ctx: Any) -> Any:
    raise AssertionError("not called")


# -- item 17: patterns that backtrack exponentially, and the email format ----------------------

_EXPONENTIAL = [
    "^(a+)+$",
    "(a|a)*",
    "(a|aa)+",
    "(\\w+\\s?)+$",
    "(a*)*b",
    "(a|b|ab)*c",
    "([a-zA-Z0-9]{2,4})+$",
    "(a|a){30}",
    "(?=(a+)+$)x",  # inside a lookahead too
    "^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$",
]
_LINEAR = [
    "^([a-z0-9]+\\.)+[a-z]{2,}$",
    "(\\d{1,3}\\.){3}\\d{1,3}",
    "(foo|bar)*",
    "^[a-z]+(-[a-z]+)*$",
    "^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$",
    "^(ab|a)*$",
    "(?:[ab]|a)+",
    "^/(?:[^/]+/)*[^/]*$",
    "^\\d{4}-\\d{2}-\\d{2}$",
]
_REASON = (
    "a repetition can match the same text in more than one way (nested quantifiers such as "
    "(a+)+, or overlapping alternatives such as (a|aa)+), which backtracks exponentially"
)


@pytest.mark.parametrize("pattern", _EXPONENTIAL)
def test_a_pattern_that_backtracks_exponentially_is_refused_naming_it(pattern: str) -> None:
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": pattern}}}
    with pytest.raises(th.JsonSchemaError) as caught:
        th.schema.assert_extended_json_schema(schema)
    assert caught.value.violations == [
        f"schema.properties.code.pattern {th.lowlevel.js_json(pattern)} is refused: {_REASON}"
    ]
    with pytest.raises(th.JsonSchemaError, match="backtracks exponentially"):
        th.define_json_tool(name="t", description="", input_schema=schema, execute=_never)


@pytest.mark.parametrize("pattern", _LINEAR)
async def test_patterns_whose_repetitions_are_unambiguous_are_kept(pattern: str) -> None:
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": pattern}}}
    th.schema.assert_extended_json_schema(schema)
    definition, report = th.define_json_tool(
        name="t", description="", input_schema=schema, execute=_echo
    )
    assert report.exact
    runtime = th.ToolRuntime()
    runtime.register(definition)
    result = await runtime.execute(
        th.ToolExecutionInput(call_id="c", name="t", arguments={"code": "~" * 40})
    )
    # Only ``(foo|bar)*`` matches 40 tildes (it matches the empty string anywhere).
    assert result.is_error is (pattern != "(foo|bar)*")


_OLD_EMAIL = re.compile(r"[^\s@]+@[^\s@]+\.[^\s@]+\Z")


@hypothesis.given(
    st.text(alphabet=st.sampled_from(["a", "@", ".", " ", "\u2028", "é", "\t"]), max_size=12)
    | st.emails()
)
def test_the_email_format_keeps_its_rule(text: str) -> None:
    assert FORMAT_ASSERTIONS["email"](text) is (_OLD_EMAIL.match(text) is not None)


def test_the_email_format_is_checked_in_one_pass() -> None:
    # The regular expression backtracked quadratically here (8,000 dots: 1.7 s; this: minutes).
    assert FORMAT_ASSERTIONS["email"]("a@" + "." * 60_000 + " ") is False
    assert FORMAT_ASSERTIONS["email"]("a@" + "b." * 60_000 + "c") is True


async def _echo(args: Any, ctx: Any) -> Any:
    return args


# -- item 26: uniqueItems over deep items ---------------------------------------------------------


def _nested(depth: int, leaf: object) -> object:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize("depth", [500, 5_000])
def test_unique_items_compares_items_of_any_depth(depth: int) -> None:
    # A recursive comparison used to hit the recursion limit and report the value as not
    # lossless JSON; equal deep items hashed and compared recursively too.
    schema = {"type": "array", "uniqueItems": True}
    check = compile_extended_validator(schema)
    distinct = [_nested(depth, 1), _nested(depth, 2), _nested(depth, True)]
    equal = [_nested(depth, 1), _nested(depth, "x"), _nested(depth, 1.0)]
    for value, expected in (
        (distinct, []),
        (equal, ['"value" must not contain duplicate items (items 0 and 2 are equal)']),
    ):
        assert th.schema.validate_extended_value(schema, value) == expected
        assert check(value, "value") == expected
