"""The opt-in extended vocabulary: the assertion, the messages, both validators, and the
agreement with python-jsonschema on random schemas of the extended vocabulary (hypothesis).

Strict mode is untouched: ``tests/conformance`` keeps answering every upstream vector as before,
and the strict assertion still rejects every extension keyword (pinned here).
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

import trio_harness as th
from tests.support.strategies import any_values
from trio_harness._validation.compiled import build_check
from trio_harness._validation.extended_compiled import _inline_bounds_only
from trio_harness.lowlevel import FORMAT_ASSERTIONS, compile_extended_validator


def both(schema: Any, value: Any, path: str = "", formats: str = "annotate") -> list[str]:
    """The walker's answer, after checking the compiled validator gives the same."""
    walked = th.schema.validate_extended_value(schema, value, path, formats=formats)  # type: ignore[arg-type]
    assert compile_extended_validator(schema, formats=formats)(value, path) == walked  # type: ignore[arg-type]
    return walked


def test_strict_mode_still_rejects_every_extension_keyword() -> None:
    with pytest.raises(th.JsonSchemaError) as caught:
        th.assert_supported_json_schema({"type": "integer", "minimum": 1})
    assert caught.value.violations == [
        "schema.minimum is not a supported keyword (subset: type/oneOf/properties/required/"
        "additionalProperties/items/enum/const + annotations)"
    ]
    th.schema.assert_extended_json_schema({"type": "integer", "minimum": 1})


def test_every_violation_in_the_upstream_style() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 5, "multipleOf": 2},
            "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "s": {"type": "string", "minLength": 3, "maxLength": 4, "pattern": "^a"},
            "l": {"type": "array", "minItems": 2, "maxItems": 3, "uniqueItems": True},
            "t": {
                "type": "array",
                "prefixItems": [{"type": "string"}],
                "items": {"type": "integer"},
            },
            "o": {"type": "object", "minProperties": 2, "maxProperties": 2},
        },
        "additionalProperties": {"type": "boolean"},
        "maxProperties": 7,
    }
    value = {
        "n": 7,
        "x": 1,
        "s": "bbbbb",
        "l": [1, 1.0],
        "t": [1, "a"],
        "o": {"a": 1},
        "flag": "yes",
        "extra": True,
    }
    assert both(schema, value) == [
        '"n" must be <= 5',
        '"n" must be a multiple of 2',
        '"x" must be < 1',
        '"s" must be at most 4 characters long',
        '"s" must match pattern "^a"',
        '"l" must not contain duplicate items (items 0 and 1 are equal)',
        '"t[0]" must be a string',
        '"t[1]" must be an integer',
        '"o" must have at least 2 properties',
        '"flag" must be a boolean',
        '"arguments" must have at most 7 properties',
    ]
    assert both(schema["properties"]["s"], "bb", "value") == [
        '"value" must be at least 3 characters long',
        '"value" must match pattern "^a"',
    ]


def test_strict_subtrees_answer_exactly_as_the_strict_validator() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "enum": ["x"]},
            "b": {"type": "integer", "minimum": 0},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    strict_part = {"type": "string", "enum": ["x"]}
    for value in ({"a": "y", "b": -1, "c": 1}, {"b": 1.5}, {"a": 1, "b": "x"}, [], {1: 2}):
        violations = both(schema, value)
        if isinstance(value, dict) and "a" in value:
            expected = th.validate_json_schema_value(strict_part, value["a"], "a")
            assert violations[: len(expected)] == expected


def test_lengths_count_code_points_and_multiple_of_is_decimal_exact() -> None:
    assert both({"type": "string", "maxLength": 1}, "💩") == []  # one code point (two UTF-16 units)
    assert both({"type": "string", "minLength": 2}, "💩") == [
        '"arguments" must be at least 2 characters long'
    ]
    assert (
        both({"type": "number", "multipleOf": 0.1}, 0.3) == []
    )  # 0.3 / 0.1 is 2.9999999999999996 in floats
    assert both({"type": "number", "multipleOf": 0.01}, 19.99) == []
    assert both({"type": "number", "multipleOf": 0.1}, 0.35) == [
        '"arguments" must be a multiple of 0.1'
    ]
    assert both({"type": "integer", "multipleOf": 1e-8}, 12391239123) == []
    assert both({"type": "integer", "multipleOf": 0.123456789}, 1e308) != []


