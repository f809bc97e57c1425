"""Hypothesis strategies for the conformance kit and :mod:`trio_harness.testing` (needs hypothesis).

This module imports hypothesis; the package interface loads it only on demand, so the rest of
the library never needs hypothesis. Every strategy draws plain JSON data (what travels to a port):

* :func:`json_values`, :func:`subset_schemas`, :func:`parameter_maps`;
* :func:`valid_values` / :func:`invalid_values`: values built *from* a schema (a ``oneOf`` node
  is the only place where a drawn candidate is checked, since a branch's value may match another
  branch too);
* :func:`argument_texts`: the raw argument text a model writes for a tool, labelled by kind;
* :func:`scheduling_scenarios`: scenarios in the ``spec/FORMAT.md`` format.

The requests ``conformance fuzz`` sends, with the edges a port gets wrong, are drawn by
:mod:`.fuzz_requests` from these.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Final, Literal

import attrs
from hypothesis import strategies as st

from .._json import js_json
from .._validation import parameter_schema_spec_to_json_schema, validate_json_schema_value

__all__ = [
    "ARGUMENT_KINDS",
    "ArgumentText",
    "argument_texts",
    "invalid_values",
    "json_scalars",
    "json_values",
    "parameter_maps",
    "scheduling_scenarios",
    "subset_schemas",
    "valid_values",
]

_KEYS: Final = ["a", "b", "c", "id", "", "x.y", "toString", "__proto__", "é"]
_KEY = st.sampled_from(_KEYS)
_SAFE_INTS = st.integers(min_value=-(2**53), max_value=2**53)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False).filter(
    lambda f: not (f == 0.0 and math.copysign(1.0, f) < 0)
)


def json_scalars() -> st.SearchStrategy[Any]:
    """Lossless JSON scalars (``-0.0`` and integers beyond 2**53 excluded)."""
    return st.one_of(
        st.none(),
        st.booleans(),
        _SAFE_INTS,
        st.sampled_from([0, 1, 2, 1.0, 2.0, 1.5, -1, "a", "b", ""]),
        _FLOATS,
        st.text(max_size=5),
    )


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Lossless JSON trees: exact lists and ``str``-keyed dicts of :func:`json_scalars`."""
    return st.recursive(
        json_scalars(),
        lambda children: st.one_of(
            st.lists(children, max_size=4), st.dictionaries(_KEY, children, max_size=4)
        ),
        max_leaves=max_leaves,
    )


# ---------------------------------------------------------------------------------------------
# Schemas
# ---------------------------------------------------------------------------------------------

_SCALAR_MEMBERS: Final[dict[str, st.SearchStrategy[Any]]] = {
    "string": st.sampled_from(["a", "b", "", "é", 'q"']),
    "number": st.sampled_from([0, 1, 1.5, -2, 2.0, 1e21, 1e-7]),
    "integer": st.sampled_from([0, 1, 2, -3, 2.0]),
    "boolean": st.booleans(),
    "null": st.none(),
}


@st.composite
def _scalar_schema(draw: st.DrawFn) -> dict[str, Any]:
    type_name = draw(st.sampled_from(sorted(_SCALAR_MEMBERS)))
    node: dict[str, Any] = {"type": type_name}
    members = _SCALAR_MEMBERS[type_name]
    enum = draw(st.none() | st.lists(members, min_size=1, max_size=3))
    if enum is not None:
        node["enum"] = enum
    if draw(st.booleans()):
        node["const"] = draw(st.sampled_from(enum) if enum else members)
    if draw(st.booleans()):
        node["description"] = "d"
    return node


def _annotations_only() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={"description": st.just("any"), "default": st.none()})


