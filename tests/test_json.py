"""Lossless JSON: the test, the snapshot and JavaScript-exact rendering (upstream-behavior §0.1, §c.2)."""

from __future__ import annotations

import decimal
import json
import math
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trio_harness import is_json_value
from trio_harness._json import (
    MAX_FINITE_JSON_INT,
    js_number,
    json_node_count,
    lossless,
    node_limit_message,
    set_json_node_limit,
)
from trio_harness._json.stringify import ecma_number_to_string
from trio_harness.lowlevel import (
    NOT_JSON,
    js_json,
    snapshot_json_value,
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False).filter(
        lambda f: not (f == 0 and math.copysign(1, f) < 0)
    )
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.parametrize(
    "value",
    [None, True, False, 0, 1, -5, 1.5, 2.0, "", "x", [], {}, [1, [2, {"a": None}]], {"k": [True]}],
)
def test_plain_json_values_are_lossless(value: object) -> None:
    assert is_json_value(value)
    assert snapshot_json_value(value) == value


class Sub(dict[str, Any]):
    pass


class ListSub(list[Any]):
    pass


class StrSub(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        math.inf,
        -math.inf,
        -0.0,
        (1, 2),
        {1, 2},
        frozenset(),
        decimal.Decimal("1"),
        b"x",
        pytest.param(object(), id="object()"),  # a stable id: pytest-xdist compares them
        Sub(),
        OrderedDict(),
        ListSub(),
        StrSub("x"),
        {1: "non-str key"},
        {"a": [1, math.nan]},
        [{"deep": (1,)}],
        MAX_FINITE_JSON_INT * 10,
        len,
    ],
    ids=repr,
)
def test_lossy_values_are_rejected(value: object) -> None:
    # upstream #23: functions, Infinity, -0, Map, class instances are not lossless.
    assert not is_json_value(value)
    assert snapshot_json_value(value) is NOT_JSON


def test_bool_is_json_but_not_a_number_in_disguise() -> None:
    assert snapshot_json_value(True) is True
    assert js_json([True, 1]) == "[true,1]"


def test_cycles_are_rejected_but_sibling_sharing_is_fine() -> None:
    cyclic: list[object] = []
    cyclic.append(cyclic)
    assert not is_json_value(cyclic)
    assert snapshot_json_value(cyclic) is NOT_JSON
    mapping: dict[str, object] = {}
    mapping["self"] = {"inner": mapping}
    assert not is_json_value(mapping)

    shared = {"leaf": [1]}
    dag = {"a": shared, "b": shared, "c": [shared, shared]}
    assert is_json_value(dag)
    copy = snapshot_json_value(dag)
    assert copy == dag
    assert isinstance(copy, dict)
    # The snapshot is detached: fresh containers everywhere.
    assert copy["a"] is not shared
    assert copy["a"] is not copy["b"]


def test_snapshot_is_a_deep_detached_copy() -> None:
    source = {"a": [1, {"b": "c"}]}
    copy = snapshot_json_value(source)
    assert copy == source
    assert isinstance(copy, dict)
    copy["a"][1]["b"] = "changed"
    assert source["a"][1]["b"] == "c"  # type: ignore[index]


@pytest.mark.slow
def test_hundred_thousand_deep_values_need_no_recursion() -> None:
    root: list[object] = []
    node = root
    for _ in range(100_000):
        child: list[object] = []
        node.append(child)
        node = child
    assert is_json_value(root)
    assert snapshot_json_value(root) is not NOT_JSON
    assert js_json(root) == "[" * 100_001 + "]" * 100_001
    node.append(math.nan)
    assert not is_json_value(root)


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (2.0, "2"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (1e-6, "0.000001"),
        (0.1, "0.1"),
        (-0.0, "0"),
        (1e16, "10000000000000000"),
        (123.456, "123.456"),
        (-2.5, "-2.5"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (10**21, "1e+21"),
        (12345678901234567890, "12345678901234567890"),
        (math.nan, "null"),
        (math.inf, "null"),
    ],
)
def test_numbers_render_as_javascript_does(number: float, text: str) -> None:
    assert js_number(number) == text


