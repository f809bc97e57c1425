"""Scheduling scenarios timed so that one event lands inside one stage of a call (issue 33).

The general scenarios (:mod:`.fuzz_requests`) draw an abort time, hooks and failures
independently; blind mutants of upstream's runtime and pool hid where two of them must meet: an
abort while an execute wrapper or a post-execute hook runs, a throwing wrapper followed by a
post-execute decision, a step already aborted when it starts, an abort after some calls
settled and committed, a scheduler failure while a later call's pre-execute hook awaits, a
parallel group where only some results conclude the turn, a window past 2**53. These flavours
draw the stages first and then the event's time *strictly inside* the chosen stage, so the
event is never at an instant where another timer expires (no tie, ``spec/FORMAT.md`` rule 4):

* **an abort inside a stage of one call** (:func:`_abort_in_stage`): the call's pre-execute
  hook, its wrapper before and after ``next()``, its body, its post-execute hook, with a
  wrapper that passes through, throws or returns its own success, a body that returns, throws
  or concludes, a post-execute decision with contexts; later calls beside it;
* **a throwing wrapper followed by a post-execute decision**, aborted or not (the same);
* in both, features drawn independently of each other rather than per flavour: a guard beside
  any pre-execute decision (so an approved ``ask`` that still meets the guard), and a body that
  returns objects with own keys JavaScript treats specially (``__proto__``, ``constructor``,
  ``toString``; :data:`RETURNED`), whatever the wrapper and the post-execute hook;
* **an abort between serial calls** (:func:`_serial_abort`): a window of one (or exclusive
  tools), the abort inside the k-th body or at ``0`` (already aborted);
* **a parallel group where only some results conclude** (:func:`_concluding_group`);
* **a scheduler failure while other calls' pre-execute hooks await**
  (:func:`_failure_while_hooks_await`);
* **a huge cap** (:func:`_huge_cap`): integral numbers past 2**53 that are doubles JavaScript
  reads and prints alike (``2**53``, ``2**54``, ``10**22``, ``1e30``, ``1e300``): a window as
  wide as any, never rejected.

Every number drawn is one JavaScript holds exactly.
"""

from __future__ import annotations

from typing import Any, Final

from hypothesis import strategies as st

__all__ = ["HUGE_CAPS", "RETURNED", "stage_scenarios"]

#: Integral caps past 2**53 that JavaScript reads and prints as the reference does: each is a
#: double, and its text is the double's (``1e30`` travels as ``1e+30``, a float to both).
HUGE_CAPS: Final = (2**53, 2**53 + 2, 2**54, 10**22, 1e21, 1e30, 1e300)

#: A stage of a call: its kind, when it starts and when it ends.
_Stage = tuple[str, int, int]

_TOOLS: Final = [{"name": "read", "parallel": "always"}, {"name": "write", "parallel": "never"}]

_POST: Final[st.SearchStrategy[dict[str, Any]]] = st.sampled_from(
    [
        {"decision": "accept"},
        {"decision": "accept", "value": "changed", "contexts": ["note"]},
        {"decision": "accept", "content": "replaced"},
        {"decision": "block", "feedback": "blocked", "contexts": ["why"]},
        {"decision": "block", "feedback": "blocked"},
        {"decision": "raise", "message": "post failed"},
    ]
)
_PRE: Final[st.SearchStrategy[dict[str, Any]]] = st.sampled_from(
    [
        {"decision": "allow"},
        {"decision": "ask"},
        {"decision": "ask", "approval": "allowed-once"},
        {"decision": "ask", "approval": "rejected"},
        {"decision": "deny", "reason": "denied"},
    ]
)

#: Values a body returns: plain ones, and objects with own keys JavaScript treats specially
#: (``__proto__`` as ``JSON.parse`` creates it, ``constructor``, ``toString``), which a port must
#: copy as own members, not by assignment through the prototype.
RETURNED: Final[tuple[Any, ...]] = (
    "ok",
    {"k": 2},
    {"__proto__": 1, "k": 2},
    {"k": [{"__proto__": None}], "constructor": "c"},
    {"toString": 1, "__proto__": {"a": 1}},
)


@st.composite
def _inside(draw: st.DrawFn, start: int, end: int) -> int:
    """A time strictly between ``start`` and ``end`` (which are at least 2 apart)."""
    return draw(st.integers(start + 1, end - 1))


