"""The scheduling behaviours of upstream, and which of them a scenario exercises.

Each behaviour names a rule of ``spec/RULES.md`` (sections e, f and g: the pipeline, the
pool, argument parsing) and carries a predicate over a scenario and the reference's answer. Tags
are computed, never hand-written: a scenario is tagged with a behaviour only when its answer shows
the behaviour happening (a barrier that held, a window that was full, a result with that code).
``spec/COVERAGE.md`` lists behaviour → scenarios; the test suite fails when a behaviour has none.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

import attrs

from .._values import UNSET
from .answer_view import AnswerView
from .late_behaviours import failure_stops_prepared, removed_before_commit, wrapper_success_aborted
from .scenario_format import Scenario

__all__ = ["BEHAVIOURS", "Behaviour", "behaviours_of"]


@attrs.frozen
class Behaviour:
    """One scheduling behaviour: its id (``<section> <slug>``), what it says, its predicate."""

    id: str
    section: str
    summary: str
    applies: Callable[[AnswerView], bool]


def _barrier(view: AnswerView) -> bool:
    calls = view.s.calls
    for index, call in enumerate(calls):
        if view.static_parallel(index) or index == 0 or index == len(calls) - 1:
            continue
        mine = view.times[call.id]
        if mine["bodyStarted"] is None or mine["committed"] is None:
            continue
        before = [view.times[c.id] for c in calls[:index]]
        after = [view.times[c.id] for c in calls[index + 1 :]]
        if (
            any(view.static_parallel(i) for i in range(index))
            and any(view.static_parallel(i) for i in range(index + 1, len(calls)))
            and all(
                t["settled"] is not None and t["settled"] <= mine["bodyStarted"] for t in before
            )
            and all(t["called"] is None or t["called"] >= mine["committed"] for t in after)
            and view.overlap() >= 2
        ):
            return True
    return False


def _window(view: AnswerView) -> bool:
    cap = view.s.cap
    if type(cap) is not int or cap < 2 or "rejectedCap" in view.outcome:
        return False
    bodies = sum(1 for t in view.times.values() if t["bodyStarted"] is not None)
    return view.overlap() == cap and bodies > cap


def _model_order(view: AnswerView) -> bool:
    calls = view.s.calls
    for i, early in enumerate(calls):
        for late in calls[i + 1 :]:
            a, b = view.times[early.id], view.times[late.id]
            if (
                a["settled"] is not None
                and b["settled"] is not None
                and b["settled"] < a["settled"]
                and b["committed"] is not None
                and b["committed"] > b["settled"]
            ):
                return True
    return False


def _later_exclusive(view: AnswerView) -> bool:
    calls = view.s.calls
    return any(
        view.static_parallel(i - 1)
        and not view.static_parallel(i)
        and view.times[calls[i].id]["bodyStarted"] is not None
        and view.times[calls[i - 1].id]["settled"] is not None
        and view.times[calls[i].id]["bodyStarted"] >= view.times[calls[i - 1].id]["settled"]
        for i in range(1, len(calls))
    )


def _change(view: AnswerView, op: str) -> bool:
    return any(
        change.op == op and view.committed(call.id)
        for call in view.s.calls
        for change in call.on_commit
    )


def _invalid_json(view: AnswerView) -> bool:
    for call in view.s.calls:
        if call.name in view.tools and call.arguments:
            try:
                json.loads(call.arguments)
            except ValueError:
                if view.results.get(call.id, {}).get("code") == "INVALID_ARGS":
                    return True
    return False


def _ask_after_abort(view: AnswerView) -> bool:
    return view.aborted() and any(
        call.pre is not None
        and call.pre.decision == "ask"
        and call.pre.approval == "cancelled"
        and view.results.get(call.id, {}).get("code") == "ABORTED_BEFORE_DISPATCH"
        and view.times[call.id]["prepared"] is not None
        for call in view.s.calls
    )


def _abort_in_prepare(view: AnswerView) -> bool:
    return any(
        view.results.get(call.id, {}).get("code") == "ABORTED_BEFORE_DISPATCH"
        and view.times[call.id]["prepared"] is not None
        and (call.pre is None or call.pre.decision != "ask")
        for call in view.s.calls
    )


def _failure(phase: str) -> Callable[[AnswerView], bool]:
    def applies(view: AnswerView) -> bool:
        failure = view.s.failure
        return view.raised() and failure is not None and failure.phase == phase

    return applies


def _failure_waits(view: AnswerView) -> bool:
    if not view.raised():
        return False
    failed_at = view.outcome["failedAt"]
    return any(
        t["bodyStarted"] is not None
        and t["settled"] is not None
        and t["bodyStarted"] <= failed_at < t["settled"]
        for t in view.times.values()
    )


def _post_failure_rule(view: AnswerView) -> bool:
    return view.raised() and any(
        t["settled"] is not None and t["committed"] is None for t in view.times.values()
    )


def _conclude_continues(view: AnswerView) -> bool:
    calls = view.s.calls
    for index, call in enumerate(calls):
        if call.body.conclude_turn and view.committed(call.id):
            result = view.results.get(call.id, {})
            if not result.get("isError") and any(
                view.times[later.id]["bodyStarted"] is not None for later in calls[index + 1 :]
            ):
                return view.outcome.get("concluded") is True
    return False


def _body(outcome: str) -> Callable[[AnswerView], bool]:
    def applies(view: AnswerView) -> bool:
        return any(
            call.body.outcome == outcome and view.times[call.id]["settled"] is not None
            for call in view.s.calls
            if view.times[call.id]["bodyStarted"] is not None
        )

    return applies


def _wrapper(kind: str) -> Callable[[AnswerView], bool]:
    def applies(view: AnswerView) -> bool:
        return any(
            call.wrapper is not None and call.wrapper.kind == kind and view.committed(call.id)
            for call in view.s.calls
        )

    return applies


def _post(test: Callable[[Any], bool]) -> Callable[[AnswerView], bool]:
    def applies(view: AnswerView) -> bool:
        return any(
            call.post is not None and test(call.post) and view.committed(call.id)
            for call in view.s.calls
        )

    return applies


def _classifier(kind: str) -> Callable[[AnswerView], bool]:
    def applies(view: AnswerView) -> bool:
        return len(view.s.calls) >= 2 and any(
            view.tools.get(call.name) is not None
            and view.tools[call.name].parallel.startswith(kind)
            and view.times[call.id]["bodyStarted"] is not None
            for call in view.s.calls
        )

    return applies


def _sequential_prepare(view: AnswerView) -> bool:
    return view.overlap() >= 2 and any(
        call.pre is not None and call.pre.ms > 0 and view.committed(call.id)
        for call in view.s.calls[1:]
    )


def _default_cap(view: AnswerView) -> bool:
    return (
        view.s.cap == 10
        and view.overlap() == 10
        and sum(1 for t in view.times.values() if t["bodyStarted"] is not None) > 10
    )


def _non_boolean_exclusive(view: AnswerView) -> bool:
    for call in view.s.calls:
        tool = view.tools.get(call.name)
        args = view.arguments(call)
        if tool is None or not tool.parallel.startswith("argument:") or type(args) is not dict:
            continue
        value = args.get(tool.parallel[9:])
        if type(value) is not bool and value and view.times[call.id]["bodyStarted"] is not None:
            return len(view.s.calls) >= 2
    return False


def _structured_arguments(view: AnswerView) -> bool:
    return any(
        call.name in view.tools
        and any(word in json.dumps(view.tools[call.name].parameters) for word in _STRUCTURED)
        and view.results.get(call.id, {}).get("code") == "INVALID_ARGS"
        for call in view.s.calls
    )


def _partial_json(text: str) -> bool:
    """Argument text that is not JSON although JSON opens it (trailing text), or JSON behind a
    character that only looks like space (U+00A0, a byte-order mark, U+2028)."""
    if _args_text_is_json(text) or not text:
        return False
    if text[0] in "\u00a0\ufeff\u2028":
        return True
    try:
        json.JSONDecoder().raw_decode(text.lstrip(" \t\n\r"))
    except ValueError:
        return False
    return True


def _args_text_is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _argument_text(test: Callable[[str], bool]) -> Callable[[AnswerView], bool]:
    def applies(view: AnswerView) -> bool:
        return any(
            test(call.arguments) and view.results.get(call.id, {}).get("code") == "INVALID_ARGS"
            for call in view.s.calls
        )

    return applies


_STRUCTURED: Final = ('"items"', '"properties"', '"oneOf"', '"enum"')


def _B(id: str, summary: str, applies: Callable[[AnswerView], bool]) -> Behaviour:
    return Behaviour(id, id.split(" ", 1)[0], summary, applies)


#: Every scheduling behaviour the kit covers, in document order.
BEHAVIOURS: Final[tuple[Behaviour, ...]] = (
    _B(
        "e.1 distinct-executions",
        "every call of a step is its own execution (own id, own result)",
        lambda v: len(v.results) >= 2,
    ),
    _B(
        "e.2 parallel-only-exact-true",
        "a classifier returning exactly true lets calls run together",
        lambda v: v.overlap() >= 2,
    ),
    _B(
        "e.2 no-classifier-exclusive",
        "a tool without a classifier is exclusive",
        _classifier("absent"),
    ),
    _B("e.2 never-exclusive", "a classifier returning false is exclusive", _classifier("never")),
    _B(
        "e.2 truthy-exclusive",
        "a classifier returning a non-true truthy value is exclusive",
        _classifier("truthy"),
    ),
    _B(
        "e.2 classifier-raises-exclusive",
        "a classifier that raises makes the call exclusive (not a failure)",
        _classifier("raises"),
    ),
    _B(
        "e.2 classifier-reads-arguments",
        "the classifier sees the call's parsed arguments",
        _classifier("argument:"),
    ),
    _B(
        "e.2 non-boolean-exclusive",
        'a classifier returning a truthy value that is not true (1, 1.0, "true") is exclusive',
        _non_boolean_exclusive,
    ),
    _B(
        "e.2 unknown-tool-exclusive",
        "a call to an unregistered tool is exclusive and fails with UNKNOWN_TOOL",
        lambda v: v.has_code("UNKNOWN_TOOL"),
    ),
    _B(
        "e.3 phases",
        "prepare, then dispatch, then finalize or finish, per call",
        lambda v: any(
            t["prepared"] is not None and t["settled"] is not None for t in v.times.values()
        ),
    ),
    _B(
        "e.4 invalid-arguments",
        "arguments failing the schema give INVALID_ARGS with every violation",
        lambda v: v.has_code("INVALID_ARGS"),
    ),
    _B(
        "e.4 structured-arguments",
        "arguments are checked against arrays, objects, oneOf and enums of the parameters",
        _structured_arguments,
    ),
    _B(
        "e.4 invalid-json-arguments",
        "argument text that is not JSON reaches the tool as a string: INVALID_ARGS",
        _invalid_json,
    ),
    _B(
        "e.4 pre-aborted",
        "a step aborted before it starts records only synthetic pairs",
        lambda v: v.s.abort_at_ms == 0 and v.aborted() and bool(v.s.calls),
    ),
    _B(
        "e.4 pre-execute-deny",
        "a pre-execute deny is a failure with the reason",
        lambda v: v.pre("deny"),
    ),
    _B(
        "e.4 pre-execute-raise",
        "a raising pre-execute hook is an error result, not a failure of the step",
        lambda v: v.pre("raise"),
    ),
    _B(
        "e.4 ask-approved",
        "ask answered allowed-once runs the call",
        lambda v: v.s.approval_service and v.pre("ask", "allowed-once"),
    ),
    _B(
        "e.4 ask-rejected",
        "ask answered rejected denies the call",
        lambda v: v.s.approval_service and v.pre("ask", "rejected"),
    ),
    _B(
        "e.4 ask-cancelled",
        "ask answered cancelled denies the call",
        lambda v: v.s.approval_service and v.pre("ask", "cancelled"),
    ),
    _B(
        "e.4 ask-unavailable",
        "ask answered unavailable denies the call",
        lambda v: v.s.approval_service and v.pre("ask", "unavailable"),
    ),
    _B(
        "e.4 ask-without-service",
        "ask with no approval service mounted is a denial",
        lambda v: not v.s.approval_service and v.pre("ask"),
    ),
    _B(
        "e.4 ask-cancelled-after-abort",
        "approval cancelled on an aborted step gives ABORTED_BEFORE_DISPATCH",
        _ask_after_abort,
    ),
    _B(
        "e.4 guard-deny",
        "a guard reason denies the call after the pre-execute waterfall",
        lambda v: any(c.guard is not None and v.committed(c.id) for c in v.s.calls),
    ),
    _B(
        "e.4 abort-during-prepare",
        "an abort seen at the end of prepare gives ABORTED_BEFORE_DISPATCH",
        _abort_in_prepare,
    ),
    _B(
        "e.5 body-value",
        "a body's value becomes a success rendered by the tool",
        lambda v: any(not r["isError"] for r in v.results.values()),
    ),
    _B("e.5 body-tool-error", "a body that raises gives an error result", _body("throws")),
    _B(
        "e.5 body-harness-error",
        "a body raising a HarnessError keeps its name and code",
        _body("harnessError"),
    ),
    _B(
        "e.5 invalid-output",
        "a value failing the output schema gives INVALID_TOOL_OUTPUT",
        lambda v: v.has_code("INVALID_TOOL_OUTPUT"),
    ),
    _B(
        "e.5 body-aborted",
        "an abort cancels a running body: ABORTED",
        lambda v: v.has_code("ABORTED"),
    ),
    _B(
        "e.5 timeout",
        "a body past its tool's timeoutMs gives TOOL_TIMEOUT",
        lambda v: v.has_code("TOOL_TIMEOUT"),
    ),
    _B("e.5 wrapper-passthrough", "an execute wrapper around the body", _wrapper("passthrough")),
    _B("e.5 wrapper-raises", "a raising execute wrapper gives an error result", _wrapper("raise")),
    _B(
        "e.5 wrapper-authored-success",
        "a wrapper-authored success is re-validated and re-rendered",
        _wrapper("returns"),
    ),
    _B(
        "e.5 non-lossless-output",
        "a value holding -0 (from the body, a wrapper or post-execute) gives INVALID_TOOL_OUTPUT "
        "(value is not lossless JSON)",
        lambda v: any(r["text"].endswith("value is not lossless JSON") for r in v.results.values()),
    ),
    _B(
        "e.5 tool-removed-before-commit",
        "a wrapper-authored success or a replacement value of a call whose tool an earlier "
        "commit removed gives UNKNOWN_TOOL (the tool is resolved again)",
        removed_before_commit,
    ),
    _B(
        "e.6 accept-value",
        "post-execute accept with a replacement value",
        _post(lambda p: p.decision == "accept" and p.value is not UNSET),
    ),
    _B(
        "e.6 accept-content",
        "post-execute accept with replacement content",
        _post(lambda p: p.decision == "accept" and p.content is not None),
    ),
    _B(
        "e.6 accept-value-and-content",
        "a post-execute accept replacing both the value and the content is an error result",
        _post(lambda p: p.decision == "accept" and p.content is not None and p.value is not UNSET),
    ),
    _B(
        "e.6 block",
        "post-execute block turns the result into a failure",
        _post(lambda p: p.decision == "block"),
    ),
    _B(
        "e.6 post-raise",
        "a raising post-execute hook gives an error result",
        _post(lambda p: p.decision == "raise"),
    ),
    _B(
        "e.6 contexts",
        "post-execute decisions carry additional contexts",
        lambda v: bool(v.a["contexts"]),
    ),
    _B(
        "e.7 finish",
        "results without post-execute go straight to finish",
        lambda v: any(c.post is None and v.committed(c.id) for c in v.s.calls),
    ),
    _B(
        "e.8 cancellation-shape",
        "cancellation results carry AbortError and their code",
        lambda v: v.has_code("ABORTED") or v.has_code("ABORTED_BEFORE_DISPATCH"),
    ),
    _B(
        "e.8 wrapper-success-aborted",
        "a wrapper-authored success (the body never ran) on an aborted step, before it is "
        "committed, gives ABORTED_BEFORE_DISPATCH",
        wrapper_success_aborted,
    ),
    _B(
        "f.1 planning",
        "calls are planned in model order from the raw blocks",
        lambda v: len(v.s.calls) >= 2 and bool(v.results),
    ),
    _B(
        "f.2 empty-step",
        "a step without calls logs nothing and ends at once",
        lambda v: not v.s.calls and v.outcome.get("endedAt") == 0 and not v.a["events"],
    ),
    _B("f.2 exclusive-barrier", "an exclusive call runs alone between parallel groups", _barrier),
    _B(
        "f.2 conclude-does-not-stop",
        "a concluding result does not stop later calls of the step",
        _conclude_continues,
    ),
    _B(
        "f.2 abort-skips-later-groups",
        "after an abort, calls of later groups get synthetic pairs",
        lambda v: v.aborted() and bool(v.skipped_ids()) and v.s.abort_at_ms != 0,
    ),
    _B("f.3 window", "at most cap bodies run at once; a settle starts the next", _window),
    _B(
        "f.3 serial-cap-1",
        "cap 1 runs the calls one after the other",
        lambda v: (
            v.s.cap == 1 and sum(1 for t in v.times.values() if t["bodyStarted"] is not None) >= 2
        ),
    ),
    _B("f.3 default-cap", "without a cap the window is 10", _default_cap),
    _B(
        "f.3 null-cap-default",
        "a null cap is not given: the default window",
        lambda v: v.s.cap is None and "rejectedCap" not in v.outcome and len(v.s.calls) >= 2,
    ),
    _B(
        "f.3 invalid-cap",
        "a cap that is not a positive integer is rejected",
        lambda v: "rejectedCap" in v.outcome,
    ),
    _B(
        "f.3 cap-checked-up-front",
        "an invalid cap is rejected even when no parallel group would open",
        lambda v: (
            "rejectedCap" in v.outcome
            and not any(v.static_parallel(i) for i in range(len(v.s.calls)))
        ),
    ),
    _B(
        "f.3 later-call-exclusive",
        "a later call classified exclusive stops the filling and waits for the pool to drain",
        _later_exclusive,
    ),
    _B(
        "f.3 reclassified-after-commit",
        "a registry change at a commit is seen by the next classification",
        lambda v: _change(v, "setParallel"),
    ),
    _B(
        "f.3 window-after-reclassification",
        "calls made parallel by a commit join the group, and the window still holds cap",
        lambda v: _change(v, "setParallel") and _window(v),
    ),
    _B(
        "f.3 tool-removed-on-commit",
        "a tool removed at a commit is unknown to later calls",
        lambda v: _change(v, "remove"),
    ),
    _B(
        "f.3 tool-added-on-commit",
        "a tool added at a commit is known to later calls",
        lambda v: _change(v, "add"),
    ),
    _B(
        "f.3 prepare-sequential",
        "pre-execute hooks run one call at a time in model order",
        _sequential_prepare,
    ),
    _B(
        "f.4 model-order-commit",
        "a call settling early waits for every earlier call's commit",
        _model_order,
    ),
    _B(
        "f.4 contexts-in-order",
        "contexts reach accept_context in commit order",
        lambda v: len({c["id"].rsplit("-ctx", 1)[0] for c in v.a["contexts"]}) >= 2,
    ),
    _B(
        "f.4 concludes-turn",
        "a committed result asking to conclude ends the turn",
        lambda v: v.outcome.get("concluded") is True,
    ),
    _B(
        "f.5 abort-drains",
        "an abort drains started calls and commits them in order",
        lambda v: (
            v.aborted()
            and any(
                t["bodyStarted"] is not None and t["committed"] is not None
                for t in v.times.values()
            )
        ),
    ),
    _B("f.5 failure-in-prepare", "a scheduler failure while preparing", _failure("prepare")),
    _B("f.5 failure-in-dispatch", "a scheduler failure while dispatching", _failure("dispatch")),
    _B("f.5 failure-in-commit", "a scheduler failure while committing", _failure("commit")),
    _B(
        "f.5 failure-waits-for-in-flight",
        "a scheduler failure is raised only after in-flight bodies settle",
        _failure_waits,
    ),
    _B(
        "f.5 failure-no-fabricated-results",
        "after a scheduler failure, started calls stay without results (nothing commits)",
        _post_failure_rule,
    ),
    _B(
        "f.5 failure-stops-prepared",
        "a call whose pre-execute or approval was awaited when another call's dispatch failed "
        "is never dispatched",
        failure_stops_prepared,
    ),
    _B(
        "f.6 skipped-pair",
        "a call never started after an abort gets a synthetic call/result pair",
        lambda v: bool(v.skipped_ids()),
    ),
    _B(
        "f.7 events",
        "tool/call and tool/result events in the wire form, results citing their call",
        lambda v: bool(v.a["events"]),
    ),
    _B(
        "g empty-arguments",
        "empty argument text parses to {}",
        lambda v: any(c.arguments == "" and v.committed(c.id) for c in v.s.calls),
    ),
    _B(
        "g whitespace-arguments",
        'argument text of JSON whitespace only is not JSON (unlike ""): INVALID_ARGS',
        _argument_text(lambda text: bool(text) and not text.strip(" \t\n\r")),
    ),
    _B(
        "g partial-json-arguments",
        "JSON followed by more text, or behind a non-JSON space, is not JSON: INVALID_ARGS",
        _argument_text(_partial_json),
    ),
    _B(
        "g non-object-arguments",
        "JSON arguments that are not an object fail the parameter check",
        lambda v: any(
            c.arguments[:1] in ("[", '"', "1", "n", "t")
            and v.results.get(c.id, {}).get("code") == "INVALID_ARGS"
            for c in v.s.calls
        ),
    ),
)


def behaviours_of(scenario: Scenario, answer: dict[str, Any]) -> list[str]:
    """The ids of every behaviour of :data:`BEHAVIOURS` the answered scenario exercises."""
    if "events" not in answer:
        return []
    view = AnswerView(scenario, answer)
    return [behaviour.id for behaviour in BEHAVIOURS if behaviour.applies(view)]