def test_format_is_an_annotation_unless_asserted() -> None:
    schema = {"type": "string", "format": "date-time"}
    assert both(schema, "yesterday") == []
    assert both(schema, "yesterday", formats="assert") == [
        '"arguments" must be a valid "date-time"'
    ]
    assert both(schema, "2024-02-29T10:00:00Z", formats="assert") == []
    assert both({"type": "string", "format": "x-custom"}, "anything", formats="assert") == []
    valid = {
        "date-time": "2024-01-15T14:30:25.5+01:00",
        "date": "2024-02-29",
        "time": "23:59:60Z",
        "email": "a@b.example",
        "uri": "https://example.com/a?b#c",
        "uuid": "123e4567-e89b-12d3-a456-426614174000",
        "ipv4": "192.168.0.1",
        "ipv6": "::1",
        "hostname": "api.example.com",
    }
    invalid = {
        "date-time": "2024-01-15 14:30:25",
        "date": "2023-02-29",
        "time": "24:00:00Z",
        "email": "a@b",
        "uri": "/relative/path",
        "uuid": "123e4567e89b12d3a456426614174000",
        "ipv4": "256.1.1.1",
        "ipv6": "1::2::3",
        "hostname": "-bad-.example",
    }
    assert set(valid) == set(FORMAT_ASSERTIONS) == set(invalid)
    for name in FORMAT_ASSERTIONS:
        schema = {"type": "string", "format": name}
        assert both(schema, valid[name], formats="assert") == [], name
        assert both(schema, invalid[name], formats="assert") != [], name


@pytest.mark.parametrize(
    ("date", "valid"),
    [
        ("2024-02-29", True),  # every fourth year
        ("2023-02-29", False),
        ("2000-02-29", True),  # every 400th year, though a century
        ("2400-02-29", True),
        ("1900-02-29", False),  # a century
        ("2100-02-29", False),
        ("2023-02-28", True),
        ("2023-04-31", False),
    ],
)
def test_dates_follow_the_gregorian_leap_years(date: str, valid: bool) -> None:
    for name, text in (("date", date), ("date-time", date + "T10:00:00Z")):
        found = both({"type": "string", "format": name}, text, formats="assert")
        assert found == ([] if valid else [f'"arguments" must be a valid "{name}"']), text


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (
            {"type": "array", "minItems": 3, "uniqueItems": True},
            [1, 1],
            [
                '"arguments" must have at least 3 items',
                '"arguments" must not contain duplicate items (items 0 and 1 are equal)',
            ],
        ),
        (
            {"type": "array", "maxItems": 1, "uniqueItems": True},
            ["a", "a"],
            [
                '"arguments" must have at most 1 item',
                '"arguments" must not contain duplicate items (items 0 and 1 are equal)',
            ],
        ),
        (
            {"type": "array", "items": {"type": "string"}, "minItems": 4, "uniqueItems": True},
            ["a", 2, "a"],
            # (counts, then elements; uniqueness only when the elements passed: docs/porting.md)
            ['"arguments" must have at least 4 items', '"[1]" must be a string'],
        ),
    ],
)
def test_count_bounds_and_duplicates_are_both_reported(
    schema: dict[str, Any], value: Any, expected: list[str]
) -> None:
    # A failed count bound does not hide duplicates, in the walker and in the compiled validator
    # alike (an element's own violation does: uniqueness is judged on valid elements only).
    assert both(schema, value) == expected


def test_misplaced_or_malformed_extension_keywords_are_named() -> None:
    with pytest.raises(th.JsonSchemaError) as caught:
        th.schema.assert_extended_json_schema(
            {
                "type": "object",
                "minimum": 1,
                "properties": {
                    "s": {"type": "string", "pattern": "(a)\\1", "minLength": -1, "maxLength": 1.5},
                    "l": {"type": "array", "prefixItems": [], "minItems": 3, "maxItems": 2},
                    "n": {"type": "number", "multipleOf": 0},
                    "u": {"oneOf": [{"type": "string"}, {"type": "null"}], "minLength": 1},
                },
                "additionalProperties": {"type": "strange"},
            }
        )
    assert caught.value.violations == [
        'schema.minimum is not supported on type "object"',
        "schema.properties.s.pattern uses the backreference \\1 (outside the supported ECMA-262 subset)",
        "schema.properties.s.minLength must be a non-negative integer",
        "schema.properties.s.maxLength must be a non-negative integer",
        "schema.properties.l.prefixItems must be a non-empty array of schemas",
        "schema.properties.l.minItems must not exceed schema.properties.l.maxItems",
        "schema.properties.n.multipleOf must be a number greater than 0",
        "schema.properties.u.minLength is not supported without a type",
        "schema.additionalProperties.type must be one of object/array/string/number/integer/boolean/null",
    ]


