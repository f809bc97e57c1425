"""The enforced raw JSON-Schema subset (upstream json-schema.spec.ts, catalogue §1 cases 1-13)."""

from __future__ import annotations

import math
from collections import OrderedDict
from datetime import date
from typing import Any

import pytest

from trio_harness import (
    JsonSchemaError,
    assert_object_json_schema,
    assert_supported_json_schema,
)

OBJECT_ROOT = 'schema.type must be "object" (structured output is object-rooted)'
UNSUPPORTED_TAIL = (
    " is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/"
    "items/enum/const + annotations)"
)
TYPE_ONE_OF = "type must be one of object/array/string/number/integer/boolean/null"


def violations_of(schema: object, object_root: bool = False) -> list[str]:
    assert_fn = assert_object_json_schema if object_root else assert_supported_json_schema
    with pytest.raises(JsonSchemaError) as caught:
        assert_fn(schema)
    error = caught.value
    assert error.code == "UNSUPPORTED_SCHEMA"
    assert error.name == "JsonSchemaError"
    assert error.message == "unsupported JSON schema: " + "; ".join(error.violations)
    return error.violations


# upstream #1
@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string"},
        {"type": "number"},
        {"type": "integer"},
        {"type": "boolean"},
        {"type": "null"},
        {"type": "array", "items": {"type": "string"}},
        {
            "type": "object",
            "properties": {
                "nested": {"type": "object", "properties": {}, "additionalProperties": False},
                "free": {},
            },
            "required": ["nested"],
            "additionalProperties": True,
        },
        {"oneOf": [{"type": "string"}, {"type": "number"}]},
        {"description": "any JSON", "title": "JSON", "default": None, "examples": [1, "x"]},
    ],
)
def test_accepts_every_json_root_and_every_supported_node(schema: dict[str, Any]) -> None:
    assert assert_supported_json_schema(schema) is None


# upstream #2
@pytest.mark.parametrize(
    "schema",
    [{}, {"type": "string"}, {"type": "array"}, {"oneOf": [{"type": "string"}, {"type": "null"}]}],
)
def test_object_root_guard_rejects_non_object_roots(schema: dict[str, Any]) -> None:
    assert violations_of(schema, object_root=True) == [OBJECT_ROOT]


def test_object_root_guard_accepts_object_root() -> None:
    # upstream #2
    assert assert_object_json_schema({"type": "object"}) is None


def test_object_root_guard_reports_only_walk_violations_when_there_are_some() -> None:
    assert violations_of({"type": "string", "pattern": "x"}, object_root=True) == [
        "schema.pattern" + UNSUPPORTED_TAIL
    ]


# upstream #3
@pytest.mark.parametrize("schema", [None, [], "no", 1, ("type", "string")])
def test_rejects_non_schema_nodes(schema: object) -> None:
    assert violations_of(schema) == ["schema must be a schema object"]


def test_rejects_unknown_types_and_type_arrays() -> None:
    # upstream #3
    assert violations_of({"type": "tuple"})[0] == f"schema.{TYPE_ONE_OF}"
    assert violations_of({"type": ["string", "null"]}) == [
        "schema.type must be a single type string (type arrays are not supported)"
    ]


# upstream #4 (the [JS] sparse/subclass arrays map to a tuple and a list subclass)
class ListSub(list):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize(
    "one_of",
    [[], [{}], "x", ({}, {}), ListSub([{}, {}]), None],
)
def test_one_of_must_be_an_exact_list_of_at_least_two(one_of: object) -> None:
    assert violations_of({"oneOf": one_of}) == [
        "schema.oneOf must be an array of at least two schemas"
    ]


def test_one_of_vocabulary() -> None:
    # upstream #4
    assert violations_of({"type": "string", "oneOf": [{}, {}]}) == [
        "schema cannot declare both type and oneOf"
    ]
    assert violations_of({"oneOf": [{"type": "string"}, {"type": "number"}], "items": {}}) == [
        "schema.items is not supported beside oneOf"
    ]
    assert (
        "schema.oneOf[1].type"
        in violations_of({"oneOf": [{"type": "string"}, {"type": "weird"}]})[0]
    )


def test_keywords_beside_one_of_follow_the_branch_subtrees() -> None:
    schema = {"oneOf": [{"type": "x"}, {}], "enum": [1], "properties": {}}
    assert violations_of(schema) == [
        f"schema.oneOf[0].{TYPE_ONE_OF}",
        "schema.properties is not supported beside oneOf",
        "schema.enum is not supported beside oneOf",
    ]


