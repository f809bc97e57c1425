"""parse_arguments: JSON.parse semantics, raw text back on failure, unbounded depth."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.trees import detached
from trio_harness import parse_arguments
from trio_harness._json.lossless import NOT_JSON, set_json_node_limit, snapshot_json_value
from trio_harness._json.parse import (
    _exact_int,
    _iterative_parse,
    _scan,
    loads_any_depth,
    parse_arguments_frozen,
    thaw,
)


def is_neg_zero(value: object) -> bool:
    return isinstance(value, float) and value == 0.0 and math.copysign(1.0, value) < 0


def test_empty_string_is_an_empty_object() -> None:
    assert parse_arguments("") == {}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a":1}', {"a": 1}),
        ("[1,2]", [1, 2]),
        ("null", None),
        ("1", 1),
        ('"x"', "x"),
        ("true", True),
        (' {"x" : [1, 2.5, true]} ', {"x": [1, 2.5, True]}),
        ('{"ü":"é"}', {"ü": "é"}),
        ('{"__proto__":{"a":1}}', {"__proto__": {"a": 1}}),
        ("\t[\n]\r", []),
        ('"\\ud800"', "\ud800"),
    ],
)
def test_any_json_text_is_accepted(raw: str, expected: object) -> None:
    assert parse_arguments(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        '{"a":',
        "tru",
        "not json",
        "{} trailing",
        "\ufeff{}",
        "NaN",
        "Infinity",
        "-Infinity",
        '{"a":NaN}',
        "[1,]",
        '{"a" 1}',
        "01",
        "\x0c1",  # form feed is not JSON whitespace
        "\u00a01",  # nor is a no-break space
        '"\x01"',  # raw control characters are not allowed in strings
        "\u0663",  # a non-ASCII digit is not a JSON number
        "'x'",
        "[1 2]",
        "{'a': 1}",
    ],
)
def test_invalid_json_comes_back_as_the_raw_string(raw: str) -> None:
    got = parse_arguments(raw)
    assert got == raw
    assert type(got) is str


def test_negative_zero_is_kept() -> None:
    # JS keeps -0; the runtime's lossless check rejects it later
    assert is_neg_zero(parse_arguments("-0"))
    assert is_neg_zero(parse_arguments("-0.0"))
    got = parse_arguments('{"a":-0,"b":[-0e3, 0, -10]}')
    assert isinstance(got, dict)
    assert is_neg_zero(got["a"])
    assert is_neg_zero(got["b"][0])
    assert got["b"][1:] == [0, -10]
    assert type(got["b"][1]) is int


def test_out_of_range_numbers_become_infinity() -> None:
    assert parse_arguments("1e400") == math.inf
    assert parse_arguments("-1e400") == -math.inf
    # beyond int()'s digit limit: a double, as in JavaScript
    assert parse_arguments("1" * 5000) == math.inf
    assert parse_arguments("[" + "1" * 5000 + "]") == [math.inf]


def test_big_integers_stay_exact() -> None:
    # porting difference: JavaScript would round to 1.2345678901234568e+29
    assert parse_arguments("123456789012345678901234567890") == 123456789012345678901234567890


def test_object_keys_follow_javascript_own_key_order() -> None:
    got = parse_arguments(
        '{"b":1,"2":2,"1":3,"a":4,"01":5,"4294967295":6,"4294967294":7,"b":8,"-1":9,"1.5":10}'
    )
    assert isinstance(got, dict)
    assert list(got.items()) == [
        ("1", 3),
        ("2", 2),
        ("4294967294", 7),
        ("b", 8),  # duplicate: first position, last value
        ("a", 4),
        ("01", 5),
        ("4294967295", 6),
        ("-1", 9),
        ("1.5", 10),
    ]


def test_escaped_index_keys_and_nested_objects_are_ordered_too() -> None:
    got = parse_arguments('{"x":{"\\u0031":1,"y":2,"0":3},"1":[{"3":1,"2":2}]}')
    assert json.dumps(got) == '{"1": [{"2": 2, "3": 1}], "x": {"0": 3, "1": 1, "y": 2}}'


def test_duplicate_keys_keep_first_position_and_last_value() -> None:
    got = parse_arguments('{"a":1,"b":2,"a":3}')
    assert isinstance(got, dict)
    assert list(got.items()) == [("a", 3), ("b", 2)]


def test_non_str_input_is_a_type_error() -> None:
    for bad in (b"{}", None, 1, ["{}"]):
        with pytest.raises(TypeError, match="expects a str"):
            parse_arguments(bad)  # type: ignore[arg-type]


def test_str_subclass_is_parsed_as_its_text() -> None:
    class Text(str):
        pass

    assert parse_arguments(Text('{"a":1}')) == {"a": 1}
    got = parse_arguments(Text("oops"))
    assert got == "oops"
    assert type(got) is str


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, (list, dict)) and value:
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        depth += 1
    return depth


@pytest.mark.slow
def test_deeply_nested_input_parses_without_recursion_error() -> None:
    depth = 100_000
    got = parse_arguments("[" * depth + "]" * depth)
    assert _depth(got) == depth - 1  # the innermost list is empty
    got = parse_arguments('{"a":' * depth + '{"2":-0,"1":NaN}' + "}" * depth)
    assert got == '{"a":' * depth + '{"2":-0,"1":NaN}' + "}" * depth  # NaN is invalid at any depth
    got = parse_arguments('{"a":' * depth + '{"2":-0,"1":null}' + "}" * depth)
    assert _depth(got) == depth + 1
    inner: Any = got
    for _ in range(depth):
        inner = inner["a"]
    assert list(inner) == ["1", "2"]
    assert is_neg_zero(inner["2"])


@pytest.mark.slow
def test_deeply_nested_invalid_input_comes_back_raw() -> None:
    for raw in ("[" * 100_000, "[" * 100_000 + "]" * 99_999 + "}", "[" * 5000 + "1,]" + "]" * 4999):
        assert parse_arguments(raw) == raw


# The iterative fallback must agree with the json path on every text, valid or not.
_json_text = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["a", "b", "0", "1", "10", "01", "-0", "4294967295", "\u00e9"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
).map(json.dumps)

_noise = st.sampled_from(
    ["", " ", "\t", ",", "]", "}", "-0", "NaN", "1e400", '"', "\\", "\x0c", ":", "[", "{", "0"]
)


@given(text=_json_text, cut=st.integers(min_value=0, max_value=200), noise=_noise)
def test_iterative_parser_agrees_with_the_json_path(text: str, cut: int, noise: str) -> None:
    for candidate in (text, text[:cut] + noise + text[cut:], text.replace(": ", ":" + noise)):
        expected = parse_arguments(candidate) if candidate else None
        try:
            got: object = _iterative_parse(candidate)
        except Exception:
            got = candidate
        if candidate:
            assert json.dumps(got) == json.dumps(expected)
            assert repr(got) == repr(expected)  # tells -0.0 from 0, keeps key order


def _strict_json(raw: str) -> bool:
    def reject(name: str) -> None:
        raise ValueError(name)

    try:
        json.loads(raw, parse_constant=reject)
    except ValueError:
        return False
    return True


@given(st.text() | _json_text)
def test_parse_arguments_is_total_and_gives_raw_back_only_for_invalid_json(raw: str) -> None:
    got = parse_arguments(raw)
    if raw == "":
        assert got == {}
    elif _strict_json(raw):
        reference = json.loads(raw, parse_int=lambda t: -0.0 if t == "-0" else int(t))
        assert json.dumps(got, sort_keys=True) == json.dumps(reference, sort_keys=True)
    else:
        assert got is raw


@given(st.text(alphabet=' \t\n\r{}[]":,x1.eE+-nultrefasNIy') | _json_text)
def test_the_written_out_hook_free_parse_gives_what_decode_gives(raw: str) -> None:
    # ``parse_arguments`` scans text that needs no hook itself; ``_scan`` goes through ``_decode``.
    if raw == "":
        return
    try:
        expected = _scan(raw, False, False)
    except (RecursionError, ValueError):
        return
    if "-0" in raw or ('"' in raw and any(c.isdigit() for c in raw)):
        return  # a hook may be needed: not the written-out path
    got = parse_arguments(raw)
    assert type(got) is type(expected)
    assert json.dumps(got) == json.dumps(expected)
    if type(expected) is str and expected is raw:
        assert got is raw


# ---------------------------------------------------------------------------------------------
# parse_arguments_frozen: the pool's parse, with the frozen form of a value it proves lossless
# JSON (thawed: a copy of the value as parsed)
# ---------------------------------------------------------------------------------------------


def parse_arguments_copied(raw: str) -> tuple[object, object | None]:
    """The parse, and the copy thawed from its frozen form (``None``: nothing proved)."""
    value, frozen = parse_arguments_frozen(raw)
    return value, None if frozen is None else thaw(frozen)


_number_edges = st.sampled_from(
    [
        "-0",
        "-0.0",
        "0.0",
        "-0e5",
        "-1e-400",
        "1e-400",
        "1e400",
        "-1e400",
        "1E308",
        "1.5e308",
        "2e308",
        "9" * 308,
        "9" * 309,
        "-" + "9" * 308,
        "1" + "0" * 320 + ".5",
        "-0.5",
        "0.5",
    ]
)


@given(
    st.text(alphabet=' \t\n\r{}[]":,x1.eE+-0nultrefasNIy') | _json_text,
    _number_edges,
    st.integers(min_value=0, max_value=60),
)
def test_the_exact_parse_gives_parse_arguments_value_and_proves_only_lossless_ones(
    text: str, number: str, cut: int
) -> None:
    for raw in (text, text[:cut] + number + text[cut:], f'{{"n": {number}, "t": {text}}}'):
        got, copy = parse_arguments_copied(raw)
        expected = parse_arguments(raw)
        assert repr(got) == repr(expected)  # tells -0.0 from 0, keeps key order
        if copy is not None:
            # Proved lossless: the snapshot would copy it unchanged, as the copy is.
            snapshot = snapshot_json_value(got)
            assert snapshot is not NOT_JSON
            assert repr(copy) == repr(snapshot) == repr(got)
            assert detached(copy, got)


@pytest.mark.parametrize(
    ("raw", "exact"),
    [
        ('{"a": 1, "b": [1.5, "x", null, true]}', True),
        ("[1, 2]", True),
        ('{"a": -0}', False),  # negative zero
        ('{"a": -0.0}', False),
        ('{"a": -1e-400}', False),  # underflows to -0.0
        ('{"a": 1e-400}', True),  # underflows to 0.0: lossless
        ('{"a": 1e400}', False),  # Infinity
        ('{"a": ' + "9" * 309 + "}", False),  # past the largest finite double
        ('{"a": ' + "9" * 300 + "}", True),
        ('{"a": ' + "9" * 250 + "e99}", False),  # a short exponent that still overflows
        ('{"a": [0.5, -' + "1" * 5 + "e-330]}", False),  # a negative underflow, no "-0" text
        ('{"a": [0.5, -1E-400]}', False),
        ('{"e-": [0.5, -1e-300]}', True),
        ('{"a": [1.5e300, 2.5e-300, -3.5e-300, 1.7976931348623157e308]}', True),
        ('{"0": 1}', False),  # an index key: the key-order parse
        (' {"a": 1}', False),  # leading whitespace: parse_arguments's way
        ('"text"', False),  # not a container
        ("{", False),  # not JSON
        ('{"a": 1} x', False),
        ('{"a": 1} \n', True),
    ],
)
def test_the_exact_parse_proves_what_it_says(raw: str, exact: bool) -> None:
    value, copy = parse_arguments_copied(raw)
    assert (copy is not None) is exact
    assert repr(value) == repr(parse_arguments(raw))
    if copy is not None:
        assert repr(copy) == repr(value)
        assert detached(copy, value)


@pytest.mark.parametrize("pad", [*range(0, 330, 7), 308, 309, 617])
@pytest.mark.parametrize(("digits", "exact"), [(309, False), (308, True), (400, False)])
def test_a_long_integer_anywhere_in_a_long_text_is_found(
    pad: int, digits: int, exact: bool
) -> None:
    # The long-integer pre-check looks at every 309th character only: wherever the literal
    # starts, one of them falls in it. Short digit runs on the probed characters prove nothing.
    noise = ", ".join(str(n) for n in range(200))
    raw = f'{{"p": "{"x" * pad}", "n": [{noise}], "a": {"9" * digits}, "q": [{noise}]}}'
    value, copy = parse_arguments_copied(raw)
    assert (copy is not None) is exact
    assert value == parse_arguments(raw)


def test_the_exact_parse_proves_nothing_at_the_node_limit() -> None:
    raw = "[" + ",".join(["1"] * 50) + "]"
    previous = set_json_node_limit(len(raw))
    try:
        assert parse_arguments_copied(raw) == ([1] * 50, None)
    finally:
        set_json_node_limit(previous)
    assert parse_arguments_copied(raw) == ([1] * 50, [1] * 50)


def test_the_frozen_form_thaws_to_the_value_as_parsed_whatever_happened_to_it_since() -> None:
    raw = '{"a": [1, {"b": 2.5}], "c": "d"}'
    value, frozen = parse_arguments_frozen(raw)
    assert frozen is not None
    assert isinstance(value, dict)
    value["a"][1]["b"] = 0
    value["e"] = []
    first, second = thaw(frozen), thaw(frozen)
    assert first == second == parse_arguments(raw)
    assert detached(first, value)
    assert detached(first, second)


# ---------------------------------------------------------------------------------------------
# loads_any_depth: the reader of logs and oracle lines (JSON.parse at every depth, raising)
# ---------------------------------------------------------------------------------------------

# Deeper than ``json``'s recursion allows, so the iterative parser answers.
_DEEP = 3_000


def _wrap(text: str, depth: int) -> str:
    return "[" * depth + text + "]" * depth


def _unwrap(value: Any, depth: int) -> Any:
    for _ in range(depth):
        (value,) = value
    return value


@pytest.mark.parametrize("depth", [0, 1, _DEEP])
@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_loads_any_depth_rejects_nan_and_infinity_at_every_depth(literal: str, depth: int) -> None:
    with pytest.raises(ValueError, match="invalid JSON"):
        loads_any_depth(_wrap('{"a":' + literal + "}", depth))


@pytest.mark.parametrize("depth", [0, 1, _DEEP])
def test_loads_any_depth_reads_like_json_parse_at_every_depth(depth: int) -> None:
    text = '{"b":1,"10":[-0,0,-0.0],"2":{"z":1,"0":2},"-1":3,"01":4}'
    got = _unwrap(loads_any_depth(_wrap(text, depth)), depth)
    assert list(got) == ["2", "10", "b", "-1", "01"]  # array indices first, ascending
    assert list(got["2"]) == ["0", "z"]
    assert [is_neg_zero(number) for number in got["10"]] == [True, False, True]


@pytest.mark.parametrize("depth", [0, _DEEP])
def test_loads_any_depth_can_keep_the_text_key_order_at_every_depth(depth: int) -> None:
    text = '{"b":1,"10":2,"2":{"z":1,"0":2},"b":3}'
    got = _unwrap(loads_any_depth(_wrap(text, depth), js_key_order=False), depth)
    assert got == {"b": 3, "10": 2, "2": {"z": 1, "0": 2}}
    assert list(got) == ["b", "10", "2"]
    assert list(got["2"]) == ["z", "0"]


@pytest.mark.parametrize("depth", [0, _DEEP])
@pytest.mark.parametrize("digits", [4_300, 4_301, 50_000])
def test_loads_any_depth_reads_integers_of_any_length(digits: int, depth: int) -> None:
    limit = sys.get_int_max_str_digits()
    number = "9" * digits
    got = _unwrap(loads_any_depth(_wrap(f'[{number},-{number},1.5,"x"]', depth)), depth)
    assert got == [10**digits - 1, -(10**digits - 1), 1.5, "x"]
    assert type(got[0]) is int
    assert sys.get_int_max_str_digits() == limit  # the interpreter-wide limit is untouched


def test_digit_safe_conversion_agrees_with_int() -> None:
    for text in ("0", "-0", "7", "-12", "1" + "0" * 639, "-" + "123456789" * 200, "9" * 1281):
        assert _exact_int(text) == (-0.0 if text == "-0" else int(text))


@settings(max_examples=40)  # each example parses 3,000 levels
@given(text=_json_text)
def test_loads_any_depth_gives_the_same_value_at_every_depth(text: str) -> None:
    shallow = loads_any_depth(text)
    deep = _unwrap(loads_any_depth(_wrap(text, _DEEP)), _DEEP)
    assert repr(deep) == repr(shallow)  # tells -0.0 from 0, keeps key order
    assert repr(shallow) == repr(parse_arguments(text))  # JSON.parse, as for model arguments


@pytest.mark.parametrize("text", ["", " ", "\x0c", "\xa0{}", "{} \u2028", "[1,]", "01", "-"])
def test_loads_any_depth_raises_on_what_is_not_json(text: str) -> None:
    with pytest.raises(ValueError, match="invalid JSON"):
        loads_any_depth(text)