@st.composite
def _staged_call(draw: st.DrawFn, call_id: str) -> tuple[dict[str, Any], list[_Stage]]:
    """One ``read`` call with timed stages, and the stages' ``(kind, start, end)`` when it
    starts at 0 alone: ``pre`` (pre-execute hook), ``before`` (the wrapper before ``next()``),
    ``body``, ``after`` (the wrapper after it), ``post`` (post-execute hook)."""
    call: dict[str, Any] = {"id": call_id, "name": "read"}
    stages: list[_Stage] = []
    now = 0
    if draw(st.integers(0, 2)) == 0:
        pre = {**draw(_PRE), "ms": draw(st.integers(2, 12))}
        length = pre["ms"]
        if pre["decision"] == "ask":
            pre["approvalMs"] = draw(st.integers(0, 8))
            length += pre["approvalMs"]
        call["pre"] = pre
        stages.append(("pre", now, now + length))
        now += length
    # A guard, orthogonal to the pre-execute decision (an approved ``ask`` still meets it).
    if draw(st.integers(0, 2)) == 0:
        call["guard"] = "g"
    wrapper = draw(st.sampled_from(["none", "through", "through", "raise", "returns"]))
    before = draw(st.integers(2, 12))
    body_runs = wrapper in ("none", "through")
    if wrapper != "none":
        stages.append(("before", now, now + before))
        now += before
    if wrapper == "through":
        after = draw(st.integers(2, 12))
        call["wrapper"] = {"beforeMs": before, "afterMs": after}
    elif wrapper == "raise":
        call["wrapper"] = {"beforeMs": before, "raise": "wrapped"}
    elif wrapper == "returns":
        call["wrapper"] = {"beforeMs": before, "returns": "w"}
    body: dict[str, Any] = {"ms": draw(st.integers(2, 15))}
    outcome = draw(st.sampled_from(["returns", "returns", "throws", "error", "concludes"]))
    if outcome == "throws":
        body["throws"] = "boom"
    elif outcome == "error":
        body["harnessError"] = {"code": "E_TOOL", "message": "bad"}
    elif outcome == "concludes":
        body["concludeTurn"] = True
    elif draw(st.booleans()):
        body["returns"] = draw(st.sampled_from(RETURNED))
    call["body"] = body
    if body_runs:
        stages.append(("body", now, now + body["ms"]))
        now += body["ms"]
    if wrapper == "through":
        stages.append(("after", now, now + call["wrapper"]["afterMs"]))
        now += call["wrapper"]["afterMs"]
    # A throwing wrapper with a post-execute decision is drawn often: the decision must not run.
    if draw(st.integers(0, 3)) > 0:
        call["post"] = {**draw(_POST), "ms": draw(st.integers(2, 12))}
        stages.append(("post", now, now + call["post"]["ms"]))
    return call, stages


@st.composite
def _others(draw: st.DrawFn, first: int) -> list[dict[str, Any]]:
    """Zero to two plain calls after the staged one (a parallel ``read`` or an exclusive
    ``write``): what an abort leaves of calls not yet started, or still running."""
    return [
        {
            "id": f"c{index}",
            "name": draw(st.sampled_from(["read", "write"])),
            "body": {"ms": draw(st.integers(1, 30))},
        }
        for index in range(first, first + draw(st.sampled_from([0, 0, 1, 2])))
    ]


@st.composite
def _abort_in_stage(draw: st.DrawFn) -> dict[str, Any]:
    call, stages = draw(_staged_call("c0"))
    scenario: dict[str, Any] = {"tools": _TOOLS, "calls": [call, *draw(_others(1))]}
    # Mostly aborted inside one stage, and mostly one of the hooks' (an abort inside a body or
    # a pre-execute hook is what the general scenarios draw already).
    hooks = [stage for stage in stages if stage[0] in ("before", "after", "post")]
    if stages and draw(st.integers(0, 5)) > 0:
        prefer_hooks = draw(st.integers(0, 3)) > 0
        pool = hooks if hooks and prefer_hooks else stages
        _, start, end = draw(st.sampled_from(pool))
        scenario["abortAtMs"] = draw(_inside(start, end))
    elif draw(st.booleans()):
        scenario["abortAtMs"] = 0
    if call.get("pre", {}).get("decision") == "ask" and draw(st.integers(0, 3)) == 0:
        scenario["approval"] = False
    return scenario