# upstream #5
@pytest.mark.parametrize(
    "keyword", ["anyOf", "allOf", "not", "pattern", "minimum", "maxLength", "$ref"]
)
def test_rejects_unknown_keywords(keyword: str) -> None:
    assert (
        violations_of({"type": "object", keyword: []})[0] == f"schema.{keyword}{UNSUPPORTED_TAIL}"
    )


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "object", "items": {}}, ['schema.items is not supported on type "object"']),
        (
            {"type": "array", "properties": {}},
            ['schema.properties is not supported on type "array"'],
        ),
        ({"type": "object", "enum": ["x"]}, ['schema.enum is not supported on type "object"']),
        ({"type": "array", "const": None}, ['schema.const is not supported on type "array"']),
        (
            {
                "properties": {},
                "required": [],
                "additionalProperties": True,
                "items": {},
                "enum": [],
                "const": None,
            },
            [
                "schema.properties requires type or oneOf",
                "schema.required requires type or oneOf",
                "schema.additionalProperties requires type or oneOf",
                "schema.items requires type or oneOf",
                "schema.enum requires type or oneOf",
                "schema.const requires type or oneOf",
            ],
        ),
    ],
)
def test_rejects_misplaced_keywords(schema: dict[str, Any], expected: list[str]) -> None:
    # upstream #5
    assert violations_of(schema) == expected


def test_reports_every_independent_violation() -> None:
    # upstream #6
    schema = {
        "type": "object",
        "pattern": "x",
        "properties": {"a": {"type": "weird"}, "b": {"type": "string", "minimum": 1}},
    }
    assert violations_of(schema) == [
        "schema.pattern" + UNSUPPORTED_TAIL,
        f"schema.properties.a.{TYPE_ONE_OF}",
        "schema.properties.b.minimum" + UNSUPPORTED_TAIL,
    ]


# upstream #7
@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "object", "properties": []}, ["schema.properties must be an object of schemas"]),
        (
            {"type": "object", "properties": {"a": "x"}},
            ["schema.properties.a must be a schema object"],
        ),
        ({"type": "object", "required": "a"}, ["schema.required must be an array of strings"]),
        ({"type": "object", "required": [1]}, ["schema.required must be an array of strings"]),
        ({"type": "object", "required": ("a",)}, ["schema.required must be an array of strings"]),
        (
            {"type": "object", "properties": {}, "required": ["missing"]},
            ['schema.required names "missing" which is not in properties'],
        ),
        (
            {"type": "object", "additionalProperties": "yes"},
            ["schema.additionalProperties must be a boolean"],
        ),
        (
            {"type": "object", "additionalProperties": 1},
            ["schema.additionalProperties must be a boolean"],
        ),
        # Python analogue of `properties: undefined`: None is not a record either.
        (
            {"type": "object", "properties": None},
            ["schema.properties must be an object of schemas"],
        ),
        (
            {"type": "object", "properties": None, "required": ["missing"]},
            [
                "schema.properties must be an object of schemas",
                'schema.required names "missing" which is not in properties',
            ],
        ),
    ],
)
def test_validates_object_properties_required_and_openness(
    schema: dict[str, Any], expected: list[str]
) -> None:
    assert violations_of(schema) == expected


# upstream #8
@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "enum": ["a"], "const": "a"},
        {"type": "number", "enum": [1.5], "const": 1.5},
        {"type": "integer", "enum": [1], "const": 1},
        {"type": "integer", "enum": [2.0], "const": 2},
        {"type": "boolean", "enum": [True], "const": True},
        {"type": "null", "enum": [None], "const": None},
    ],
)
def test_accepts_type_correct_enum_and_const(schema: dict[str, Any]) -> None:
    assert_supported_json_schema(schema)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (
            {"type": "string", "enum": []},
            ["schema.enum must be a non-empty array of string values"],
        ),
        (
            {"type": "number", "enum": ["1"]},
            ["schema.enum must be a non-empty array of number values"],
        ),
        (
            {"type": "integer", "enum": [1.5]},
            ["schema.enum must be a non-empty array of integer values"],
        ),
        (
            {"type": "number", "enum": [math.nan]},
            ["schema.enum must be a non-empty array of number values"],
        ),
        (
            {"type": "number", "enum": [True]},
            ["schema.enum must be a non-empty array of number values"],
        ),
        (
            {"type": "integer", "enum": [2**1100]},
            ["schema.enum must be a non-empty array of integer values"],
        ),
        ({"type": "number", "const": -0.0}, ["schema.const must be a number value"]),
        ({"type": "number", "const": math.inf}, ["schema.const must be a number value"]),
        ({"type": "integer", "const": 1.5}, ["schema.const must be a integer value"]),
        ({"type": "boolean", "const": 1}, ["schema.const must be a boolean value"]),
        ({"type": "integer", "const": False}, ["schema.const must be a integer value"]),
        # Python analogues of `enum: undefined` and a sparse enum.
        (
            {"type": "string", "enum": None},
            ["schema.enum must be a non-empty array of string values"],
        ),
        (
            {"type": "string", "enum": ("a",)},
            ["schema.enum must be a non-empty array of string values"],
        ),
        (
            {"type": "string", "enum": ["a"], "const": "b"},
            ["schema.const must be one of schema.enum when both are declared"],
        ),
        (
            {"type": "number", "enum": [1], "const": True},
            ["schema.const must be a number value"],
        ),
    ],
)
def test_requires_type_correct_scalar_enum_and_const(
    schema: dict[str, Any], expected: list[str]
) -> None:
    assert violations_of(schema) == expected


