"""The requests ``conformance fuzz`` sends: the kit's ops and scenarios, edges included.

Built on :mod:`.strategies` (needs hypothesis), with the edges the kit's vectors cover and that a
port gets wrong, so that fuzzing reaches them too:

* numbers as written: ``-0.0``, integral floats (``2.0`` beside ``2`` in ``enum``/``const``),
  integers past 2**53 that are exact doubles, ``1e21``; they travel in their own form
  (:func:`~.port.request_text`);
* raw argument text that is JSON only in part: whitespace only, padding, trailing text,
  characters that only look like space, duplicate and array-index keys;
* the schema and parameter-spec ops (``assert``, ``assertObject``, ``compileParams``,
  ``compileValue``) on valid and broken schemas and specs;
* scheduling: caps that are not positive integers (and ``null``, ``2.0``), the odd argument texts
  and the numbers above in calls, structured parameter maps and truthy non-``true`` classifier
  values. Scenarios whose answer has ties are drawn like any other and skipped by ``fuzz``.

Integers past 2**53 that JavaScript reads or prints otherwise (``2**53 + 1``, ``2**60``) are made
the number JavaScript holds (:func:`exact_doubles`): the reference keeps them exact where
JavaScript rounds (``docs/porting.md``), a documented difference.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from hypothesis import strategies as st

from .._json import js_number, loads_any_depth
from .._testing import (
    argument_texts,
    json_scalars,
    parameter_maps,
    scheduling_scenarios,
    subset_schemas,
    valid_values,
)
from .._testing import invalid_values as broken_values
from .fuzz_edges import edge_validation_requests, hooked_scenarios, wide_window_scenarios
from .fuzz_faults import fault_validation_requests, multi_violation_scenarios, output_scenarios
from .fuzz_stages import stage_scenarios

__all__ = [
    "EDGE_NUMBERS",
    "exact_doubles",
    "odd_argument_texts",
    "scheduling_requests",
    "validation_requests",
]

#: Numbers a port's JSON reading gets wrong: each is written as it is held (``2.0``, ``-0.0``).
EDGE_NUMBERS: Final = st.sampled_from(
    [
        *(-0.0, 0.0, 1.0, 2.0, -3.0, 0.5, 1e21, 1e-7, 1e300, 2.0**60, 9007199254740994.0),
        *(2**53, 2**53 + 2, -(2**53 + 2), 10**20, 10**22),
    ]
)


def _edge_scalars() -> st.SearchStrategy[Any]:
    return st.one_of(json_scalars(), EDGE_NUMBERS)


def _edge_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    keys = st.sampled_from(["a", "", "0", "1", "x.y", "__proto__"])
    return st.recursive(
        _edge_scalars(),
        lambda children: st.one_of(
            st.lists(children, max_size=3), st.dictionaries(keys, children, max_size=3)
        ),
        max_leaves=max_leaves,
    )


_SPACES: Final = st.sampled_from([" ", "\t", "\n", "\r", " \r\n\t", "  "])
_NOT_SPACES: Final = st.sampled_from(["\u00a0", "\ufeff", "\u2028", "\x0c", "\x0b"])
_TAILS: Final = st.sampled_from([" x", "}", "]", ",", " {}", "{}", " 1", "\x00", "//", " null"])


@st.composite
def odd_argument_texts(draw: st.DrawFn, valid: st.SearchStrategy[str]) -> str:
    """Argument text around a ``valid`` JSON text: padded (still JSON), trailing text, a
    non-JSON space in front, whitespace only, duplicate or array-index keys, number forms."""
    text = draw(valid)
    kind = draw(st.integers(0, 8))
    if kind in (0, 8):
        return draw(_SPACES) + text + draw(_SPACES)
    if kind == 1:
        return draw(st.sampled_from([text, "{}", "[1]", '"a"'])) + draw(_TAILS)
    if kind == 2:
        return draw(_NOT_SPACES) + text
    if kind == 3:
        return draw(_SPACES)
    if kind == 4:
        return '{"a": 1, "a": ' + text + "}"
    if kind == 5:
        return '{"b": 1, "1": ' + text + ', "0": 2}'
    if kind == 6:
        return json.dumps({"n": draw(EDGE_NUMBERS)})
    return draw(st.sampled_from(["-0", "[-0, 0]", '{"n": 1e400}', '{"n": -1E400}', "1E2", "2.50"]))


# ---------------------------------------------------------------------------------------------
# Validation ops
# ---------------------------------------------------------------------------------------------

#: Ways to break a subset schema: an unknown keyword, a keyword of the wrong type, an empty or
#: mistyped enum, an object without the explicit ``additionalProperties`` the DSL wants...
_SCHEMA_BREAKS: Final[tuple[tuple[str, Any], ...]] = (
    ("format", "email"),
    ("pattern", "^a"),
    ("minimum", 1),
    ("enum", []),
    ("enum", "a"),
    ("enum", [1, "a"]),
    ("const", [1.5]),
    ("type", "text"),
    ("type", ["string", "null"]),
    ("items", True),
    ("properties", "x"),
    ("required", "a"),
    ("additionalProperties", 1),
    ("oneOf", []),
    ("description", 1),
    ("$ref", "#"),
)


@st.composite
def _broken_schema(draw: st.DrawFn) -> Any:
    schema = draw(subset_schemas(max_leaves=4))
    key, value = draw(st.sampled_from(_SCHEMA_BREAKS))
    if draw(st.booleans()):
        return draw(st.sampled_from([None, 1, "x", [], True]))
    return {**schema, key: value}


@st.composite
def _broken_spec(draw: st.DrawFn) -> Any:
    spec = draw(parameter_maps(min_size=1, max_size=3))
    name = draw(st.sampled_from(sorted(spec)))
    key, value = draw(
        st.sampled_from(
            [
                ("type", "text"),
                ("required", "yes"),
                ("enum", []),
                ("items", {"type": "string"}),
                ("properties", {}),
                ("type", "object"),
                ("extra", 1),
            ]
        )
    )
    return {**spec, name: {**spec[name], key: value}}


@st.composite
def _validate_request(draw: st.DrawFn) -> dict[str, Any]:
    schema = draw(subset_schemas())
    broken = broken_values(schema, big_numbers=False)
    value = draw(st.one_of(broken, valid_values(schema, big_numbers=False), _edge_values(6)))
    if not draw(st.integers(0, 2)):
        value = draw(st.one_of(broken, _edge_values(6)))
    path = draw(st.sampled_from(["value", "value", "", "args", "a.b"]))
    return {"op": "validate", "schema": schema, "value": value, "path": path}


def _tag_infinities(value: Any) -> Any:
    """``value`` with each infinity as ``{"$inf": 1}`` / ``{"$inf": -1}`` (JSON cannot carry
    it); ``-0.0`` and the other numbers keep their own form."""
    if type(value) is float and math.isinf(value):
        return {"$inf": 1 if value > 0 else -1}
    if type(value) is list:
        return [_tag_infinities(item) for item in value]
    if type(value) is dict:
        return {key: _tag_infinities(item) for key, item in value.items()}
    return value


@st.composite
def _validate_args_request(draw: st.DrawFn) -> dict[str, Any]:
    spec = exact_doubles(draw(parameter_maps(min_size=2)))  # its enum members reach the text
    raw = draw(
        argument_texts(spec, ("valid", "wrong-type", "missing", "not-an-object"), big_numbers=False)
    )
    # Argument text may spell ``1e400``: the parsed infinity travels as the oracle's tag.
    args = _tag_infinities(json.loads(raw.text))
    if type(args) is dict and draw(st.integers(0, 3)) == 3:  # shrinks to off
        args[draw(st.sampled_from(sorted(spec)))] = draw(EDGE_NUMBERS)
    return {"op": "validateArgs", "spec": spec, "args": args}


@st.composite
def _parse_request(draw: st.DrawFn) -> dict[str, Any]:
    spec = exact_doubles(draw(parameter_maps()))  # its enum members reach the text
    texts = st.builds(lambda drawn: drawn.text, argument_texts(spec, big_numbers=False))
    odd = odd_argument_texts(texts)
    raw = draw(st.one_of(texts, odd, odd).filter(_read_alike))
    return {"op": "parseArguments", "raw": raw}


def _inexact(value: Any) -> bool:
    stack = [value]  # iterative: argument text may nest past the interpreter's recursion limit
    while stack:
        item = stack.pop()
        if type(item) is int:
            held = exact_doubles(item)
            if type(held) is not int or held != item:
                return True
        elif type(item) is list:
            stack.extend(item)
        elif type(item) is dict:
            stack.extend(item.values())
    return False


def _read_alike(raw: str) -> bool:
    """Whether JavaScript reads the integers of ``raw`` (when it is JSON) as the reference
    does: a text is sent as drawn, so :func:`exact_doubles` cannot mend it."""
    try:
        return not _inexact(loads_any_depth(raw))
    except ValueError:
        return True


@st.composite
def _schema_request(draw: st.DrawFn) -> dict[str, Any]:
    op = draw(st.sampled_from(["assert", "assertObject"]))
    schema = draw(st.one_of(subset_schemas(), _broken_schema()))
    return {"op": op, "schema": schema}


@st.composite
def _compile_request(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        spec = draw(st.one_of(parameter_maps(), _broken_spec()))
        return {"op": "compileParams", "spec": spec}
    spec = draw(st.one_of(subset_schemas(max_leaves=4), _broken_schema()))
    return {"op": "compileValue", "spec": spec}


def exact_doubles(value: Any) -> Any:
    """``value`` with every integer past 2**53 that JavaScript reads or prints otherwise made the
    number JavaScript holds; everything else unchanged.

    A port in JavaScript reads ``2**53 + 1`` as ``2**53`` and prints ``2**60`` as
    ``1152921504606847000``, where the reference keeps and prints every integer exactly (a
    documented difference, ``docs/porting.md``). The schema strategies draw such integers as
    edges for this library's own validator; a request to a port must not carry them. So an
    integer that is a double and prints as that double does stays; any other becomes the
    integer of its nearest double when that one prints alike in both
    (``2**53 + 1`` → ``2**53``, ``10**300 + 1`` → ``int(1e300)``, ``10**22`` stays), else that
    double as a float (``2**60`` → ``1.152921504606847e+18``, which both print as JavaScript
    does). Applied to the whole request, so a schema and a value drawn for it stay alike.
    """
    kind = type(value)
    if kind is int and not -_SAFE <= value <= _SAFE:
        try:
            nearest = float(value)
        except OverflowError:  # past every double: left as drawn (no double to round to)
            return value
        held = js_number(nearest)
        whole = int(nearest)
        if whole == value and js_number(value) == held:
            return value  # an exact double JavaScript prints alike (``2**53 + 2``, ``10**22``)
        # Not a double (``10**300 + 1`` reads as ``1e300`` in JavaScript), or printed otherwise.
        return whole if js_number(whole) == held else nearest
    if kind is list:
        return [exact_doubles(item) for item in value]
    if kind is dict:
        return {key: exact_doubles(item) for key, item in value.items()}
    return value


_SAFE: Final = 2**53


def validation_requests() -> st.SearchStrategy[dict[str, Any]]:
    """Validation oracle requests: every op of the kit's validation files."""
    # Weighted towards broken arguments: several parameters may be wrong at once.
    return st.one_of(
        _validate_request(),
        _validate_args_request(),
        _validate_args_request(),
        _parse_request(),
        _parse_request(),
        _schema_request(),
        _compile_request(),
        edge_validation_requests(),
        edge_validation_requests(),
        fault_validation_requests(),
        fault_validation_requests(),
        fault_validation_requests(),
        fault_validation_requests(),
    ).map(exact_doubles)


