"""The generated code of compile_validator: function splits, lazy paths, the fast lossless test.

These pin the performance machinery of ``_validator_compiled`` against the generic walker
(upstream §1 semantics, cases 14-25 of the catalogue, are covered in ``test_validator.py``).
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest
from hypothesis import given

from tests.support.strategies import any_values
from trio_harness import is_json_value, validate_json_schema_value
from trio_harness._json.lossless import MAX_FINITE_JSON_INT
from trio_harness._validation.compiled import (
    _LOSSLESS_BUDGET,
    STR_KEYED_SIZES,
    _build,
    _generated_source,
    _lossless,
)
from trio_harness.lowlevel import compile_validator


def _wrap(kind: str, inner: dict[str, Any]) -> dict[str, Any]:
    if kind == "array":
        return {"type": "array", "items": inner}
    if kind == "closed":
        return {
            "type": "object",
            "properties": {"": inner, "a": {"type": "string"}},
            "required": [""],
            "additionalProperties": False,
        }
    if kind == "open":
        return {"type": "object", "properties": {"k": inner}}
    return {"oneOf": [inner, {"type": "null"}]}


def _value(kinds: list[str], leaf: object) -> object:
    value = leaf
    for kind in reversed(kinds):
        if kind == "array":
            value = [value, 7]
        elif kind == "closed":
            value = {"": value, "a": 1, "extra": True}
        elif kind == "open":
            value = {"k": value, "z": math.nan}
    return value


SHAPES = [
    ("array",),
    ("closed",),
    ("open",),
    ("oneOf",),
    ("array", "closed"),
    ("closed", "array", "array"),
    ("array", "open", "oneOf"),
]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("depth", [3, 15, 16, 31, 99])
@pytest.mark.parametrize("leaf", [1, "x", 2.5])
@pytest.mark.parametrize("path", ["", "value"])
def test_deep_schemas_split_into_functions_and_keep_exact_paths(
    shape: tuple[str, ...], depth: int, leaf: object, path: str
) -> None:
    # Deep nodes are emitted as separate functions receiving the path's variables (not the
    # rendered path); empty keys below an empty root keep the bare-key / "arguments" rules.
    kinds = list(itertools.islice(itertools.cycle(shape), depth))
    schema: dict[str, Any] = {"type": "integer"}
    for kind in reversed(kinds):
        schema = _wrap(kind, schema)
    value = _value(kinds, leaf)
    assert _build(schema)(value, path) == validate_json_schema_value(schema, value, path)


BULK = {
    "type": "object",
    "properties": {
        "table": {"type": "string"},
        "records": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "meta": {},
                },
                "required": ["id"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["table", "records"],
    "additionalProperties": False,
}


def test_arrays_of_objects_report_every_element_in_order() -> None:
    records: list[object] = [{"id": i, "tags": ["a"], "meta": {"n": [i, None]}} for i in range(50)]
    records[3] = {"id": 1.5, "tags": ["a", 2]}
    records[7] = {"tags": [], "x": 1}
    records[9] = {"id": 2, "meta": {"bad": math.inf}}
    records[11] = {"id": 3, 4: "non-str key"}
    records[12] = "row"
    value = {"table": 5, "records": records, "more": 1}
    expected = [
        '"table" must be a string',
        '"records[3].id" must be an integer',
        '"records[3].tags[1]" must be a string',
        'missing required property "records[7].id"',
        '"records[7].x" is not a declared property (additionalProperties: false)',
        '"records[9].meta" must be a lossless JSON value',
        '"records[11]" must be a lossless JSON object',
        '"records[12]" must be an object',
        '"more" is not a declared property (additionalProperties: false)',
    ]
    assert validate_json_schema_value(BULK, value, "") == expected
    assert _build(BULK)(value, "") == expected
    assert _build(BULK)({"table": "t", "records": records[:3]}, "") == []


def test_an_unbounded_root_is_checked_first_and_collected_only_when_invalid() -> None:
    # A root holding an array of objects runs the check-only pass first (a valid value pays
    # for nothing else); a failure late in the array falls back to the collector, whose
    # messages are the walker's, byte for byte.
    validator = _build(BULK)
    assert validator.__name__.startswith("_check")
    records: list[object] = [{"id": i, "tags": ["a"], "meta": {"n": [i]}} for i in range(200)]
    value = {"table": "t", "records": records}
    assert validator(value, "") == [] == validate_json_schema_value(BULK, value, "")
    records[199] = {"id": 2**31, "tags": ["a", 1], "x": None}
    records[198] = {"id": -(2**31), "meta": 1.5}
    expected = validate_json_schema_value(BULK, value, "")
    assert expected == [
        '"records[199].tags[1]" must be a string',
        '"records[199].x" is not a declared property (additionalProperties: false)',
    ]
    assert validator(value, "") == expected
    assert validator(value, "args") == validate_json_schema_value(BULK, value, "args")


def test_generated_source_is_available_for_debugging() -> None:
    text = _generated_source(compile_validator(BULK))
    assert text.startswith("def _")
    # Keys are inlined as literals and declared-key sets folded into constants.
    assert "'records'" in text
    assert "{'id', 'meta', 'tags'}" in text


LOSSLESS_CASES: list[object] = [
    None,
    True,
    "s",
    0,
    -0.0,
    0.0,
    1.5,
    math.nan,
    math.inf,
    MAX_FINITE_JSON_INT,
    MAX_FINITE_JSON_INT + 1,
    -MAX_FINITE_JSON_INT - 1,
    [],
    {},
    [1, [2, [3, {"a": None}]]],
    {"a": [1, {"b": -0.0}]},
    {"a": {1: 2}},
    [(1, 2)],
    {"a": b"x"},
    [1, 2**1100],
]


@pytest.mark.parametrize("value", LOSSLESS_CASES, ids=repr)
def test_fast_lossless_test_agrees_with_is_json_value(value: object) -> None:
    assert _lossless(value) is is_json_value(value)


def test_fast_lossless_test_defers_cycles_and_large_values_to_is_json_value() -> None:
    cyclic: list[object] = [1]
    cyclic.append(cyclic)
    assert _lossless(cyclic) is False
    wide: list[list[object]] = [[i] for i in range(_LOSSLESS_BUDGET * 2)]
    assert _lossless(wide) is True
    wide.append([math.nan])
    assert _lossless(wide) is False
    shared: list[object] = [1]
    dag = [shared, shared, {"k": shared}]
    assert _lossless(dag) is True


@given(any_values())
def test_fast_lossless_test_equals_is_json_value_on_any_value(value: object) -> None:
    assert _lossless(value) is is_json_value(value)


class _Name(str):
    """A ``str`` subclass: equal to (and hashed like) a declared property name, never lossless."""


class _Alias:
    """Not a ``str`` at all, yet looked up as the declared name it aliases."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:  # the test ids use it: no address (pytest-xdist compares them)
        return f"_Alias({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return other == self.name