@given(
    st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        st.floats(min_value=1e-4, max_value=1e16),
        st.floats(min_value=-1e16, max_value=-1e-4),
        st.sampled_from([1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, 2.0, -3.0]),
        st.integers(min_value=-(2**60), max_value=2**60).map(float),
    )
)
def test_the_fast_float_path_is_the_general_rule(number: float) -> None:
    # ``js_number`` takes ``repr`` for 1e-4 <= |x| < 1e16: it must be ECMA-262's text there.
    assert js_number(number) == ecma_number_to_string(number)


def test_strings_render_compact_with_non_ascii_kept() -> None:
    assert js_json(["a", "b"]) == '["a","b"]'
    assert js_json({"k": 'é文\n\t"\\\x01'}) == '{"k":"é文\\n\\t\\"\\\\\\u0001"}'
    # JSON.stringify escapes lone surrogates (well-formed JSON.stringify).
    assert js_json("\ud800") == '"\\ud800"'


@given(json_values)
def test_snapshot_of_json_is_equal_and_rendering_round_trips(value: object) -> None:
    assert is_json_value(value)
    assert snapshot_json_value(value) == value
    text = js_json(value)
    # JavaScript renders 4.9e16 as digits, which Python parses back as an int: compare renderings.
    assert js_json(json.loads(text)) == text
    assert json.loads(text, parse_int=float) == json.loads(json.dumps(value), parse_int=float)


def _nested(leaf: object, shapes: list[int]) -> object:
    # One container per entry of ``shapes``, innermost first: a dict, a list, or a list holding
    # a dict (the content-block shape).
    value: object = leaf
    for level, shape in enumerate(shapes):
        if shape == 0:
            value = {f"k{level}": value, "n": level}
        elif shape == 1:
            value = [level, value]
        else:
            value = ["text", {"type": "text", "v": value}]
    return value


@given(
    leaf=st.sampled_from(
        [1, 2.5, "s", None, True, -0.0, math.nan, math.inf, (1,), 10**400, {1: 2}, [], {}]
    ),
    shapes=st.lists(st.integers(min_value=0, max_value=2), max_size=40),
    limit=st.sampled_from([3, 10, 30, 1_000_000]),
)
def test_the_snapshot_answers_as_its_walker_on_both_sides_of_its_recursion_depth(
    leaf: object, shapes: list[int], limit: int
) -> None:
    # Shallow values are copied recursively, deeper ones by the iterative walker: the same
    # verdicts, copies and node-limit messages as the walker alone (depth 0), whichever side of
    # the boundary the value is.
    value = _nested(leaf, shapes)
    previous = set_json_node_limit(limit)
    try:
        answers = []
        for shallow_depth in (lossless._SHALLOW_DEPTH, 0):
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(lossless, "_SHALLOW_DEPTH", shallow_depth)
                problems: list[str] = []
                answers.append((snapshot_json_value(value, problems), problems))
        assert answers[0] == answers[1]
        if is_json_value(value) and json_node_count(value, 10**9) <= limit:
            assert answers[0] == (value, [])
        else:
            assert answers[0][0] is NOT_JSON
            assert answers[0][1] in ([], [node_limit_message("value", limit)])
    finally:
        set_json_node_limit(previous)


def test_a_cycle_below_the_recursion_depth_is_refused() -> None:
    inner: list[object] = []
    value = {"a": [inner]}
    inner.append(value)
    assert snapshot_json_value(value) is NOT_JSON


@pytest.mark.parametrize(
    "value",
    [
        [{"type": "text", "text": "ok"}, {"type": "image", "data": [1, 2, {"a": 3}]}],
        [[1, 2], {"a": {"b": [True, None]}}, "s"],
        {"a": [{"b": 1}, {"c": [1, 2, 3]}], "d": 2.5},
        _nested(7, [2, 0, 1, 2, 2, 0]),
    ],
)
def test_the_snapshot_refuses_one_node_over_the_limit(value: object) -> None:
    nodes = json_node_count(value, 10**9)
    for limit, copied in ((nodes, True), (nodes - 1, False)):
        previous = set_json_node_limit(limit)
        try:
            problems: list[str] = []
            copy = snapshot_json_value(value, problems)
        finally:
            set_json_node_limit(previous)
        if copied:
            assert (copy, problems) == (value, [])
        else:
            assert (copy, problems) == (NOT_JSON, [node_limit_message("value", limit)])