def subset_schemas(max_leaves: int = 8) -> st.SearchStrategy[dict[str, Any]]:
    """Schemas inside the enforced subset (``assert_supported_json_schema`` accepts them)."""

    def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        @st.composite
        def obj(draw: st.DrawFn) -> dict[str, Any]:
            node: dict[str, Any] = {"type": "object"}
            if draw(st.booleans()):
                properties = draw(st.dictionaries(_KEY, children, max_size=3))
                node["properties"] = properties
                required = (
                    draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
                    if properties
                    else []
                )
                if required:
                    node["required"] = required
            additional = draw(st.sampled_from([None, True, False]))
            if additional is not None:
                node["additionalProperties"] = additional
            return node

        @st.composite
        def arr(draw: st.DrawFn) -> dict[str, Any]:
            node: dict[str, Any] = {"type": "array"}
            if draw(st.booleans()):
                node["items"] = draw(children)
            return node

        return st.one_of(
            obj(),
            arr(),
            st.lists(children, min_size=2, max_size=3).map(lambda branches: {"oneOf": branches}),
        )

    return st.recursive(
        st.one_of(_scalar_schema(), _annotations_only()), extend, max_leaves=max_leaves
    )


@st.composite
def _parameter(draw: st.DrawFn) -> dict[str, Any]:
    type_name = draw(st.sampled_from(["string", "number", "integer", "boolean"]))
    spec: dict[str, Any] = {"type": type_name}
    if type_name != "boolean" and draw(st.booleans()):
        spec["enum"] = draw(st.lists(_SCALAR_MEMBERS[type_name], min_size=1, max_size=3))
    if draw(st.booleans()):
        spec["required"] = True
    return spec


def parameter_maps(min_size: int = 0, max_size: int = 4) -> st.SearchStrategy[dict[str, Any]]:
    """Author parameter maps (the DSL of ``define_tool``'s ``parameters``) of scalar parameters."""
    return st.dictionaries(
        st.sampled_from(["path", "n", "mode", "flag", "limit"]),
        _parameter(),
        min_size=min_size,
        max_size=max_size,
    )


# ---------------------------------------------------------------------------------------------
# Values drawn from a schema
# ---------------------------------------------------------------------------------------------


def _matches(schema: Any, value: Any) -> bool:
    return validate_json_schema_value(schema, value) == []


def _same(left: Any, right: Any) -> bool:
    return js_json(left) == js_json(right) or (
        type(left) is not bool
        and type(right) is not bool
        and isinstance(left, int | float)
        and isinstance(right, int | float)
        and left == right
    )


_WRONG_TYPE: Final[dict[str, st.SearchStrategy[Any]]] = {
    "string": st.one_of(st.none(), st.booleans(), _SAFE_INTS, st.just([]), st.just({})),
    "number": st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.just([]), st.just({})),
    "integer": st.one_of(
        st.none(), st.booleans(), st.sampled_from([1.5, -0.5]), st.text(max_size=3), st.just([])
    ),
    "boolean": st.one_of(st.none(), _SAFE_INTS, st.text(max_size=3), st.just({})),
    "null": st.one_of(st.booleans(), _SAFE_INTS, st.text(max_size=3), st.just([])),
    "object": st.one_of(st.none(), st.booleans(), _SAFE_INTS, st.text(max_size=3), st.just([])),
    "array": st.one_of(st.none(), st.booleans(), _SAFE_INTS, st.text(max_size=3), st.just({})),
}

_OF_TYPE: Final[dict[str, st.SearchStrategy[Any]]] = {
    "string": st.text(max_size=5),
    "number": st.one_of(_SAFE_INTS, _FLOATS),
    "integer": _SAFE_INTS,
    "boolean": st.booleans(),
    "null": st.none(),
}


def valid_values(schema: Any) -> st.SearchStrategy[Any]:
    """JSON values that satisfy ``schema`` (a subset schema), built from its keywords.

    An unsatisfiable schema (``const`` outside ``enum``, a ``oneOf`` whose branches always
    overlap) yields no value: the draw is rejected, as hypothesis does with ``assume``.
    """
    if type(schema) is not dict:
        return st.nothing()
    if "oneOf" in schema:
        branches = schema["oneOf"]
        return st.one_of([valid_values(branch) for branch in branches]).filter(
            lambda value: sum(_matches(branch, value) for branch in branches) == 1
        )
    type_name = schema.get("type")
    if type_name is None:
        return json_values()
    if type_name in _OF_TYPE:
        members: list[Any] | None = None
        if "enum" in schema:
            members = list(schema["enum"])
        if "const" in schema:
            const = schema["const"]
            members = [const] if members is None else [m for m in members if _same(m, const)]
        if members is not None:
            return st.sampled_from(members) if members else st.nothing()
        return _OF_TYPE[type_name]
    if type_name == "array":
        items = schema.get("items")
        return st.lists(json_values(6) if items is None else valid_values(items), max_size=3)
    if type_name == "object":
        return _valid_objects(schema)
    return st.nothing()


