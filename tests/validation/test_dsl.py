"""The author DSL compilers: output shape and key order, fail-fast author errors, cycles, depth."""

from __future__ import annotations

import json
from collections import OrderedDict
from decimal import Decimal
from typing import Any

import pytest

import trio_harness as th
from tests.support.dsl_fixtures import host_port_schema, host_port_spec
from trio_harness import JsonSchemaError

compile_value = th.value_schema_spec_to_json_schema
compile_params = th.parameter_schema_spec_to_json_schema


def same_json(a: object, b: object) -> bool:
    """Equal including key order (dict equality alone ignores order)."""
    return json.dumps(a) == json.dumps(b) and a == b


def value_error(spec: object) -> list[str]:
    with pytest.raises(JsonSchemaError) as info:
        compile_value(spec)
    assert info.value.code == "UNSUPPORTED_SCHEMA"
    assert info.value.message == "unsupported JSON schema: " + "; ".join(info.value.violations)
    return info.value.violations


def params_error(spec: object) -> list[str]:
    with pytest.raises(JsonSchemaError) as info:
        compile_params(spec)
    return info.value.violations


# -- compiled shape -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"type": "string", "enum": ["a", "b"], "const": "a"},
            {"type": "string", "enum": ["a", "b"], "const": "a"},
        ),
        ({"type": "number"}, {"type": "number"}),
        ({"type": "integer"}, {"type": "integer"}),
        ({"type": "boolean"}, {"type": "boolean"}),
        ({"type": "null"}, {"type": "null"}),
        ({"type": "array", "items": {"type": "json"}}, {"type": "array", "items": {}}),
        (
            {"type": "object", "additionalProperties": False, "properties": {}},
            {"type": "object", "additionalProperties": False, "properties": {}},
        ),
        (
            {
                "type": "json",
                "description": "anything",
                "title": "Any JSON",
                "default": None,
                "examples": [{"nested": True}],
            },
            {
                "description": "anything",
                "title": "Any JSON",
                "default": None,
                "examples": [{"nested": True}],
            },
        ),
        (
            {"oneOf": [{"type": "string"}, {"type": "null"}]},
            {"oneOf": [{"type": "string"}, {"type": "null"}]},
        ),
    ],
)
def test_compiles_every_value_root_and_the_json_node(spec: object, expected: object) -> None:
    # upstream #26
    assert same_json(compile_value(spec), expected)


def test_implicit_parameter_root_is_open_and_explicit_objects_keep_their_openness() -> None:
    # upstream #27
    spec = {
        "closed": {
            "type": "object",
            "additionalProperties": False,
            "required": True,
            "properties": {"id": {"type": "integer", "required": True}},
        },
        "open": {"type": "object", "additionalProperties": True},
    }
    expected = {
        "type": "object",
        "properties": {
            "closed": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            },
            "open": {"type": "object", "additionalProperties": True},
        },
        "required": ["closed"],
    }
    assert same_json(compile_params(spec), expected)


def test_key_order_is_fixed_whatever_the_author_order() -> None:
    # spec §a.2: type, annotations (description, title, default, examples), enum, const
    spec = {
        "const": "a",
        "examples": ["a"],
        "enum": ["a"],
        "default": "a",
        "title": "T",
        "description": "D",
        "type": "string",
    }
    out = compile_value(spec)
    assert list(out) == ["type", "description", "title", "default", "examples", "enum", "const"]
    union = compile_value({"title": "U", "oneOf": [{"type": "string"}, {"type": "null"}]})
    assert list(union) == ["oneOf", "title"]
    obj = compile_value(
        {
            "properties": {"a": {"type": "string", "required": True}},
            "additionalProperties": True,
            "description": "d",
            "type": "object",
        }
    )
    assert list(obj) == ["type", "description", "additionalProperties", "properties", "required"]
    array = compile_value({"items": {"type": "null"}, "title": "t", "type": "array"})
    assert list(array) == ["type", "title", "items"]


def test_converts_a_parameter_map_with_a_required_array() -> None:
    # upstream #137
    spec = {
        "path": {"type": "string", "required": True, "description": "Absolute path"},
        "offset": {"type": "number"},
        "limit": {"type": "number", "description": "Max lines"},
    }
    assert same_json(
        compile_params(spec),
        {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Absolute path"},
                "offset": {"type": "number"},
                "limit": {"type": "number", "description": "Max lines"},
            },
            "required": ["path"],
        },
    )