def test_prefix_items_then_items_and_open_tails() -> None:
    schema = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}
    assert both(schema, ["a", 1, {"any": [True]}]) == []
    assert both(schema, [1], "value") == ['"value[0]" must be a string']
    closed = {**schema, "items": {"type": "null"}}
    assert both(closed, ["a", 1, None, 3], "value") == ['"value[3]" must be null']


def test_non_json_values_never_raise() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer", "minimum": 0}},
        "minProperties": 1,
    }
    assert both(schema, {"a": 1, "b": (1, 2)}) == ['"arguments" must be a lossless JSON object']
    assert both(schema, {1: 1}) == ['"arguments" must be a lossless JSON object']
    assert both({"type": "number", "minimum": 0}, float("nan")) == [
        '"arguments" must be a finite JSON number'
    ]


# -- agreement with python-jsonschema -----------------------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-20, 20),
    st.sampled_from([0.5, 1.5, -2.5, 2.0, 10.25]),
    st.text(alphabet="ab1 é💩", max_size=6),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=4),
    ),
    max_leaves=10,
)
BOUNDS = st.sampled_from([-3, 0, 1, 2.5, 5])


@st.composite
def number_schema(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": draw(st.sampled_from(["number", "integer"]))}
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if draw(st.booleans()):
            schema[key] = draw(BOUNDS)
    if draw(st.booleans()):
        # Dyadic steps: float division is exact there, so python-jsonschema is exact too.
        schema["multipleOf"] = draw(st.sampled_from([0.5, 0.25, 2, 3]))
    return schema


@st.composite
def string_schema(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if draw(st.booleans()):
        schema["minLength"] = draw(st.integers(0, 4))
    if draw(st.booleans()):
        schema["maxLength"] = draw(st.integers(schema.get("minLength", 0), 5))
    if draw(st.booleans()):
        schema["pattern"] = draw(
            st.sampled_from(["^a", "b$", "[0-9]", "^(a|b)+$", "\\d{2,}", "^.$", "é"])
        )
    if draw(st.booleans()):
        schema["enum"] = draw(st.lists(st.text(alphabet="ab1", max_size=3), min_size=1, max_size=3))
    return schema


def any_schema(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    leaves = st.one_of(
        number_schema(),
        string_schema(),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
    )
    if depth == 0:
        return leaves
    child = any_schema(depth - 1)

    @st.composite
    def array_schema(draw: st.DrawFn) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "array"}
        if draw(st.booleans()):
            schema["prefixItems"] = draw(st.lists(child, min_size=1, max_size=2))
        if draw(st.booleans()):
            schema["items"] = draw(child)
        if draw(st.booleans()):
            schema["minItems"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            schema["maxItems"] = draw(st.integers(schema.get("minItems", 0), 4))
        if draw(st.booleans()):
            schema["uniqueItems"] = draw(st.booleans())
        return schema

    @st.composite
    def object_schema(draw: st.DrawFn) -> dict[str, Any]:
        properties = draw(st.dictionaries(st.sampled_from(["a", "b", "c"]), child, max_size=3))
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if properties and draw(st.booleans()):
            schema["required"] = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
        extra = draw(st.sampled_from(["absent", "false", "schema"]))
        if extra == "false":
            schema["additionalProperties"] = False
        elif extra == "schema":
            schema["additionalProperties"] = draw(child)
        if draw(st.booleans()):
            schema["minProperties"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            schema["maxProperties"] = draw(st.integers(schema.get("minProperties", 0), 4))
        return schema

    @st.composite
    def union_schema(draw: st.DrawFn) -> dict[str, Any]:
        return {"oneOf": draw(st.lists(child, min_size=2, max_size=3))}

    return st.one_of(leaves, array_schema(), object_schema(), union_schema())


@given(any_schema(2), VALUES)
def test_python_jsonschema_agrees_on_the_extended_vocabulary(
    schema: dict[str, Any], value: Any
) -> None:
    th.schema.assert_extended_json_schema(schema)
    ours = both(schema, value, "value")
    theirs = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert (ours == []) is theirs, ours


@given(any_schema(2), VALUES)
def test_normalising_an_extended_schema_changes_nothing(schema: dict[str, Any], value: Any) -> None:
    normalized = th.schema.normalize_json_schema(schema, tool_input=False)
    assert normalized.exact
    assert both(normalized.schema, value, "value") == both(schema, value, "value")


def test_schemas_too_deep_for_the_extension_are_refused_not_crashed() -> None:
    schema: dict[str, Any] = {"type": "integer", "minimum": 0}
    for _ in range(5000):
        schema = {"type": "array", "items": schema}
    with pytest.raises(th.JsonSchemaError) as caught:
        th.schema.assert_extended_json_schema(schema)
    assert caught.value.violations == ["schema is nested too deeply for the extended vocabulary"]
    normalized = th.schema.normalize_json_schema(schema, tool_input=False)
    assert normalized.unkept == ("schema: nested too deeply to normalize",)
    # Without extension keywords the strict (iterative) validators take the whole schema.
    strict: dict[str, Any] = {"type": "integer"}
    for _ in range(5000):
        strict = {"type": "array", "items": strict}
    assert compile_extended_validator(strict)([[[]]], "value") == []


def test_cyclic_schemas_are_reported() -> None:
    cyclic: dict[str, Any] = {"type": "array", "minItems": 1}
    cyclic["items"] = cyclic
    with pytest.raises(th.JsonSchemaError) as caught:
        th.schema.assert_extended_json_schema(cyclic)
    assert caught.value.violations == ["schema.items is circular"]
    plain: dict[str, Any] = {"type": "array"}
    plain["items"] = plain
    with pytest.raises(th.JsonSchemaError) as caught:
        th.schema.assert_extended_json_schema(plain)
    assert caught.value.violations == ["schema.items is circular"]


# -- the generated check-only pass (bounds tested inline) -------------------------------------

_CLOSURE_ONLY = ("multipleOf", "pattern", "uniqueItems", "prefixItems")


def _inline_only(schema: Any) -> Any:
    """``schema`` without the keywords the generated check-only pass leaves to closures."""
    if type(schema) is list:
        return [_inline_only(item) for item in schema]
    if type(schema) is not dict:
        return schema
    node = {key: _inline_only(item) for key, item in schema.items() if key not in _CLOSURE_ONLY}
    if type(node.get("additionalProperties")) is dict:
        node["additionalProperties"] = False
    if node.get("type") == "array" and "items" not in node and "prefixItems" in schema:
        node["items"] = _inline_only(schema["prefixItems"][0])
    return node


@given(any_schema(2).map(_inline_only), st.one_of(VALUES, any_values()), st.sampled_from(["", "v"]))
def test_generated_check_of_bounds_equals_the_walker(
    schema: dict[str, Any], value: Any, path: str
) -> None:
    # Valid input: the generated check alone says so; invalid input: it says no and the
    # collector gives the walker's messages, byte for byte.
    th.schema.assert_extended_json_schema(schema)
    assert _inline_bounds_only(schema, "annotate")
    walked = both(schema, value, path)
    try:
        passed = build_check(schema)(value)
    except Exception:  # a hostile key: the validator asks the collector
        return
    assert passed is (walked == [])


def test_generated_check_compares_bounds_exactly() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 2**40},
            "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 2.5},
            "s": {"type": "string", "minLength": 2, "maxLength": 3},
            "a": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        },
        "maxProperties": 3,
        "additionalProperties": False,
    }
    assert _inline_bounds_only(schema, "annotate")
    check = build_check(schema)
    valid = [{"n": 1}, {"n": 2**40}, {"n": 2.0, "x": 2.4999}, {"s": "ab", "a": ["x", "y"]}]
    invalid = [
        {"n": 0},
        {"n": 2**40 + 1},
        {"n": 2**40 + 0.5},
        {"x": 0},
        {"x": 2.5},
        {"s": "a"},
        {"s": "abcd"},
        {"a": []},
        {"a": ["x", "y", "z"]},
        {"n": 1, "x": 1, "s": "ab", "a": ["x"]},
    ]
    for value in valid:
        assert check(value) is True
        assert both(schema, value) == []
    for value in invalid:
        assert check(value) is False
        assert both(schema, value) != []
    assert both(schema, {"n": 0, "s": "a"}) == [
        '"n" must be >= 1',
        '"s" must be at least 2 characters long',
    ]
    # Keywords the generated pass does not test keep the closures.
    assert not _inline_bounds_only({"type": "string", "pattern": "^a"}, "annotate")
    assert not _inline_bounds_only({"type": "string", "format": "email"}, "assert")
    assert _inline_bounds_only({"type": "string", "format": "email"}, "annotate")