# ---------------------------------------------------------------------------------------------
# Scheduling scenarios
# ---------------------------------------------------------------------------------------------

#: Caps that are not positive integers, and valid ones written oddly (``null``, ``2.0``).
_ODD_CAPS: Final = st.one_of(
    [st.just(cap) for cap in (None, 2.0, 0, -1, 1.5, True, False, "2", [2], -0.0, 1.0)]
)

_PLAIN_TEXTS: Final = st.sampled_from(['{"p": true}', '{"p": false}', "{}", '{"p": 1}'])
_USUAL_TEXTS: Final = st.sampled_from([None, '{"p": true}', '{"p": false}', '{"p": 1}', "{"])
_CALL_TEXTS: Final = st.one_of(
    _USUAL_TEXTS,
    st.sampled_from(['{"p": 1.0}', '{"p": "true"}', '{"p": [true]}', '{"p": 2.0, "q": -0}']),
    odd_argument_texts(_PLAIN_TEXTS),
)
_STRUCTURED_PARAMETERS: Final = st.sampled_from(
    [
        {"p": {"type": "number", "enum": [1.0, 2.5]}},
        {"p": {"type": "array", "items": {"type": "boolean"}}},
        {"p": {"oneOf": [{"type": "boolean"}, {"type": "integer"}]}, "q": {"type": "number"}},
        {
            "p": {"type": "boolean", "required": True},
            "o": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"d": {"type": "integer"}},
            },
        },
        {"": {"type": "string"}},
    ]
)
_BOOLEAN_P: Final = st.just({"p": {"type": "boolean"}})
_PARAMETERS: Final = st.one_of(_BOOLEAN_P, _STRUCTURED_PARAMETERS)


