"""validate_json_schema_value and compile_validator (catalogue §1 cases 14-25, plus Python analogues).

Every expectation is checked through both the generic walker and the compiled validator.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from trio_harness import (
    UnreachableVariantError,
    assert_supported_json_schema,
    validate_json_schema_value,
)
from trio_harness.lowlevel import MAX_COMPILED_DEPTH, compile_validator


def both(schema: Any, value: object, path: str = "value") -> list[str]:
    """The violations, asserting that the generic walker and the compiled validator agree."""
    generic = validate_json_schema_value(schema, value, path)
    compiled = compile_validator(schema)(value, path)
    assert compiled == generic
    return generic


NESTED = {
    "type": "object",
    "properties": {
        "file": {"type": "string"},
        "nested": {
            "type": "object",
            "properties": {"line": {"type": "integer"}},
            "required": ["line"],
            "additionalProperties": False,
        },
    },
    "required": ["file"],
}


# upstream #14
@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "string"}, "x"),
        ({"type": "number"}, 1.5),
        ({"type": "integer"}, 2),
        ({"type": "integer"}, 2.0),
        ({"type": "boolean"}, True),
        ({"type": "null"}, None),
        ({"type": "array", "items": {"type": "string"}}, ["x"]),
        ({"type": "object"}, {"x": 1}),
    ],
)
def test_validates_scalar_array_object_and_null_roots(
    schema: dict[str, Any], value: object
) -> None:
    assert both(schema, value) == []


# upstream #15
@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        ({"type": "string"}, 1, '"value" must be a string'),
        ({"type": "number"}, "1", '"value" must be a number'),
        ({"type": "number"}, True, '"value" must be a number'),
        ({"type": "number"}, math.nan, '"value" must be a finite JSON number'),
        ({"type": "number"}, -0.0, '"value" must be a finite JSON number'),
        ({"type": "number"}, math.inf, '"value" must be a finite JSON number'),
        ({"type": "number"}, 2**1100, '"value" must be a finite JSON number'),
        ({"type": "number"}, Decimal(1), '"value" must be a number'),
        ({"type": "integer"}, 1.5, '"value" must be an integer'),
        ({"type": "integer"}, True, '"value" must be an integer'),
        ({"type": "integer"}, -0.0, '"value" must be an integer'),
        ({"type": "integer"}, math.inf, '"value" must be an integer'),
        ({"type": "boolean"}, "true", '"value" must be a boolean'),
        ({"type": "boolean"}, 1, '"value" must be a boolean'),
        ({"type": "null"}, 0, '"value" must be null'),
    ],
)
def test_rejects_wrong_scalar_types_and_lossy_numbers(
    schema: dict[str, Any], value: object, expected: str
) -> None:
    assert both(schema, value) == [expected]


def test_enforces_scalar_enum_and_const_together() -> None:
    # upstream #16
    schema = {"type": "string", "enum": ["a", "b"], "const": "a"}
    assert both(schema, "a") == []
    assert both(schema, "c") == ['"value" must be one of ["a","b"]']
    assert both(schema, "b") == ['"value" must be "a"']


def test_enum_and_const_render_as_javascript_json() -> None:
    assert both({"type": "number", "enum": [1.0, 2.5, 1e21]}, 3) == [
        '"value" must be one of [1,2.5,1e+21]'
    ]
    assert both({"type": "string", "const": "é\n"}, "x") == ['"value" must be "é\\n"']
    assert both({"type": "number", "enum": [1]}, 1.0) == []
    assert both({"type": "integer", "const": 2.0}, 2) == []


def test_enum_membership_never_equates_booleans_and_numbers() -> None:
    # Forged (unasserted) schemas: the comparison is still JavaScript's.
    assert both({"type": "number", "enum": [True]}, 1) == ['"value" must be one of [true]']
    assert both({"type": "boolean", "enum": [1]}, True) == ['"value" must be one of [1]']
    assert both({"type": "boolean", "const": 0}, False) == ['"value" must be 0']


# upstream #17
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"file": "a", "extra": [1], "nested": {"line": 2}}, []),
        ({"nested": {"line": 1}}, ['missing required property "value.file"']),
        (
            {"file": 1, "nested": {}},
            ['"value.file" must be a string', 'missing required property "value.nested.line"'],
        ),
        (
            {"file": "a", "nested": {"line": 1, "extra": True}},
            ['"value.nested.extra" is not a declared property (additionalProperties: false)'],
        ),
        ("x", ['"value" must be an object']),
    ],
)
def test_validates_object_requiredness_nested_values_and_open_defaults(
    value: object, expected: list[str]
) -> None:
    assert both(NESTED, value) == expected


def test_empty_root_paths() -> None:
    # c.1: "" shows as `arguments`; property paths are bare; a '' key stays ''.
    assert both(NESTED, {"file": 1, "nested": {"line": "x"}}, "") == [
        '"file" must be a string',
        '"nested.line" must be an integer',
    ]
    assert both(NESTED, [], "") == ['"arguments" must be an object']
    assert both({"type": "object", "required": ["file"]}, {}, "") == [
        'missing required property "file"'
    ]
    closed = {
        "type": "object",
        "properties": {"": {"type": "string"}},
        "additionalProperties": False,
    }
    assert both(closed, {"": 1}, "") == ['"arguments" must be a string']
    assert both(closed, {"x": 1}, "") == [
        '"x" is not a declared property (additionalProperties: false)'
    ]
    assert both({"type": "array", "items": {"type": "null"}}, [None, 1], "") == [
        '"[1]" must be null'
    ]


def test_violation_order_is_required_then_children_then_undeclared_then_lossless() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["z", "a"],
        "additionalProperties": False,
    }
    assert both(schema, {"q": 1, "b": "x", "a": 2}) == [
        'missing required property "value.z"',
        '"value.a" must be a string',
        '"value.b" must be an integer',
        '"value.q" is not a declared property (additionalProperties: false)',
    ]


# upstream #18 (JS `undefined` has no Python counterpart: missing = key absent)
def test_rejects_lossy_objects_only_when_nothing_else_failed() -> None:
    assert both({"type": "object"}, {"x": math.nan}) == ['"value" must be a lossless JSON object']
    assert both({"type": "object"}, {1: "x"}) == ['"value" must be a lossless JSON object']
    assert both(
        {"type": "object", "properties": {"x": {}}, "required": ["y"]}, {"y": 1, "z": math.inf}
    ) == ['"value" must be a lossless JSON object']
    assert both({"type": "object", "required": ["y"]}, {"z": math.inf}) == [
        'missing required property "value.y"'
    ]
    assert both({"type": "object"}, date(2020, 1, 1)) == ['"value" must be an object']


class DictSub(dict):  # type: ignore[type-arg]
    pass


class RaisingMapping(dict):  # type: ignore[type-arg]
    def __getitem__(self, key: object) -> object:
        raise RuntimeError("getter exploded")


class HostileKey:
    """Hashes like "answer" and explodes when compared: a dict probe for "answer" raises."""

    def __hash__(self) -> int:
        return hash("answer")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("hostile __eq__")


INTEGER_ANSWER = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
}


def test_hostile_key_yields_a_violation_instead_of_raising() -> None:
    # upstream #19: the [JS] throwing getter becomes a key whose __eq__ raises during lookup.
    assert both(INTEGER_ANSWER, {HostileKey(): 1}) == ['"value" must be a lossless JSON value']
    assert both({"type": "array", "items": INTEGER_ANSWER}, [{"answer": 1}, {HostileKey(): 1}]) == [
        '"value[1]" must be a lossless JSON value'
    ]


@pytest.mark.parametrize(
    "value",
    [DictSub(answer=1), RaisingMapping(answer=1), OrderedDict(answer=1), (("answer", 1),)],
)
def test_dict_look_alikes_are_not_objects(value: object) -> None:
    assert both(INTEGER_ANSWER, value) == ['"value" must be an object']
    assert both({}, value) == ['"value" must be a lossless JSON value']


# upstream #20
def test_validates_dense_arrays_per_index_and_rejects_lossy_arrays() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    assert both(schema, [1, 2]) == []
    assert both(schema, [1, 1.5]) == ['"value[1]" must be an integer']
    assert both(schema, "x") == ['"value" must be an array']
    assert both(schema, (1, 2)) == ['"value" must be an array']
    assert both({"type": "array"}, [1, math.nan]) == ['"value" must be a dense lossless JSON array']
    assert both({"type": "array"}, [{1, 2}]) == ['"value" must be a dense lossless JSON array']


# upstream #21
def test_exact_one_one_of_semantics_including_overlap() -> None:
    union = {"oneOf": [{"type": "string"}, {"type": "number"}]}
    assert both(union, "x") == []
    assert both(union, None) == ['"value" must match exactly one oneOf branch (matched 0)']
    overlap = {"oneOf": [{"type": "number"}, {"type": "integer"}]}
    assert both(overlap, 1) == ['"value" must match exactly one oneOf branch (matched 2)']
    assert both(overlap, 1.5) == []


def deep_union(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"oneOf": [schema, {"type": "null"}]}
    return schema


# upstream #22
def test_deeply_nested_unions_without_the_call_stack() -> None:
    schema = deep_union(5_000)
    assert both(schema, "leaf") == []
    assert both(schema, 42) == ['"value" must match exactly one oneOf branch (matched 0)']


def test_deep_schemas_beyond_the_compiled_bound_use_the_walker() -> None:
    schema = deep_union(MAX_COMPILED_DEPTH + 5)
    assert both(schema, "leaf") == []
    shallow = deep_union(MAX_COMPILED_DEPTH - 5)
    assert both(shallow, 1) == ['"value" must match exactly one oneOf branch (matched 0)']
    items: dict[str, Any] = {"type": "integer"}
    for _ in range(5_000):
        items = {"type": "array", "items": items}
    value: list[Any] = [1.5]
    for _ in range(4_999):
        value = [value]
    assert both(items, value) == ['"value' + "[0]" * 5_000 + '" must be an integer']


@pytest.mark.slow
def test_hundred_thousand_deep_values() -> None:
    value: list[Any] = []
    for _ in range(100_000):
        value = [value]
    assert both({}, value) == []
    assert both({"type": "array"}, value) == []
    assert both({"type": "array", "items": {"type": "array"}}, value) == []
    assert both({"type": "object"}, {"x": value}) == []
    assert both({"type": "string"}, value) == ['"value" must be a string']


def test_cyclic_values() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    assert both({}, cyclic) == ['"value" must be a lossless JSON value']
    assert both({"type": "array"}, cyclic) == ['"value" must be a dense lossless JSON array']
    # The element (the same list) fails first; the outer array adds nothing of its own.
    assert both({"type": "array", "items": {"type": "array"}}, cyclic) == [
        '"value[0]" must be a dense lossless JSON array'
    ]
    node: dict[str, Any] = {}
    node["self"] = node
    assert both({"type": "object"}, node) == ['"value" must be a lossless JSON object']
    assert both({"type": "object", "additionalProperties": False}, node) == [
        '"value.self" is not a declared property (additionalProperties: false)'
    ]
    shared = [1]
    assert both({}, [shared, shared]) == []


# upstream #23
@pytest.mark.parametrize("value", [None, True, 1, "x", [1], {"x": None}])
def test_unconstrained_schema_accepts_lossless_json(value: object) -> None:
    assert both({}, value) == []


@pytest.mark.parametrize(
    "value",
    [len, math.inf, -0.0, {1, 2}, frozenset(), Decimal("1.5"), (1,), b"x", DictSub(), object()],
)
def test_unconstrained_schema_rejects_everything_else(value: object) -> None:
    assert both({}, value) == ['"value" must be a lossless JSON value']


# upstream #24
def test_uses_own_keys_for_requiredness_recursion_and_closed_objects() -> None:
    assert both(
        {
            "type": "object",
            "properties": {"toString": {"type": "string"}},
            "required": ["toString"],
        },
        {},
    ) == ['missing required property "value.toString"']
    assert both({"type": "object", "additionalProperties": False}, {"toString": 1}) == [
        '"value.toString" is not a declared property (additionalProperties: false)'
    ]
    assert both({"type": "object", "properties": {"constructor": {"type": "string"}}}, {}) == []
    assert both({"type": "object", "properties": None}, {}) == []
    assert both({"type": "object", "required": None}, {}) == []


def test_unknown_keywords_of_a_forged_schema_are_ignored() -> None:
    # Untyped nodes only check losslessness, as upstream; compiled agrees with the walker.
    assert both({"enum": ["a"]}, "b") == []
    assert both({"type": "string", "minLength": 3}, "") == []


# upstream #25
def test_unknown_type_in_a_forged_schema_raises_unreachable() -> None:
    for validate in (
        lambda: validate_json_schema_value({"type": "tuple"}, 1),
        lambda: compile_validator({"type": "tuple"})(1, "value"),
    ):
        with pytest.raises(UnreachableVariantError, match="tuple") as caught:
            validate()
        assert str(caught.value) == 'unreachable variant in JsonSchemaType: "tuple"'


def test_compile_validator_caches_by_identity_and_defaults_the_path() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert_supported_json_schema(schema)
    first = compile_validator(schema)
    assert compile_validator(schema) is first
    assert first({"a": 1}, "value") == ['"value.a" must be a string']
    assert first({"a": 1}) == ['"value.a" must be a string']  # type: ignore[call-arg]
    assert first({"a": "x"}, "") == []
    # A fresh list each call: callers may mutate what they get.
    result = first({"a": "x"}, "")
    result.append("mine")
    assert first({"a": "x"}, "") == []