_CLOSED = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "tag": {"type": "string"},
        "meta": {},
    },
    "required": ["id", "id"],
    "additionalProperties": False,
}


def _general_table(**items: object) -> dict[object, object]:
    """A dict of exact ``str`` keys whose table was converted by a key of another type (removed
    again): its size is not one of ``STR_KEYED_SIZES``, so the key loop decides."""
    value: dict[object, object] = {0: None, **items}
    del value[0]
    return value


_CLOSED_VALUES: list[object] = [
    {"id": 1},
    {"id": 1, "tag": "t", "meta": [1, {"a": None}]},
    {"id": 1, "other": 2},
    {"id": 1, "tag": "t", "meta": None, "other": 2},
    {_Name("id"): 1},
    {"id": 1, _Name("tag"): "t"},
    {"id": 1, _Alias("tag"): "t"},
    {_Alias("id"): 1, "tag": "t"},
    {"id": 1, 2: "t"},
    {"id": 1, None: 3},
    {"id": 1, "tag": "t", "meta": {1: 2}},
    {"tag": "t"},
    _general_table(id=1, tag="t", meta=None),
    _general_table(id=1, tag="t", other=None),
]


_OPEN = {key: item for key, item in _CLOSED.items() if key != "additionalProperties"}


@pytest.mark.parametrize("value", [*_CLOSED_VALUES, {"id": 1, "x": math.nan}], ids=repr)
@pytest.mark.parametrize("wrap", ["root", "array", "nested"])
@pytest.mark.parametrize("closed", [True, False], ids=["closed", "open"])
def test_closed_object_key_count_check_agrees_with_the_walker(
    value: object, wrap: str, closed: bool
) -> None:
    # The check-only code counts declared keys instead of testing each key against the names
    # (an open object tests undeclared values only when the counts differ); a key that only
    # looks like a declared name (str subclass, alias object) must still fail.
    schema: dict[str, Any] = _CLOSED if closed else _OPEN
    if wrap == "array":
        schema, value = {"type": "array", "items": schema}, [{"id": 2}, value, {"id": 3}]
    elif wrap == "nested":
        schema = {"type": "object", "properties": {"r": schema}, "required": ["r"]}
        value = {"r": value}
    expected = validate_json_schema_value(schema, value, "value")
    assert _build(schema)(value, "value") == expected
    assert compile_validator(schema)(value, "") == validate_json_schema_value(schema, value, "")