def test_empty_parameter_map() -> None:
    # upstream #138
    assert same_json(compile_params({}), {"type": "object", "properties": {}})


def test_nested_object_spec() -> None:
    # upstream #139
    spec = {"config": host_port_spec(required=True)}
    assert same_json(
        compile_params(spec),
        {"type": "object", "properties": {"config": host_port_schema()}, "required": ["config"]},
    )


@pytest.mark.parametrize(
    ("prop", "expected"),
    [
        # upstream #144
        (
            {"type": "string", "enum": ["red", "green", "blue"], "description": "Color choice"},
            {"type": "string", "description": "Color choice", "enum": ["red", "green", "blue"]},
        ),
        # upstream #145
        ({"type": "number", "default": 25}, {"type": "number", "default": 25}),
        # upstream #146
        (
            {"type": "array", "items": {"type": "string"}},
            {"type": "array", "items": {"type": "string"}},
        ),
        # upstream #147
        (
            {"type": "string", "enum": ["low", "high"], "default": "low"},
            {"type": "string", "default": "low", "enum": ["low", "high"]},
        ),
        # upstream #148
        ({"type": "string"}, {"type": "string"}),
        # upstream #149
        ({"type": "array"}, {"type": "array"}),
    ],
)
def test_dsl_edge_cases_emit_exactly_the_declared_keys(prop: object, expected: object) -> None:
    assert same_json(compile_params({"p": prop})["properties"]["p"], expected)


def test_nested_object_with_all_optional_properties_has_no_required_key() -> None:
    # upstream #150
    out = compile_params(
        {
            "config": {
                "type": "object",
                "additionalProperties": True,
                "properties": {"a": {"type": "string"}},
            }
        }
    )
    assert "required" not in out
    assert "required" not in out["properties"]["config"]


def test_array_of_objects_matches_the_runtime_schema() -> None:
    # upstream #153
    spec = {
        "servers": {
            "type": "array",
            "items": host_port_spec(),
        }
    }
    assert same_json(
        compile_params(spec),
        {
            "type": "object",
            "properties": {
                "servers": {
                    "type": "array",
                    "items": host_port_schema(),
                }
            },
        },
    )


def test_a_property_named_dunder_proto_is_plain_data() -> None:
    # upstream #31
    out = compile_params({"__proto__": {"type": "string", "required": True}})
    assert same_json(
        out,
        {
            "type": "object",
            "properties": {"__proto__": {"type": "string"}},
            "required": ["__proto__"],
        },
    )


def test_required_follows_map_key_order() -> None:
    out = compile_params(
        {
            "z": {"type": "null", "required": True},
            "a": {"type": "null"},
            "m": {"type": "null", "required": True},
        }
    )
    assert out["required"] == ["z", "m"]


def test_output_is_detached_from_the_author_spec() -> None:
    default = {"k": [1]}
    members = ["a", "b"]
    items = {"type": "string", "enum": members}
    spec: dict[str, Any] = {"type": "array", "items": items, "default": [default]}
    out = compile_value(spec)
    default["k"].append(2)
    members.append("c")
    assert out == {
        "type": "array",
        "default": [{"k": [1]}],
        "items": {"type": "string", "enum": ["a", "b"]},
    }
    assert out["items"] is not items


def test_sibling_reuse_of_one_spec_object_is_fine() -> None:
    shared = {"type": "string"}
    out = compile_params({"a": shared, "b": {"type": "array", "items": shared}})
    assert out["properties"]["a"] == {"type": "string"}
    assert out["properties"]["b"] == {"type": "array", "items": {"type": "string"}}
    assert out["properties"]["a"] is not out["properties"]["b"]["items"]
    union = {"oneOf": [shared, shared]}
    # Two identical branches compile (overlap is a validation-time matter).
    assert compile_value(union) == {"oneOf": [{"type": "string"}, {"type": "string"}]}