@st.composite
def _with_odd_cap(draw: st.DrawFn, scenario: dict[str, Any]) -> dict[str, Any]:
    # Rarely: most scenarios keep a window worth filling (a rejected cap runs nothing).
    if draw(st.integers(0, 5)) == 5:  # shrinks to off
        return {**scenario, "cap": draw(_ODD_CAPS)}
    return scenario


@st.composite
def _failure_in_flight(draw: st.DrawFn, scenario: dict[str, Any]) -> dict[str, Any]:
    """``scenario`` made a group of parallel ``read`` calls (a window of 2 or more, no abort)
    with a scheduler failure at 1-15 ms while the other bodies run on (20-40 ms): the pool must
    wait for them to settle before it raises. A failure after some time is no tie (a dispatch
    failing after 0 ms beside a later start is), so fuzzing does not pass these over."""
    calls = scenario["calls"]
    if len(calls) < 2:
        return scenario
    tools = [
        {**tool, "parallel": "always"} if tool["name"] == "read" else tool
        for tool in scenario["tools"]
    ]
    failing = draw(st.sampled_from([call["id"] for call in calls]))
    changed = []
    for call in calls:
        body = {key: value for key, value in (call.get("body") or {}).items() if key != "hangs"}
        if call["id"] != failing:
            body["ms"] = draw(st.integers(20, 40))
        changed.append({**call, "name": "read", "arguments": "{}", "body": body})
    failure = {
        "call": failing,
        "phase": draw(st.sampled_from(["dispatch", "prepare"])),
        "ms": draw(st.integers(1, 15)),
    }
    rest = {key: value for key, value in scenario.items() if key not in ("abortAtMs", "cap")}
    cap = draw(st.sampled_from([None, 2, 3, 4]))
    return {
        **rest,
        "tools": tools,
        "calls": changed,
        "schedulerFailure": failure,
        **({} if cap is None else {"cap": cap}),
    }