@pytest.mark.parametrize(
    "value",
    [
        {"a": "x"},
        {"a": "x", "b": 1},
        {"a": 1},
        {},
        {"b": math.nan},
        {"a": "x", "b": -0.0},
        {_Name("a"): "x"},
        {"a": "x", _Name("b"): 1},
        {_Alias("a"): "x"},
        {1: 2},
        _general_table(a="x"),
        _general_table(a="x", b=[1]),
    ],
    ids=repr,
)
def test_open_object_with_one_declared_property_agrees_with_the_walker(value: object) -> None:
    # Not counted (one pass over its items tests the keys and the undeclared values), with and
    # without the dict-size shortcut of the lossless test.
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    for wrapped, item in ((schema, value), ({"type": "array", "items": schema}, [value])):
        assert _build(wrapped)(item, "value") == validate_json_schema_value(wrapped, item, "value")


def _key_tables() -> list[dict[object, object]]:
    tables: list[dict[object, object]] = []
    for size in range(0, 400, 7):
        text = {f"k{i}": i for i in range(size)}
        tables += [text, dict.fromkeys(text), text.copy(), {**text}]
        tables += [{_Name(key): 1 for key in text}, {i: i for i in range(size)}]
        tables += [{**text, _Name("x"): 1}, {**text, 1.5: 1}, {_Alias("a"): 1, **text}]
        tables.append(_general_table(**text))
        shrunk = {f"k{i}": i for i in range(size * 3)}
        for i in range(size, size * 3):
            del shrunk[f"k{i}"]
        tables.append(shrunk)
    return tables


def test_str_keyed_sizes_only_admit_dicts_of_exact_str_keys() -> None:
    # The generated code skips the per-key ``type(key) is str`` loop of an object with declared
    # properties (the lossless test: of any dict) when the dict's ``__sizeof__()`` is in
    # ``STR_KEYED_SIZES``.
    assert STR_KEYED_SIZES  # measured on this interpreter (CPython lays dicts out this way)
    for table in _key_tables():
        if table.__sizeof__() in STR_KEYED_SIZES:
            assert all(type(key) is str for key in table), table
    # The dicts ``json`` decodes (the common case) take the shortcut.
    for size in range(1, 100):
        decoded = json.loads(json.dumps({f"k{i}": i for i in range(size)}))
        assert decoded.__sizeof__() in STR_KEYED_SIZES


def test_fast_lossless_test_walks_below_its_first_two_levels() -> None:
    # The first pass checks two levels in place; deeper containers go to the budgeted walk.
    deep_cycle: dict[str, object] = {}
    deep_cycle["k"] = [deep_cycle]
    assert _lossless({"a": [deep_cycle]}) is False
    wide = [[[i] for i in range(_LOSSLESS_BUDGET * 2)]]
    assert _lossless(wide) is True
    wide[0].append([math.inf])
    assert _lossless(wide) is False
    assert _lossless({"a": {"b": {"c": [1, -0.0]}}}) is False
    assert _lossless({"a": {"b": {"c": [1, 0.0]}}}) is True
    assert _lossless([[{"k": 2**1100}]]) is False
    assert _lossless([[{"k": (1,)}], "x"]) is False
    assert _lossless([[], [[]], {"": [{}]}]) is True