@st.composite
def _valid_objects(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    value: dict[str, Any] = {}
    for key, child in properties.items():
        if key in required or draw(st.booleans()):
            value[key] = draw(valid_values(child))
    if schema.get("additionalProperties", True) is not False:
        extra = draw(
            st.dictionaries(
                st.sampled_from([k for k in [*_KEYS, "extra"] if k not in properties]),
                json_values(4),
                max_size=2,
            )
        )
        value.update(extra)
    return value


def invalid_values(schema: Any) -> st.SearchStrategy[Any]:
    """JSON values that violate ``schema``, built by breaking one of its constraints.

    Kinds of break: a value of another type, a scalar outside ``enum``/``const``, a missing
    required property, an undeclared property under ``additionalProperties: false``, and a
    violating property value or array item (recursively). A schema that accepts everything
    (``{}``) yields nothing. At a ``oneOf`` node the candidates (a break of some branch, or a
    value of one branch) are kept only if they match no branch or several.
    """
    if type(schema) is not dict:
        return st.nothing()
    if "oneOf" in schema:
        branches = schema["oneOf"]
        candidates = st.one_of(
            [invalid_values(branch) for branch in branches]
            + [valid_values(branch) for branch in branches]
        )
        return candidates.filter(
            lambda value: sum(_matches(branch, value) for branch in branches) != 1
        )
    type_name = schema.get("type")
    if type_name is None:
        return st.nothing()
    wrong = _WRONG_TYPE.get(type_name)
    if wrong is None:
        return st.nothing()
    options: list[st.SearchStrategy[Any]] = [wrong]
    if type_name in _OF_TYPE and ("enum" in schema or "const" in schema):
        allowed = list(schema.get("enum", []))
        if "const" in schema:
            allowed.append(schema["const"])
        enum = schema.get("enum")
        const_present = "const" in schema

        def outside(value: Any) -> bool:
            in_enum = enum is None or any(_same(value, member) for member in enum)
            is_const = not const_present or _same(value, schema["const"])
            return not (in_enum and is_const)

        options.append(st.one_of(_OF_TYPE[type_name], st.sampled_from(allowed)).filter(outside))
    if type_name == "array" and "items" in schema and not invalid_values(schema["items"]).is_empty:
        options.append(_array_with_bad_item(schema["items"]))
    if type_name == "object":
        options.extend(_object_breaks(schema))
    return st.one_of(options)


@st.composite
def _array_with_bad_item(draw: st.DrawFn, items: Any) -> list[Any]:
    bad = draw(st.lists(invalid_values(items), min_size=1, max_size=2))
    good = draw(st.lists(valid_values(items), max_size=2))
    position = draw(st.integers(0, len(good)))
    return [*good[:position], *bad, *good[position:]]


def _object_breaks(schema: dict[str, Any]) -> list[st.SearchStrategy[Any]]:
    properties: dict[str, Any] = schema.get("properties", {})
    required: list[str] = list(schema.get("required", []))
    breaks: list[st.SearchStrategy[Any]] = []

    @st.composite
    def missing(draw: st.DrawFn) -> dict[str, Any]:
        value = draw(_valid_objects(schema))
        key = draw(st.sampled_from(required))
        value.pop(key, None)
        return value

    @st.composite
    def extra(draw: st.DrawFn) -> dict[str, Any]:
        value = draw(_valid_objects(schema))
        key = draw(st.sampled_from([k for k in [*_KEYS, "extra"] if k not in properties]))
        value[key] = draw(json_values(4))
        return value

    @st.composite
    def bad_properties(draw: st.DrawFn) -> dict[str, Any]:
        # One or several properties broken at once (several violations to report).
        value = draw(_valid_objects(schema))
        keys = draw(st.lists(st.sampled_from(breakable), min_size=1, unique=True))
        for key in keys:
            value[key] = draw(invalid_values(properties[key]))
        return value

    if required:
        breaks.append(missing())
    if schema.get("additionalProperties", True) is False:
        breaks.append(extra())
    breakable = sorted(
        key for key, child in properties.items() if not invalid_values(child).is_empty
    )
    if breakable:
        breaks.append(bad_properties())
    return breaks


# ---------------------------------------------------------------------------------------------
# Raw argument text
# ---------------------------------------------------------------------------------------------

ArgumentKind = Literal["valid", "invalid-json", "not-an-object", "wrong-type", "missing", "extra"]
#: The kinds of :class:`ArgumentText`; every kind but ``valid`` and ``extra`` fails validation.
ARGUMENT_KINDS: Final[tuple[ArgumentKind, ...]] = (
    "valid",
    "invalid-json",
    "not-an-object",
    "wrong-type",
    "missing",
    "extra",
)


@attrs.frozen
class ArgumentText:
    """Raw argument text for a tool, and how it was made.

    Attributes:
        kind: ``valid`` (satisfies the parameters), ``invalid-json`` (not JSON: parses to the raw
            string), ``not-an-object`` (JSON, but not an object), ``wrong-type`` (a declared
            parameter of the wrong type or outside its enum), ``missing`` (a required parameter
            left out), ``extra`` (valid plus an undeclared key: the root is open, so still valid).
        text: The text, as the model would write it.
    """

    kind: ArgumentKind
    text: str


_BROKEN_JSON: Final = st.sampled_from(['{"a":', "{a: 1}", "[1,", "{'x': 1}", "nope", '{"a": NaN}'])


def argument_texts(
    parameters: Any, kinds: Sequence[ArgumentKind] = ARGUMENT_KINDS
) -> st.SearchStrategy[ArgumentText]:
    """Raw argument text for a tool whose author parameter map is ``parameters``.

    Args:
        parameters: The tool's ``parameters`` (the DSL of ``define_tool``).
        kinds: The kinds to draw from (a kind the parameters cannot produce, e.g. ``missing``
            without a required parameter, is left out).
    """
    schema = parameter_schema_spec_to_json_schema(parameters)
    properties: dict[str, Any] = schema.get("properties", {})
    required: list[str] = list(schema.get("required", []))
    options: list[st.SearchStrategy[ArgumentText]] = []

    def text(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    def made(kind: ArgumentKind, values: st.SearchStrategy[Any]) -> st.SearchStrategy[ArgumentText]:
        return values.map(lambda value: ArgumentText(kind, text(value)))

    if "valid" in kinds:
        options.append(made("valid", valid_values(schema)))
    if "invalid-json" in kinds:
        options.append(_BROKEN_JSON.map(lambda raw: ArgumentText("invalid-json", raw)))
    if "not-an-object" in kinds:
        options.append(
            made("not-an-object", st.one_of(json_scalars(), st.lists(json_scalars(), max_size=2)))
        )
    breakable = {key: child for key, child in properties.items() if "type" in child}
    if "wrong-type" in kinds and breakable:

        @st.composite
        def wrong(draw: st.DrawFn) -> Any:
            value = draw(valid_values(schema))
            keys = draw(st.lists(st.sampled_from(sorted(breakable)), min_size=1, unique=True))
            for key in keys:
                value[key] = draw(invalid_values(breakable[key]))
            return value

        options.append(made("wrong-type", wrong()))
    if "missing" in kinds and required:

        @st.composite
        def missing(draw: st.DrawFn) -> Any:
            value = draw(valid_values(schema))
            for key in draw(st.lists(st.sampled_from(required), min_size=1, unique=True)):
                value.pop(key, None)
            return value

        options.append(made("missing", missing()))
    if "extra" in kinds:

        @st.composite
        def extra(draw: st.DrawFn) -> Any:
            value = draw(valid_values(schema))
            key = draw(st.sampled_from(["zzz", "extra", "other"]).filter(lambda k: k not in value))
            value[key] = draw(json_scalars())
            return value

        options.append(made("extra", extra()))
    return st.one_of(options) if options else st.nothing()


# ---------------------------------------------------------------------------------------------
# Scheduling scenarios
# ---------------------------------------------------------------------------------------------

_CLASSIFIERS: Final = ["always", "never", "absent", "raises", "truthy"]
_TOOL_NAMES: Final = ["read", "write", "search"]


@st.composite
def _classifier(draw: st.DrawFn) -> Any:
    # Mostly parallel, so that windows fill up and exclusive calls meet running bodies.
    return draw(
        st.sampled_from(["always"] * 5 + ["never"] * 2 + [*_CLASSIFIERS[2:], {"argument": "p"}])
    )


@st.composite
def _tool(
    draw: st.DrawFn, name: str, timeouts: bool, parameters: st.SearchStrategy[dict[str, Any]]
) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "parallel": draw(_classifier())}
    if draw(st.booleans()):
        tool["parameters"] = draw(parameters)
    if timeouts and draw(st.integers(0, 4)) == 4:  # shrinks to off
        tool["timeoutMs"] = draw(st.integers(1, 60))
    return tool


def scheduling_scenarios(
    *,
    min_calls: int = 1,
    max_calls: int = 5,
    caps: st.SearchStrategy[Any] | None = None,
    abort: bool = True,
    failures: bool = True,
    registry_changes: bool = True,
    hooks: bool = True,
    timeouts: bool = True,
    arguments: st.SearchStrategy[str | None] | None = None,
    parameters: st.SearchStrategy[dict[str, Any]] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """Scheduling scenarios (the ``scenario`` object of ``spec/FORMAT.md``), as decoded JSON.

    Three tools (``read``, ``write``, ``search``) with random classifiers; calls with random body
    durations and outcomes. Every knob turns a feature off (``False``) or bounds it, or replaces
    what is drawn.

    Args:
        min_calls: Fewest calls in the step.
        max_calls: Most calls in the step (the size knob).
        caps: The ``cap`` values to draw (default: absent, or 1 to 4, small ones more often).
        abort: Sometimes set ``abortAtMs``.
        failures: Sometimes add a ``schedulerFailure``.
        registry_changes: Sometimes give a call ``onCommit`` changes.
        hooks: Sometimes give a call a ``pre``, ``guard``, ``wrapper`` or ``post``.
        timeouts: Sometimes give a tool ``timeoutMs``.
        arguments: The argument texts of the calls (``None`` drawn: the key is left out;
            default: a few texts about the parameter ``p``, one of them not JSON).
        parameters: The parameter maps a tool may declare (default: ``p``, a boolean).
    """
    return _scenarios(
        min_calls,
        max_calls,
        st.one_of(st.none(), st.integers(1, 3), st.integers(1, 4)) if caps is None else caps,
        abort,
        failures,
        registry_changes,
        hooks,
        timeouts,
        st.sampled_from([None, '{"p": true}', '{"p": false}', '{"p": 1}', "{"])
        if arguments is None
        else arguments,
        st.just({"p": {"type": "boolean"}}) if parameters is None else parameters,
    )


@st.composite
def _body(draw: st.DrawFn, can_hang: bool) -> dict[str, Any]:
    body: dict[str, Any] = {}
    ms = draw(st.integers(0, 40))
    if ms:
        body["ms"] = ms
    outcome = draw(st.sampled_from(["returns", "returns", "returns", "throws", "error", "hangs"]))
    if outcome == "throws":
        body["throws"] = "boom"
    elif outcome == "error":
        body["harnessError"] = {"code": "E_TOOL", "message": "bad"}
    elif outcome == "hangs" and can_hang:
        return {"hangs": True}
    elif draw(st.booleans()):
        body["returns"] = draw(json_scalars().filter(lambda v: type(v) is not float))
    return body


@st.composite
def _hook(draw: st.DrawFn, call: dict[str, Any]) -> None:
    kind = draw(st.sampled_from(["pre", "guard", "wrapper", "post"]))
    ms = draw(st.integers(0, 20))
    if kind == "pre":
        decision = draw(st.sampled_from(["allow", "deny", "ask", "raise"]))
        pre: dict[str, Any] = {"ms": ms, "decision": decision}
        if decision in ("deny", "raise"):
            pre["reason"] = "no"
        if decision == "ask":
            pre["approval"] = draw(
                st.sampled_from(["allowed-once", "rejected", "cancelled", "unavailable"])
            )
        call["pre"] = pre
    elif kind == "guard":
        call["guard"] = "guarded"
    elif kind == "wrapper":
        call["wrapper"] = draw(
            st.sampled_from(
                [
                    {"beforeMs": ms, "afterMs": 1},
                    {"beforeMs": ms, "raise": "wrapped"},
                    {"beforeMs": ms, "returns": "short"},
                ]
            )
        )
    else:
        call["post"] = draw(
            st.sampled_from(
                [
                    {"ms": ms, "decision": "accept", "value": "changed"},
                    {"ms": ms, "decision": "accept", "contexts": ["note"]},
                    {"ms": ms, "decision": "block", "feedback": "blocked"},
                    {"ms": ms, "decision": "raise", "message": "post failed"},
                ]
            )
        )


@st.composite
def _scenarios(
    draw: st.DrawFn,
    min_calls: int,
    max_calls: int,
    caps: st.SearchStrategy[Any],
    abort: bool,
    failures: bool,
    registry_changes: bool,
    hooks: bool,
    timeouts: bool,
    argument_texts: st.SearchStrategy[str | None],
    parameters: st.SearchStrategy[dict[str, Any]],
) -> dict[str, Any]:
    tools = [draw(_tool(name, timeouts, parameters)) for name in _TOOL_NAMES]
    scenario: dict[str, Any] = {"tools": tools}
    cap = draw(caps)
    if cap is not None:
        scenario["cap"] = cap
    abort_at = draw(st.none() | st.integers(0, 60)) if abort else None
    if abort_at is not None:
        scenario["abortAtMs"] = abort_at
    count = draw(st.integers(min_calls, max_calls))
    calls = []
    for index in range(count):
        name = draw(st.sampled_from([*_TOOL_NAMES, "missing"]))
        call: dict[str, Any] = {"id": f"c{index}", "name": name}
        arguments = draw(argument_texts)
        if arguments is not None:
            call["arguments"] = arguments
        body = draw(_body(abort_at is not None))
        if body:
            call["body"] = body
        if hooks and draw(st.integers(0, 3)) == 3:
            draw(_hook(call))
        if registry_changes and draw(st.integers(0, 3)) == 3:
            target = draw(st.sampled_from(_TOOL_NAMES))
            change = draw(st.sampled_from(["setParallel", "remove", "add"]))
            if change == "setParallel":
                call["onCommit"] = [
                    {"op": "setParallel", "tool": target, "parallel": draw(_classifier())}
                ]
            elif change == "remove":
                call["onCommit"] = [{"op": "remove", "tool": target}]
            else:
                call["onCommit"] = [
                    {"op": "add", "tool": {"name": target, "parallel": draw(_classifier())}}
                ]
        calls.append(call)
    scenario["calls"] = calls
    if failures and calls and draw(st.integers(0, 2)) == 2:
        phase = draw(st.sampled_from(["prepare", "dispatch", "commit"]))
        scenario["schedulerFailure"] = {
            "call": draw(st.sampled_from([call["id"] for call in calls])),
            "phase": phase,
            # Mostly after some time: a failure after 0 ms beside a later start is a tie.
            "ms": 0
            if phase == "commit" or draw(st.integers(0, 3)) == 3
            else draw(st.integers(1, 30)),
        }
    return scenario