# -- author errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        # upstream #28 (value roots)
        ({"type": "object"}, "schema.additionalProperties must be explicitly true or false"),
        ({"oneOf": [{"type": "string"}]}, "schema.oneOf must be an array of at least two schemas"),
        (
            {"type": "number", "enum": ["1"]},
            "schema.enum must be a non-empty array of number values",
        ),
        (
            {"type": "string", "enum": ["a"], "const": "b"},
            "schema.const must be one of schema.enum when both are declared",
        ),
        ({"type": "integer", "const": 1.5}, "schema.const must be a integer value"),
        (
            {"type": "array", "items": {"type": "string", "required": True}},
            "schema.items.required is not supported by the value schema DSL",
        ),
        ({"type": "array", "items": 42}, "schema.items must be a value schema object"),
        (
            {"type": "string", "extra": True},
            "schema.extra is not supported by the value schema DSL",
        ),
        (
            {"type": "string", "oneOf": [{"type": "string"}, {"type": "null"}]},
            "schema cannot declare both type and oneOf",
        ),
        ({"oneOf": "not-an-array"}, "schema.oneOf must be an array of at least two value schemas"),
        ({"type": "string", "enum": "a"}, "schema.enum must be a non-empty array of scalar values"),
        (
            {},
            "schema.type must be string/number/integer/boolean/null/array/object/json, or use oneOf",
        ),
        (None, "schema must be a value schema object"),
        (
            {"type": "tuple"},
            "schema.type must be string/number/integer/boolean/null/array/object/json, or use oneOf",
        ),
        (
            {"type": ["string"]},
            "schema.type must be string/number/integer/boolean/null/array/object/json, or use oneOf",
        ),
        (
            {"type": "string", "required": True},
            "schema.required is not supported by the value schema DSL",
        ),
        (
            {"oneOf": [{"type": "string"}, {"type": "null", "required": True}]},
            "schema.oneOf[1].required is not supported by the value schema DSL",
        ),
        (
            {"type": "object", "additionalProperties": 1},
            "schema.additionalProperties must be explicitly true or false",
        ),
        ({"type": "json", "enum": [1]}, "schema.enum is not supported by the value schema DSL"),
        (
            {"oneOf": [{"type": "string"}, {"type": "null"}], "enum": [1]},
            "schema.enum is not supported by the value schema DSL",
        ),
    ],
)
def test_rejects_forged_value_specs_with_the_exact_message(spec: object, message: str) -> None:
    assert value_error(spec) == [message]


def test_default_that_is_not_lossless_is_rejected_by_the_final_assertion() -> None:
    # upstream #28 `{type:'json', default: undefined}` [JS] -> Python analogue: non-JSON defaults
    assert value_error({"type": "json", "default": float("nan")}) == [
        "schema.default annotation must be lossless JSON data"
    ]
    assert value_error({"type": "json", "examples": [Decimal("1")]}) == [
        "schema.examples annotation must be lossless JSON data"
    ]
    assert value_error({"type": "string", "description": 7}) == [
        "schema.description must be a string"
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        # upstream #28 (parameter maps)
        (
            {"value": {"type": "string", "required": False}},
            "parameters.value.required must be true when present",
        ),
        (
            {"value": {"type": "string", "required": 1}},
            "parameters.value.required must be true when present",
        ),
        (None, "parameters must be an object of value schemas"),
        ({"bad": 42}, "parameters.bad must be a value schema object"),
        ([], "parameters must be an object of value schemas"),
        (
            {"o": {"type": "object", "additionalProperties": True, "properties": []}},
            "parameters.o.properties must be an object of value schemas",
        ),
        (
            {"o": {"type": "object", "additionalProperties": True, "properties": {"x": "s"}}},
            "parameters.o.properties.x must be a value schema object",
        ),
        (
            {"a.b": {"oneOf": [{"type": "string"}, 7]}},
            "parameters.a.b.oneOf[1] must be a value schema object",
        ),
    ],
)
def test_rejects_forged_parameter_maps_with_the_exact_message(spec: object, message: str) -> None:
    assert params_error(spec) == [message]


def test_required_check_precedes_node_checks_and_is_fail_fast_in_declaration_order() -> None:
    # record → required → node checks; the first error in depth-first declaration order wins.
    assert params_error({"x": {"type": "bogus", "required": False}}) == [
        "parameters.x.required must be true when present"
    ]
    assert params_error({"a": {"type": "array", "items": 1}, "b": 2}) == [
        "parameters.a.items must be a value schema object"
    ]
    assert params_error({"a": {"type": "string"}, "b": {"type": "array", "extra": 1}}) == [
        "parameters.b.extra is not supported by the value schema DSL"
    ]