def test_generated_code_has_a_unique_filename_and_linecache_source() -> None:
    import linecache
    import traceback

    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    other = {"type": "object", "properties": {"b": {"type": "integer"}}}
    first, second = _build(schema), _build(other)
    filename = first.__code__.co_filename
    assert filename.startswith("<trio_harness validator #")
    assert filename != second.__code__.co_filename
    assert "".join(linecache.getlines(filename)) == _generated_source(first)

    # A traceback through generated code shows the generated lines, not "<unknown>".
    frames: list[traceback.FrameSummary] = []

    def spy(value: object) -> bool:
        frames.extend(traceback.extract_stack())
        return True

    saved = first.__globals__["_lossless"]
    first.__globals__["_lossless"] = spy
    try:
        assert first({"a": 1, "undeclared": [1]}, "value") == []
    finally:
        first.__globals__["_lossless"] = saved
    generated = [frame for frame in frames if frame.filename == filename]
    assert generated
    assert all(frame.line for frame in generated)


_UNIONS: list[dict[str, Any]] = [
    {"oneOf": [{"type": "string"}, {"type": "null"}]},
    {"oneOf": [{"type": "null"}, BULK["properties"]["records"]["items"]]},
    {"oneOf": [{"type": "integer"}, {"type": "array", "items": {"type": "boolean"}}]},
    {"oneOf": [{"type": "number"}, {"type": "string", "enum": ["a"]}, {"type": "boolean"}]},
    # Object branches told apart by a required string ``const``: only that branch is checked.
    {
        "oneOf": [
            {
                "type": "object",
                "properties": {"k": {"type": "string", "const": "a"}, "x": {"type": "integer"}},
                "required": ["k"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"k": {"type": "string", "const": "b"}, "y": {}},
                "required": ["k", "y"],
            },
        ]
    },
    # Object branches that share a tag are not told apart by it: a value may match two of them
    # (counted branch by branch), and a tag shared by two branches of three tells nothing.
    {
        "oneOf": [
            {
                "type": "object",
                "properties": {"k": {"type": "string", "const": "a"}, "x": {"type": "integer"}},
                "required": ["k"],
            },
            {
                "type": "object",
                "properties": {"k": {"type": "string", "const": "a"}, "y": {"type": "integer"}},
                "required": ["k"],
            },
        ]
    },
    {
        "oneOf": [
            {
                "type": "object",
                "properties": {"k": {"type": "string", "const": "a"}},
                "required": ["k"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"k": {"type": "string", "const": "b"}, "y": {}},
                "required": ["k"],
            },
            {
                "type": "object",
                "properties": {"k": {"type": "string", "const": "a"}, "x": {}},
                "required": ["k", "x"],
            },
        ]
    },
    # Not disjoint by type: counted branch by branch, as before.
    {"oneOf": [{"type": "number"}, {"type": "integer"}]},
    {"oneOf": [{"type": "string"}, {"type": "string", "enum": ["a"]}]},
]
_UNION_VALUES: list[object] = [
    None,
    "a",
    "b",
    1,
    2.5,
    True,
    -0.0,
    [True, 1],
    [],
    {"id": 1},
    {"tags": []},
    {"id": 1, 2: 3},
    {_Name("id"): 1},
    {"k": "a", "x": 1},
    {"k": "a", "x": 1.5},
    {"k": "a", "y": 1},
    {"k": "b", "y": None},
    {"k": "b", "y": math.inf},
    {"k": "b"},
    {"k": "c", "y": 1},
    {"k": 1},
    {"k": _Name("a")},
    {_Name("k"): "a"},
    {"k": "b", "y": 1, 3: 4},
    {"k": "a"},
    {"k": "a", "x": 1, "y": 2},
    {"k": "a", "y": "no"},
]


@pytest.mark.parametrize("union", _UNIONS, ids=repr)
@pytest.mark.parametrize("value", _UNION_VALUES, ids=repr)
def test_unions_disjoint_by_type_check_only_the_branch_of_the_value_type(
    union: dict[str, Any], value: object
) -> None:
    # Check-only code tests a union whose branches have distinct types (or distinct string
    # tags) by the branch of the value's type (or tag) alone; as a property, inside an array
    # and at the root it equals the walker.
    for schema, wrapped in (
        (union, value),
        ({"type": "object", "properties": {"u": union}, "required": ["u"]}, {"u": value}),
        ({"type": "array", "items": union}, [value, None, value]),
    ):
        for path in ("", "value"):
            expected = validate_json_schema_value(schema, wrapped, path)
            assert _build(schema)(wrapped, path) == expected