@st.composite
def _serial_abort(draw: st.DrawFn) -> dict[str, Any]:
    """Two to four calls one after the other (a window of one, or an exclusive tool), the abort
    inside the k-th body (after k settles and commits) or at 0 (the step starts aborted)."""
    exclusive = draw(st.booleans())
    count = draw(st.integers(2, 4))
    durations = [draw(st.integers(2, 15)) for _ in range(count)]
    scenario: dict[str, Any] = {
        "tools": [{"name": "a", "parallel": "never" if exclusive else "always"}],
        "calls": [
            {"id": f"c{index}", "name": "a", "body": {"ms": ms}}
            for index, ms in enumerate(durations)
        ],
    }
    if not exclusive:
        scenario["cap"] = 1
    if draw(st.integers(0, 4)) == 0:
        scenario["abortAtMs"] = 0
    else:
        k = draw(st.integers(0, count - 1))
        start = sum(durations[:k])
        scenario["abortAtMs"] = draw(_inside(start, start + durations[k]))
    return scenario


@st.composite
def _concluding_group(draw: st.DrawFn) -> dict[str, Any]:
    """Two to four parallel calls of distinct durations, some (not all) concluding the turn,
    then maybe an exclusive call: the group concludes when any of its results does."""
    count = draw(st.integers(2, 4))
    durations = draw(st.lists(st.integers(1, 40), min_size=count, max_size=count, unique=True))
    concluding = draw(
        st.sets(st.integers(0, count - 1), min_size=1, max_size=count - 1)
        if count > 1
        else st.just({0})
    )
    calls: list[dict[str, Any]] = []
    for index, ms in enumerate(durations):
        body: dict[str, Any] = {"ms": ms}
        if index in concluding:
            body["concludeTurn"] = True
        elif draw(st.integers(0, 3)) == 0:
            body["throws"] = "boom"
        calls.append({"id": f"c{index}", "name": "read", "body": body})
    if draw(st.booleans()):
        calls.append({"id": f"c{count}", "name": "write", "body": {"ms": 5}})
    scenario: dict[str, Any] = {"tools": _TOOLS, "calls": calls}
    cap = draw(st.sampled_from([None, None, 2, 3]))
    if cap is not None:
        scenario["cap"] = cap
    return scenario


@st.composite
def _failure_while_hooks_await(draw: st.DrawFn) -> dict[str, Any]:
    """Two or three parallel calls; one fails (``dispatch`` or ``prepare``) at 1-8 ms while the
    others' pre-execute hooks (or approvals) are still awaited, or have just returned: a call
    prepared after the failure must never start its body."""
    count = draw(st.integers(2, 3))
    failing = draw(st.integers(0, count - 1))
    failure_ms = draw(st.integers(1, 8))
    calls: list[dict[str, Any]] = []
    for index in range(count):
        call: dict[str, Any] = {"id": f"c{index}", "name": "read"}
        call["body"] = {"ms": draw(st.integers(1, 20))}
        if index != failing:
            pre: dict[str, Any] = {"decision": draw(st.sampled_from(["allow", "ask"]))}
            # Strictly before or after the failure: never at its instant (a tie).
            pre["ms"] = draw(
                st.one_of(
                    st.integers(failure_ms + 1, failure_ms + 12), st.integers(0, failure_ms - 1)
                )
            )
            if pre["decision"] == "ask":
                pre["approvalMs"] = draw(st.integers(0, 6))
            call["pre"] = pre
        calls.append(call)
    scenario: dict[str, Any] = {
        "tools": [{"name": "read", "parallel": "always"}],
        "calls": calls,
        "schedulerFailure": {
            "call": f"c{failing}",
            "phase": draw(st.sampled_from(["dispatch", "dispatch", "prepare"])),
            "ms": failure_ms,
        },
    }
    cap = draw(st.sampled_from([None, 2, 3]))
    if cap is not None:
        scenario["cap"] = cap
    return scenario


@st.composite
def _huge_cap(draw: st.DrawFn) -> dict[str, Any]:
    """A step of one to three calls under a cap past 2**53 (an integer: a window as wide as
    any)."""
    count = draw(st.integers(1, 3))
    scenario: dict[str, Any] = {
        "tools": _TOOLS,
        "cap": draw(st.sampled_from(HUGE_CAPS)),
        "calls": [
            {
                "id": f"c{index}",
                "name": draw(st.sampled_from(["read", "write"])),
                "body": {"ms": draw(st.integers(1, 20))},
            }
            for index in range(count)
        ],
    }
    return scenario


def stage_scenarios() -> st.SearchStrategy[dict[str, Any]]:
    """Scenarios of the flavours above (an abort inside a stage drawn four times as often as
    each other flavour: a call has five kinds of stage, and three kinds of wrapper)."""
    return st.one_of(
        _abort_in_stage(),
        _abort_in_stage(),
        _abort_in_stage(),
        _abort_in_stage(),
        _serial_abort(),
        _concluding_group(),
        _failure_while_hooks_await(),
        _huge_cap(),
    )