class _DictSubclass(dict[str, Any]):
    pass


class _HostileMapping(OrderedDict[str, Any]):
    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("boom")

    def __iter__(self) -> Any:
        raise RuntimeError("boom")


def test_python_analogues_of_non_record_forms() -> None:
    # upstream #28 [JS] symbol keys / non-enumerable keys / forged prototypes → non-str keys and
    # dict subclasses; a hostile mapping is rejected without running its methods.
    assert params_error({1: {"type": "string"}}) == [
        "parameters must be an object of value schemas"
    ]
    assert params_error(_DictSubclass(a={"type": "string"})) == [
        "parameters must be an object of value schemas"
    ]
    assert params_error(_HostileMapping()) == ["parameters must be an object of value schemas"]
    assert value_error(_DictSubclass(type="string")) == ["schema must be a value schema object"]
    assert value_error({"type": "string", 0: 1}) == ["schema must be a value schema object"]
    assert params_error({"x": _HostileMapping()}) == ["parameters.x must be a value schema object"]


def test_python_analogues_of_non_array_forms() -> None:
    # upstream #28 [JS] sparse oneOf / decorated enum → tuples, sets, list subclasses
    class Decorated(list[Any]):
        extra = 1

    assert params_error({"u": {"oneOf": ({"type": "string"}, {"type": "null"})}}) == [
        "parameters.u.oneOf must be an array of at least two value schemas"
    ]
    assert value_error({"type": "string", "enum": Decorated(["a"])}) == [
        "schema.enum must be a non-empty array of scalar values"
    ]
    assert value_error({"type": "string", "enum": {"a"}}) == [
        "schema.enum must be a non-empty array of scalar values"
    ]
    assert value_error({"type": "string", "enum": []}) == [
        "schema.enum must be a non-empty array of string values"
    ]


def test_cyclic_list_as_enum_is_rejected_without_hanging() -> None:
    members: list[Any] = []
    members.append(members)
    assert value_error({"type": "string", "enum": members}) == [
        "schema.enum must be a non-empty array of string values"
    ]
    const: list[Any] = []
    const.append(const)
    assert value_error({"type": "null", "const": const}) == ["schema.const must be a null value"]


def test_rejects_cyclic_author_schemas() -> None:
    # upstream #29
    node: dict[str, Any] = {"type": "array"}
    node["items"] = node
    with pytest.raises(JsonSchemaError, match="circular") as info:
        compile_value(node)
    assert str(info.value) == "unsupported JSON schema: schema.items is circular"

    params: dict[str, Any] = {}
    params["self"] = {"type": "object", "additionalProperties": True, "properties": params}
    assert params_error(params) == ["parameters.self.properties is circular"]

    union: dict[str, Any] = {"oneOf": [{"type": "null"}]}
    union["oneOf"].append({"type": "array", "items": union})
    assert value_error(union) == ["schema.oneOf[1].items is circular"]

    own: dict[str, Any] = {"type": "object", "additionalProperties": True}
    own["properties"] = own
    assert value_error(own) == ["schema.properties is circular"]


def test_compiles_deeply_nested_unions_without_the_call_stack() -> None:
    # upstream #30
    depth = 5_000
    spec: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        spec = {"oneOf": [spec, {"type": "null"}]}
    out = compile_value(spec)
    for _ in range(depth):
        assert out["oneOf"][1] == {"type": "null"}
        out = out["oneOf"][0]
    assert out == {"type": "string"}


def test_deep_error_path_is_rendered_in_full() -> None:
    depth = 5_000
    spec: dict[str, Any] = {"type": "array", "items": 1}
    for _ in range(depth):
        spec = {"type": "array", "items": spec}
    assert value_error(spec) == [
        "schema" + ".items" * (depth + 1) + " must be a value schema object"
    ]


def test_deep_parameter_maps_compile() -> None:
    depth = 5_000
    spec: dict[str, Any] = {"leaf": {"type": "string", "required": True}}
    for _ in range(depth):
        spec = {
            "n": {
                "type": "object",
                "additionalProperties": False,
                "required": True,
                "properties": spec,
            }
        }
    out = compile_params(spec)
    for _ in range(depth):
        assert out["required"] == ["n"]
        out = out["properties"]["n"]
    assert out["required"] == ["leaf"]
