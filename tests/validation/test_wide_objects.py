"""Wide objects (issue 21): more than 200 properties are checked from tables, not per-property
code, and answer exactly as the walker does.

The generated code for a wide object is a loop over the value's keys with a table from each key
to the check function of its schema (one function per distinct scalar schema), and a collector
that reports in the walker's order. These properties compare it with the walker on random wide
schemas, values and paths, including keys that are not ``str``, ``str`` subclasses and hostile
keys.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.strategies import any_values, json_values, subset_schemas
from trio_harness import validate_json_schema_value
from trio_harness._validation.compiled import _build, _generated_source

PATHS = st.sampled_from(["value", "", "a.b"])
#: Small property values: the width is the point here, and a step draws up to ten objects of
#: 240 declared names (the default knobs, long strings and 24-item arrays, overflow hypothesis's
#: entropy budget: ``data_too_large``).
VALUES = json_values(max_leaves=4, max_size=4, max_string_size=12)


class _Key(str):
    """A ``str`` subclass key: equal to a declared name, yet not lossless JSON."""


class _Hostile:
    """Hashes as ``"k5"``, so looking ``"k5"`` up runs its ``__eq__``, which raises."""

    def __hash__(self) -> int:
        return hash("k5")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("hostile __eq__")


@st.composite
def wide_schemas(draw: st.DrawFn) -> dict[str, Any]:
    children = draw(st.lists(subset_schemas(), min_size=1, max_size=4))
    width = draw(st.integers(201, 240))
    names = ["", "x.y", *(f"k{i}" for i in range(width - 2))]
    properties: dict[str, Any] = {}
    for name in names:
        child = children[draw(st.integers(0, len(children) - 1))]
        # Equal copies and shared objects: functions are shared by content and by identity.
        properties[name] = copy.deepcopy(child) if draw(st.booleans()) else child
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = draw(st.lists(st.sampled_from(names), unique=True, max_size=width))
    if required:
        schema["required"] = required
    openness = draw(st.sampled_from([None, True, False]))
    if openness is not None:
        schema["additionalProperties"] = openness
    return schema


@st.composite
def wide_values(draw: st.DrawFn, schema: dict[str, Any], values: st.SearchStrategy[Any]) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(values)  # not even an object, most of the time
    names = list(schema["properties"])
    value: dict[Any, Any] = {}
    for name in draw(st.lists(st.sampled_from(names), max_size=12)):
        value[name] = draw(values)
    if draw(st.booleans()):
        # Every required name present: the declared properties decide.
        for name in schema.get("required", []):
            value.setdefault(name, draw(values))
    for extra in draw(st.lists(st.sampled_from(["zz", 3, _Key("k0"), "k0x"]), max_size=2)):
        value[extra] = draw(values)
    return value


@settings(max_examples=60, deadline=None)
@given(st.data(), PATHS)
def test_a_wide_object_answers_as_the_walker(data: st.DataObject, path: str) -> None:
    schema = data.draw(wide_schemas())
    validator = _build(schema)  # no cache: the generated code itself, every time
    for _ in range(4):
        value = data.draw(wide_values(schema, VALUES))
        assert validator(value, path) == validate_json_schema_value(schema, value, path)
        odd = data.draw(wide_values(schema, any_values(max_leaves=4)))
        assert validator(odd, path) == validate_json_schema_value(schema, odd, path)


@settings(max_examples=30, deadline=None)
@given(st.data(), PATHS)
def test_a_wide_object_below_others_answers_as_the_walker(data: st.DataObject, path: str) -> None:
    wide = data.draw(wide_schemas())
    schema = {
        "type": "object",
        "properties": {"": wide, "list": {"type": "array", "items": wide}},
    }
    validator = _build(schema)
    for _ in range(4):
        inner = data.draw(wide_values(wide, VALUES))
        value = {"": inner, "list": [inner, data.draw(wide_values(wide, VALUES))]}
        assert validator(value, path) == validate_json_schema_value(schema, value, path)


def test_a_hostile_key_in_a_wide_object_gets_the_walkers_answer() -> None:
    schema = {
        "type": "object",
        "properties": {f"k{i}": {"type": "string"} for i in range(300)},
        "required": ["k0"],
    }
    for value in ({"k0": 1, _Hostile(): 2}, {"k0": "s", _Hostile(): 2}, {_Hostile(): 2}):
        expected = validate_json_schema_value(schema, value, "value")
        assert _build(schema)(value, "value") == expected


def test_a_wide_object_is_a_table_not_code_per_property() -> None:
    def wide(width: int) -> dict[str, Any]:
        properties: dict[str, Any] = {f"p{i}": {"type": "string"} for i in range(width)}
        properties.update({f"e{i}": {"enum": [1, "a"], "type": "integer"} for i in range(9)})
        return {"type": "object", "properties": properties, "required": list(properties)}

    small, large = (_generated_source(_build(wide(width))) for width in (300, 30_000))
    assert len(large) == len(small)  # the tables are constants, not source
    assert large.count("\ndef ") <= 8  # the object, and a checker/collector per distinct leaf
    value = {f"p{i}": "s" for i in range(30_000)}
    value.update({f"e{i}": 1 for i in range(9)})
    assert _build(wide(30_000))(value, "") == []
    value["p17"], value["e3"], value["x"] = 1, "a", None
    del value["p29999"]
    assert _build(wide(30_000))(value, "") == [
        'missing required property "p29999"',
        '"p17" must be a string',
        '"e3" must be an integer',
    ]


def test_leaves_share_functions_only_when_they_check_the_same() -> None:
    leaves: list[dict[str, Any]] = [
        {"type": "integer"},
        {"type": "integer", "enum": [1, 2]},
        {"type": "integer", "enum": [2, 1]},
        {"type": "number", "enum": [1.5]},
        {"type": "boolean", "const": True},
        {"type": "boolean", "const": False},
        {"type": "string", "const": "a", "description": "annotations check nothing"},
        {"type": "string", "enum": ["a", "b"]},
        {},
    ]
    properties = {f"k{i}": leaves[i % len(leaves)] for i in range(270)}
    schema = {"type": "object", "properties": properties}
    validator = _build(schema)
    for probe in (3, 2, 1, 1.5, 2.0, True, False, "a", "b", None, [1]):
        value = {f"k{i}": probe for i in range(len(leaves))}
        assert validator(value, "value") == validate_json_schema_value(schema, value, "value")
