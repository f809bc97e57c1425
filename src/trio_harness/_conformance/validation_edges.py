"""Validation edge cases of the kit (``spec/validation-edges.jsonl``), answered by the reference.

The recorded upstream vectors (``upstream-vectors.jsonl``) are random draws; these are the edges
a port gets wrong that random draws rarely reach, each group written so that one port bug fails
several cases:

* ``empty-key`` — a property named ``""``, right under the empty root path and deeper (upstream
  renders such paths raw: the empty root with an empty key is ``arguments``, under ``value`` it
  is ``value.``);
* ``numbers`` — numbers as the case writes them: ``2.0`` is the integer 2 and equal to ``2`` in
  ``enum``/``const`` (a reader that keeps ``2.0`` a float and compares by type fails), ``-0``,
  big integers that are exact doubles, ``1e400`` (JavaScript's ``Infinity``);
* ``argument-text`` — raw argument text that is JSON only in part: whitespace only (``JSON.parse``
  rejects it: it stays a string, unlike ``""``), padding, non-JSON whitespace, a byte-order mark,
  trailing text, duplicate keys, array-index keys;
* the groups of :mod:`.validation_pins`, each pinning one rule by three cases or more.

Every number reaches the port as written here (the file is written by
:func:`~.port.request_text`, and ``conformance run`` sends each line's own text). The answers
were checked against upstream as a port (``spec/COVERAGE.md`` names the command).
"""

from __future__ import annotations

from typing import Any, Final

from .._json import loads_any_depth
from .oracle import answer_case
from .port import request_text
from .validation_pins import PIN_GROUPS

__all__ = ["EDGES_FILE", "edge_cases", "edge_lines"]

#: The generated file, relative to the spec directory.
EDGES_FILE: Final = "validation-edges.jsonl"


def _validate(schema: Any, value: Any, path: str = "") -> dict[str, Any]:
    return {"op": "validate", "schema": schema, "value": value, "path": path}


def _args(spec: Any, args: Any) -> dict[str, Any]:
    return {"op": "validateArgs", "spec": spec, "args": args}


def _parse(raw: str) -> dict[str, Any]:
    return {"op": "parseArguments", "raw": raw}


def _obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


_STRING: Final = {"type": "string"}

_EMPTY_KEY: Final[tuple[dict[str, Any], ...]] = (
    _validate(_obj({"": _STRING}), {"": 1}),
    _validate(_obj({"": _STRING}), {"": 1}, "value"),
    _validate(_obj({"": _obj({"": {"type": "integer"}})}), {"": {"": "x"}}),
    _validate(_obj({"a": _obj({"": _STRING})}), {"a": {"": 1}}),
    _validate(_obj({"": _obj({"a": _STRING})}), {"": {"a": 1}}, "args"),
    _validate(_obj({"": {}}, required=[""]), {}),
    _validate(_obj({"": _obj({}, required=[""])}), {"": {}}),
    _validate(_obj({}, additionalProperties=False), {"": 1, "a": 2}),
    _validate(_obj({"": _obj({}, additionalProperties=False)}), {"": {"": 1}}),
    _validate(_obj({"": {"type": "array", "items": _STRING}}), {"": ["a", 1]}),
    _validate(_obj({"": {"oneOf": [_STRING, {"type": "integer"}]}}), {"": True}),
    _validate({"type": "array", "items": _obj({"": _STRING})}, [{"": 1}]),
    _args({"": _STRING}, {"": 1}),
    _args({"": {"type": "string", "required": True}}, {}),
    _args({"": {"type": "integer", "enum": [1, 2]}, "a": _STRING}, {"": 3, "a": 4}),
    _args(
        {"a": {"type": "array", "items": _obj({"": _STRING}, additionalProperties=False)}},
        {"a": [{"": 2}]},
    ),
    {"op": "compileParams", "spec": {"": {"type": "string", "required": True}}},
    _parse('{"":{"":1}}'),
)

