"""Hypothesis strategies of :mod:`trio_harness.testing` and the conformance kit (need hypothesis).

This module imports hypothesis; the room's interface loads it only on demand, so the rest of
the library never needs hypothesis. Every strategy draws plain JSON data (what travels to a port):

* :func:`json_values`, :func:`subset_schemas`, :func:`parameter_maps`,
  :func:`valid_values` / :func:`invalid_values` (values built *from* a schema, never filtered)
  and :func:`argument_texts` (the raw argument text a model writes for a tool, labelled by
  kind) live in :mod:`.json_leaves`, :mod:`.schema_strategies`, :mod:`.values` and
  :mod:`.raw_arguments` (built by :mod:`.solver`, with the knobs of :mod:`.value_knobs`) and
  are re-exported here;
* :func:`scheduling_scenarios`: scenarios in the ``spec/FORMAT.md`` format;

The requests ``conformance fuzz`` sends, with the edges a port gets wrong, are drawn by
``trio_harness._conformance.fuzz_requests`` from these.
"""

from __future__ import annotations

from typing import Any, Final

from hypothesis import strategies as st

from .json_leaves import json_scalars, json_values
from .raw_arguments import ARGUMENT_KINDS, ArgumentText, argument_texts
from .schema_strategies import parameter_maps, subset_schemas
from .values import invalid_values, valid_values

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
