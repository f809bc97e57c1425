"""Checking, repairing and presenting a stored session log.

A log is *replay-valid* when it can be sent back to a model provider as it is: every
``tool/call`` is answered by exactly one ``tool/result`` that cites it and names the same call
id, in the same turn and step, and no call is still unanswered when a later step's call is
recorded. The pool keeps a log replay-valid even when a step is aborted or cancelled; a crash
(or an application that stopped mid-step) can leave calls without results. :func:`check_replay`
says which; :func:`repair_replay` appends the synthetic results a provider needs, shaped like the
pool's own abort results (``ABORTED``: the call was recorded, its body may have run;
``ABORTED_BEFORE_DISPATCH`` inside an aborted step's skipping tail, where it never started), as
ordinary ``tool/result`` events.

:func:`present_log` renders a stored log through the current tools' presenters, falling back to a
generic view where a tool is gone, has no presenter, or soft validation says the stored
arguments no longer fit its schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs

from .._json import js_json_or_string, parse_arguments
from .._validation import validate_json_schema_value
from .._values import (
    ERROR_PREFIX,
    ToolError,
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
)
from .events import TOOL_CALL, TOOL_RESULT, SessionEvent, ToolCallData, ToolResultData
from .session import Session

__all__ = [
    "PresentedCall",
    "ReplayReport",
    "UnansweredCall",
    "check_replay",
    "format_presented",
    "present_log",
    "repair_replay",
]


@attrs.frozen
class UnansweredCall:
    """A ``tool/call`` with no ``tool/result``.

    Attributes:
        seq: The call event's seq.
        turn: Its turn.
        step: Its step.
        call_id: The model's call id.
        name: The tool name.
        skipped: The call is in an aborted step's skipping tail (after a call answered
            ``ABORTED_BEFORE_DISPATCH`` right away, every earlier call of the step answered):
            the pool records such calls as they are skipped, so their bodies never started.
    """

    seq: int
    turn: int
    step: int
    call_id: str
    name: str
    skipped: bool = False


@attrs.frozen
class ReplayReport:
    """What :func:`check_replay` found.

    Attributes:
        unanswered: Calls without a result, in log order (``repair_replay`` answers them).
        problems: Everything else that makes the log unfit to send to a provider, one sentence
            each (results citing no call, mismatched ids, duplicates, a call left open when a
            later step began: once per call); repair does not change these.
    """

    unanswered: tuple[UnansweredCall, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        """Whether the log can be sent back to a provider as it is."""
        return not self.unanswered and not self.problems


_BEFORE_DISPATCH: Final = "ABORTED_BEFORE_DISPATCH"


def check_replay(log: Session | Sequence[SessionEvent]) -> ReplayReport:
    """Say which calls have no result and whether ``log`` is valid to send to a provider.

    Linear in the number of events: a call left open when a later step begins is one problem,
    however many steps follow.

    Args:
        log: A session (any kind) or its events.
    """
    events = log.events if isinstance(log, Session) else log
    calls: dict[int, ToolCallData] = {}
    answered: set[int] = set()
    # Open calls by step; once a later step begins, those of the others are reported and
    # dropped here (they stay unanswered), so each call is looked at a bounded number of times.
    open_by_step: dict[tuple[int, int], dict[int, ToolCallData]] = {}
    unanswered_in_step: dict[tuple[int, int], int] = {}  # how many calls of the step are open
    skipping: set[tuple[int, int]] = set()  # steps whose skipping tail has begun
    skipped: set[int] = set()  # calls recorded inside a skipping tail
    step_ids: dict[tuple[int, int], set[str]] = {}
    problems: list[str] = []
    previous: SessionEvent | None = None
    for event in events:
        data = event.data
        if event.type == TOOL_CALL and isinstance(data, ToolCallData):
            key = (data.turn, data.step)
            for other_key in [k for k in open_by_step if k != key]:  # at most one other step
                for seq, other in open_by_step.pop(other_key).items():
                    problems.append(
                        f"call {other.call_id!r} (#{seq}, turn {other.turn} step {other.step}) "
                        f"is unanswered when turn {data.turn} step {data.step} begins "
                        f"(#{event.seq})"
                    )
            ids = step_ids.setdefault(key, set())
            if data.call_id in ids:
                problems.append(
                    f"call id {data.call_id!r} is used twice in turn {data.turn} step "
                    f"{data.step} (#{event.seq})"
                )
            ids.add(data.call_id)
            calls[event.seq] = data
            open_by_step.setdefault(key, {})[event.seq] = data
            unanswered_in_step[key] = unanswered_in_step.get(key, 0) + 1
            if key in skipping:
                skipped.add(event.seq)
        elif event.type == TOOL_RESULT and isinstance(data, ToolResultData):
            sources = event.source_event_seqs or ()
            cited = [seq for seq in sources if seq in calls]
            if len(cited) != 1:
                problems.append(f"result #{event.seq} does not cite exactly one tool/call")
                previous = event
                continue
            seq = cited[0]
            call = calls[seq]
            if seq in answered:
                problems.append(f"call {call.call_id!r} (#{seq}) has a second result #{event.seq}")
                previous = event
                continue
            answered.add(seq)
            call_key = (call.turn, call.step)
            open_by_step.get(call_key, {}).pop(seq, None)
            if not open_by_step.get(call_key, True):
                del open_by_step[call_key]
            unanswered_in_step[call_key] -= 1
            # A skipped pair (a call answered ABORTED_BEFORE_DISPATCH at once, nothing earlier
            # of its step open) starts the step's skipping tail, as check-log reads it.
            if (
                data.error is not None
                and data.error.code == _BEFORE_DISPATCH
                and previous is not None
                and previous.seq == seq
                and unanswered_in_step[call_key] == 0
            ):
                skipping.add(call_key)
            result_ids = {data.message.source.call_id}
            result_ids.update(block.tool_call_id for block in data.message.content)
            if result_ids != {call.call_id}:
                problems.append(
                    f"result #{event.seq} answers call id(s) {sorted(result_ids)}, but cites "
                    f"call {call.call_id!r} (#{seq})"
                )
            if (data.turn, data.step) != (call.turn, call.step):
                problems.append(
                    f"result #{event.seq} is in turn {data.turn} step {data.step}, its call "
                    f"#{seq} in turn {call.turn} step {call.step}"
                )
        previous = event
    unanswered = tuple(
        UnansweredCall(seq, call.turn, call.step, call.call_id, call.name, seq in skipped)
        for seq, call in calls.items()
        if seq not in answered
    )
    return ReplayReport(unanswered, tuple(dict.fromkeys(problems)))


def repair_replay(session: Session) -> list[SessionEvent]:
    """Append a synthetic ``tool/result`` for every unanswered call; return the new events.

    The results are the pool's own abort results, citing their calls, appended in call order as
    ordinary events (a :class:`~trio_harness.log.DurableSession` writes them to its file):
    ``ABORTED_BEFORE_DISPATCH`` (``Error: tool call aborted before dispatch``) for a call of an
    aborted step's skipping tail, whose body never started (``UnansweredCall.skipped``), and
    ``ABORTED`` (``Error: tool call aborted``) for any other, whose body may have run. Problems
    other than unanswered calls are left as they are: check again to see whether the log is now
    valid.
    """
    appended = []
    for call in check_replay(session).unanswered:
        result = aborted_before_dispatch_result() if call.skipped else aborted_result()
        data = ToolResultData.from_result(call.turn, call.step, call.call_id, result)
        appended.append(session.append(TOOL_RESULT, data, source_event_seqs=(call.seq,)))
    return appended


@attrs.frozen
class PresentedCall:
    """One stored call as a person should see it.

    Attributes:
        seq: The call event's seq.
        call_id: The model's call id.
        name: The tool name.
        arguments: The parsed stored arguments.
        call_view: The tool's ``present_call`` card, or the generic view
            ``{"tool": name, "arguments": arguments}``.
        result_view: The tool's ``present_result`` card, the generic view
            ``{"isError": ..., "text": ...}``, or ``None`` when the call has no result.
        generic: Whether the generic view was used.
        reason: Why it was (``None`` when the tool's presenters rendered the call).
    """

    seq: int
    call_id: str
    name: str
    arguments: Any
    call_view: Any
    result_view: Any
    generic: bool
    reason: str | None


def _stored_result(data: ToolResultData) -> ToolExecutionResult:
    content = tuple(item for block in data.message.content for item in block.content)
    is_error = any(block.is_error for block in data.message.content)
    error = None
    if is_error:
        text = _text(content)
        error = ToolError(text.removeprefix(ERROR_PREFIX), data.error)
    return ToolExecutionResult(is_error=is_error, content=content, error=error, meta=data.meta)


def _text(content: Sequence[Any]) -> str:
    return "\n".join(
        block["text"]
        for block in content
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    )


def _generic_result(result: ToolExecutionResult) -> dict[str, Any]:
    return {"isError": result.is_error, "text": _text(result.content)}


def present_log(runtime: Any, log: Session | Sequence[SessionEvent]) -> list[PresentedCall]:
    """Render every stored call (and its result) through the current tools' presenters.

    A call gets the generic view when its tool is no longer registered, has no presenter, a
    presenter returned ``None`` or raised, the stored arguments no longer fit the tool's current
    schema (soft validation: the tool changed since the log was written), or that schema is one
    the subset cannot check (a raw tool's); ``reason`` says which. It never raises for what a
    tool does (an ``Exception`` from a presenter is a reason, not an error).

    Args:
        runtime: The ``ToolRuntime`` holding the current tools (``get(name)``).
        log: A session or its events.
    """
    events = log.events if isinstance(log, Session) else log
    results: dict[int, ToolResultData] = {}
    for event in events:
        if event.type == TOOL_RESULT and isinstance(event.data, ToolResultData):
            for seq in event.source_event_seqs or ():
                results.setdefault(seq, event.data)
    presented = []
    for event in events:
        call = event.data
        if event.type != TOOL_CALL or not isinstance(call, ToolCallData):
            continue
        args = parse_arguments(call.arguments)
        stored = results.get(event.seq)
        result = None if stored is None else _stored_result(stored)
        tool = runtime.get(call.name)
        reason: str | None = None
        call_view: Any = None
        result_view: Any = None
        if tool is None:
            reason = f"tool {call.name!r} is not registered"
        else:
            try:
                violations = validate_json_schema_value(tool.parameters, args, "")
            except Exception as error:  # a raw tool's schema, outside the subset
                reason = f"the stored arguments cannot be checked: {_said(error)}"
                violations = []
            if violations:
                reason = "stored arguments no longer fit the schema: " + "; ".join(violations)
            elif reason is not None:
                pass  # the schema could not check them
            elif tool.present_call is None:
                reason = f"tool {call.name!r} has no call presenter"
            else:
                try:
                    call_view = tool.present_call(args)
                    if call_view is None:
                        reason = "the call presenter returned nothing"
                    elif result is not None and tool.present_result is not None:
                        result_view = tool.present_result(args, result)
                except Exception as error:
                    which = "call" if call_view is None else "result"
                    reason = f"the {which} presenter raised {_said(error)}"
                    result_view = None
        generic = reason is not None
        if generic:
            call_view = {"tool": call.name, "arguments": args}
        if result is not None and result_view is None:
            result_view = _generic_result(result)
        presented.append(
            PresentedCall(
                event.seq, call.call_id, call.name, args, call_view, result_view, generic, reason
            )
        )
    return presented


def _said(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def format_presented(calls: Sequence[PresentedCall]) -> str:
    """A plain-text rendering of :func:`present_log` output, one block per call."""
    lines = []
    for call in calls:
        marker = " (generic view: " + str(call.reason) + ")" if call.generic else ""
        lines.append(f"#{call.seq} {call.call_id} {call.name}{marker}")
        lines.append("  call:   " + _show(call.call_view, js_json_or_string))
        if call.result_view is None:
            lines.append("  result: (none)")
        else:
            lines.append("  result: " + _show(call.result_view, js_json_or_string))
    return "\n".join(lines) + ("\n" if lines else "")


def _show(view: Any, render: Any) -> str:
    return view if isinstance(view, str) else str(render(view))