def scheduling_requests(**knobs: Any) -> st.SearchStrategy[dict[str, Any]]:
    """``{"op": "schedule", "id": "fuzz", "scenario": ...}`` requests; ``knobs`` go to
    :func:`~.strategies.scheduling_scenarios`.

    One scenario in eleven draws its argument texts and parameter maps from the edges above,
    one in eleven has a scheduler failure while other bodies run (:func:`_failure_in_flight`),
    one in eleven is a wide window (:func:`~.fuzz_edges.wide_window_scenarios`), one in eleven
    has calls with several hooks at once (:func:`~.fuzz_edges.hooked_scenarios`), one in eleven
    has calls whose arguments break several rules at once
    (:func:`~.fuzz_faults.multi_violation_scenarios`), one in eleven tools with an output spec
    their values satisfy or fail (:func:`~.fuzz_faults.output_scenarios`), two in eleven time an
    abort, a failure or a conclusion inside one stage of a call, or draw a cap past 2**53
    (:func:`~.fuzz_stages.stage_scenarios`); the others are the plain scenarios, where windows
    fill and failures meet in-flight bodies (and shrinking goes towards them).
    """
    plain = scheduling_scenarios(**knobs)
    edges = scheduling_scenarios(**{"arguments": _CALL_TEXTS, "parameters": _PARAMETERS, **knobs})
    in_flight = plain.flatmap(_failure_in_flight)
    if knobs.get("failures") is False:
        in_flight = plain
    return (
        st.one_of(
            plain,
            plain,
            plain,
            edges,
            in_flight,
            wide_window_scenarios(),
            hooked_scenarios(),
            multi_violation_scenarios(),
            output_scenarios(),
            stage_scenarios(),
            stage_scenarios(),
        )
        .flatmap(_with_odd_cap)
        .map(lambda scenario: {"op": "schedule", "id": "fuzz", "scenario": scenario})
    )