def test_const_membership_treats_one_and_one_point_zero_as_equal() -> None:
    assert_supported_json_schema({"type": "number", "enum": [1], "const": 1.0})


# upstream #9
@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"description": 1}, ["schema.description must be a string"]),
        ({"title": 1}, ["schema.title must be a string"]),
        ({"default": math.inf}, ["schema.default annotation must be lossless JSON data"]),
        ({"examples": [math.nan]}, ["schema.examples annotation must be lossless JSON data"]),
        ({"examples": date(1970, 1, 1)}, ["schema.examples annotation must be lossless JSON data"]),
        ({"default": (1, 2)}, ["schema.default annotation must be lossless JSON data"]),
        ({"default": {1: "x"}}, ["schema.default annotation must be lossless JSON data"]),
        (
            {"description": math.inf},
            [
                "schema.description annotation must be lossless JSON data",
                "schema.description must be a string",
            ],
        ),
    ],
)
def test_validates_annotation_types_and_lossless_payloads(
    schema: dict[str, Any], expected: list[str]
) -> None:
    assert violations_of(schema) == expected


def test_cyclic_annotation_payload_is_rejected() -> None:
    # upstream #9
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    assert violations_of({"default": cyclic}) == [
        "schema.default annotation must be lossless JSON data"
    ]


def test_shared_annotation_payload_in_siblings_is_fine() -> None:
    shared = {"k": [1]}
    assert_supported_json_schema({"default": [shared, shared]})


# upstream #11
def test_rejects_cycles_but_permits_sibling_reuse() -> None:
    cyclic: dict[str, Any] = {"type": "object"}
    cyclic["properties"] = {"self": cyclic}
    assert violations_of(cyclic) == ["schema.properties.self is circular"]
    leaf = {"type": "string"}
    assert_supported_json_schema({"type": "object", "properties": {"a": leaf, "b": leaf}})
    assert_supported_json_schema({"oneOf": [leaf, leaf]})


def test_cyclic_one_of_is_reported_at_its_branch() -> None:
    node: dict[str, Any] = {"oneOf": []}
    node["oneOf"].extend([node, {"type": "null"}])
    assert violations_of(node) == ["schema.oneOf[0] is circular"]


class DictSub(dict):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (
            {"type": "object", "properties": OrderedDict()},
            ["schema.properties must be an object of schemas"],
        ),
        (
            {"type": "object", "properties": {"at": date(2020, 1, 1)}},
            ["schema.properties.at must be a schema object"],
        ),
        (
            {"type": "object", "properties": {1: {}}},
            ["schema.properties must be an object of schemas"],
        ),
        (DictSub(type="string"), ["schema must be a schema object"]),
        ({1: "x", "type": "string"}, ["schema must be a schema object"]),
    ],
)
def test_rejects_exotic_schema_structure(schema: object, expected: list[str]) -> None:
    # upstream #11: the [JS] forged-prototype / symbol-key records map to dict subclasses and
    # dicts with non-str keys.
    assert violations_of(schema) == expected
    if expected == ["schema must be a schema object"]:
        assert violations_of(schema, object_root=True) == expected


# upstream #12
def test_asserts_deeply_nested_unions_without_the_call_stack() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(5_000):
        schema = {"oneOf": [schema, {"type": "null"}]}
    assert_supported_json_schema(schema)


def test_asserts_deeply_nested_objects_and_reports_deep_paths() -> None:
    schema: dict[str, Any] = {"type": "bogus"}
    for _ in range(5_000):
        schema = {"type": "array", "items": schema}
    [violation] = violations_of(schema)
    assert violation == "schema" + ".items" * 5_000 + "." + TYPE_ONE_OF


# upstream #13
def test_required_uses_own_key_semantics() -> None:
    assert violations_of({"type": "object", "properties": {}, "required": ["toString"]}) == [
        'schema.required names "toString" which is not in properties'
    ]


def test_required_checks_run_after_property_subtrees() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "nope"}},
        "required": ["a", "b"],
        "additionalProperties": "no",
    }
    assert violations_of(schema) == [
        f"schema.properties.a.{TYPE_ONE_OF}",
        'schema.required names "b" which is not in properties',
        "schema.additionalProperties must be a boolean",
    ]