_NUMBERS: Final[tuple[dict[str, Any], ...]] = (
    _validate({"enum": [1]}, 1.0, "value"),
    _validate({"enum": [1.0]}, 1, "value"),
    _validate({"const": 2.0}, 2, "value"),
    _validate({"const": 2}, 2.0, "value"),
    _validate({"type": "integer"}, 2.0, "value"),
    _validate({"type": "integer", "enum": [2.0, 3]}, 3.0, "value"),
    _validate({"type": "integer", "enum": [2.0, 3]}, 4.0, "value"),
    _validate({"type": "number", "const": 1.0}, 2, "value"),
    _validate({"const": [1.0, {"a": 2.0}]}, [1, {"a": 2}], "value"),
    _validate({"enum": [{"a": 1}]}, {"a": 1.0}, "value"),
    _validate({"type": "number", "const": 1e21}, 10**21, "value"),
    _validate({"type": "number", "enum": [1e-7]}, 0.0000001, "value"),
    _validate({"const": 0}, -0.0, "value"),
    _validate({"enum": [-0.0]}, 0, "value"),
    _validate({"type": "integer", "const": 2**53 + 2}, float(2**53 + 2), "value"),
    _validate({"type": "integer"}, 1e300, "value"),
    _validate({"type": "integer"}, 10**23, "value"),
    _validate(_obj({"n": {"type": "integer"}, "m": {"type": "number"}}), {"n": 1.5, "m": 2.0}),
    _args({"n": {"type": "number", "enum": [1.0]}}, {"n": 1}),
    _args({"n": {"type": "integer"}}, {"n": 2.0}),
    _args({"n": {"type": "integer", "enum": [1, 2]}}, {"n": 3.0}),
    _args(
        {"n": {"type": "integer", "enum": [1.0, 2.0]}, "m": {"type": "number"}}, {"n": 2, "m": 1}
    ),
    {"op": "compileParams", "spec": {"n": {"type": "number", "enum": [1.0, 2.5]}}},
    {"op": "compileValue", "spec": {"type": "integer", "enum": [2.0]}},
    {"op": "assert", "schema": {"type": "integer", "enum": [2.0]}},
    {"op": "assert", "schema": {"type": "integer", "const": 3.0}},
    {"op": "assert", "schema": {"type": "integer", "enum": [1.5]}},
    _parse('{"a":2.0}'),
    _parse('{"a":-0}'),
    _parse("-0.0"),
    _parse("[-0, 0, -0e0]"),
    _parse('{"n":9007199254740994}'),
    _parse('{"n":1e400}'),
    _parse('{"n":-1e400}'),
    _parse('{"n":100000000000000000000000}'),
    _parse('{"n":1E2, "m": 1.50}'),
)

_ARGUMENT_TEXT: Final[tuple[dict[str, Any], ...]] = (
    _parse(" "),
    _parse("\t\n"),
    _parse(" \r\n\t "),
    _parse(" {} "),
    _parse('\n{"a": 1}\n'),
    _parse("\u00a0{}"),
    _parse("\u2028{}"),
    _parse("\ufeff{}"),
    _parse('{"a":1} x'),
    _parse("{} {}"),
    _parse('{"a":1}}'),
    _parse("[1] ,"),
    _parse("1 2"),
    _parse('"a" "b"'),
    _parse('{"a":1,"a":2}'),
    _parse('{"b":1,"1":2,"a":3,"0":4}'),
    _validate(
        _obj({"1": _STRING, "a": _STRING, "0": _STRING}, additionalProperties=False),
        {"a": 1, "1": 2, "z": 0, "0": 3},
    ),
)

_GROUPS: Final = (
    ("empty-key", _EMPTY_KEY),
    ("numbers", _NUMBERS),
    ("argument-text", _ARGUMENT_TEXT),
    *PIN_GROUPS,
)


def edge_cases() -> list[dict[str, Any]]:
    """Every edge case as a request (``op``, ``id``, its inputs), in file order."""
    cases = []
    for group, requests in _GROUPS:
        for index, request in enumerate(requests, 1):
            cases.append({"op": request["op"], "id": f"{group}/{index:03d}", **request})
    return cases


def edge_lines() -> list[str]:
    """The lines of :data:`EDGES_FILE`: each case with the reference's ``expected``."""
    lines = []
    for case in edge_cases():
        text = request_text(case)
        # Answered from the text a port receives, as ``conformance run`` answers it.
        answered = answer_case(loads_any_depth(text))
        lines.append(request_text({**case, "expected": answered["expected"]}))
    return lines
