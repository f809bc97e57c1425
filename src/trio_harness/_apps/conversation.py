"""The conversation in the session log, and a log opened for an app.

A model's conversation (the provider-format messages it sends) is recorded next to the pool's
tool events as ``conversation/messages`` events, each holding what the model appended at one
moment (one event is one log line, so a crash never splits it):

* ``input``: messages the application added (a user message, the system prompt);
* ``reply``: the model's reply, recorded *before* its tool calls run, with those calls
  (``toolCalls``): the log knows every call id the model is waiting for, even those that never
  started;
* ``results``: the messages that hand a step's results to the model (``answers``: their ids).

:func:`settle_step` makes a step's part of the log complete, whatever interrupted it: every call
of the reply gets exactly one ``tool/result`` in model order (a recorded call without one is
answered ``ABORTED``, or ``ABORTED_BEFORE_DISPATCH`` inside a skipping tail; a call never
recorded gets the pool's synthetic pair, ``ABORTED_BEFORE_DISPATCH``), and the step's results are
returned for the model. :func:`open_agent_log` opens a durable log for an app in one call:
the crash cut is dropped, the step a crash left open is settled, and what it found is reported.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Final, Literal

import attrs
from trio.lowlevel import enable_ki_protection

from .._errors import TOOL_ABORTED_BEFORE_DISPATCH
from .._json import js_json
from .._log import (
    TOOL_CALL,
    TOOL_RESULT,
    DurableSession,
    FsyncPolicy,
    LogCut,
    Problem,
    Session,
    SessionEvent,
    ToolCallData,
    ToolResultData,
    check_replay,
    js_type,
    open_checked,
    repair_replay,
)
from .._pool import StepResult, ToolCallBlock
from .._values import (
    ToolError,
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
)
from .approval_log import PausedStep, approval_problem, paused_step

__all__ = [
    "CONVERSATION_EVENT",
    "TURN_END_EVENT",
    "AgentLog",
    "ConversationState",
    "PendingStep",
    "Recovery",
    "conversation_of",
    "open_agent_log",
    "read_conversation",
    "record_messages",
    "settle_step",
]

#: Session event type of the conversation's messages (see the module docstring).
CONVERSATION_EVENT: Final = "conversation/messages"
#: Session event type an :class:`~trio_harness.agent.Agent` appends when a turn ends.
TURN_END_EVENT: Final = "turn/end"

Kind = Literal["input", "reply", "results"]


def conversation_of(model: object) -> list[Any]:
    """The list a model keeps its conversation in: ``conversation``, ``messages`` (Chat
    Completions, Anthropic) or ``input`` (the Responses API), the first that is a list.

    Raises:
        TypeError: The model has none of them.
    """
    for name in ("conversation", "messages", "input"):
        value = getattr(model, name, None)
        if isinstance(value, list):
            return value
    raise TypeError(
        f"{type(model).__name__} keeps no conversation list (conversation, messages or input)"
    )


def record_messages(
    session: Session,
    kind: Kind,
    turn: int,
    messages: Sequence[Any],
    *,
    step: int | None = None,
    calls: Sequence[ToolCallBlock] = (),
    answers: Sequence[str] = (),
) -> SessionEvent:
    """Append one ``conversation/messages`` event (see the module docstring)."""
    data: dict[str, Any] = {"kind": kind, "turn": turn, "step": step, "messages": list(messages)}
    if kind == "reply" and calls:
        data["toolCalls"] = [
            {"id": call.id, "name": call.name, "arguments": call.arguments} for call in calls
        ]
    if kind == "results":
        data["answers"] = list(answers)
    return session.append(CONVERSATION_EVENT, data)


# ---------------------------------------------------------------------------------------------
# Settling a step
# ---------------------------------------------------------------------------------------------


def stored_result(data: ToolResultData) -> ToolExecutionResult:
    """A logged result as the model sees it again (content, error flag, error identity)."""
    content = tuple(item for block in data.message.content for item in block.content)
    is_error = any(block.is_error for block in data.message.content)
    error = None
    if is_error:
        text = "\n".join(
            item["text"]
            for item in content
            if isinstance(item, dict) and isinstance(item.get("text"), str)
        )
        error = ToolError(text.removeprefix("Error: "), data.error)
    return ToolExecutionResult(is_error=is_error, content=content, error=error, meta=data.meta)


def _is_skipped_pair(call_seq: int, result: SessionEvent) -> bool:
    # The pool's synthetic pair: a call directly followed by its ABORTED_BEFORE_DISPATCH result.
    data = result.data
    return (
        result.seq == call_seq + 1
        and isinstance(data, ToolResultData)
        and data.error is not None
        and data.error.code == TOOL_ABORTED_BEFORE_DISPATCH
    )


@enable_ki_protection
def settle_step(
    session: Session, turn: int, step: int, calls: Sequence[ToolCallBlock]
) -> tuple[StepResult, ...]:
    """Give every call of a step exactly one result in the log; return the results.

    Synchronous and protected from ``KeyboardInterrupt``: safe to run while a cancellation
    unwinds. Calls are matched to the step's ``tool/call`` events by id and place (the second
    call with an id is the second logged with it), in model order; what is missing is appended (see the module docstring), so the log and the returned results agree.

    Args:
        session: The log.
        turn: The step's turn.
        step: The step's number within the turn.
        calls: The model's calls of the step, in model order.

    Returns:
        One result per call, in model order.
    """
    # One pass over the log (a log that keeps no events reads its file once), keeping only the
    # step's calls and their first results.
    # The step's tool/call seqs per call id, in log order: the n-th call with an id is the n-th
    # logged call with it (models and compatible servers repeat ids: "", a fixed one).
    logged: dict[str, list[int]] = {}
    answer: dict[int, SessionEvent] = {}
    for event in session.events:
        data = event.data
        if event.type == TOOL_CALL and isinstance(data, ToolCallData):
            if (data.turn, data.step) == (turn, step):
                logged.setdefault(data.call_id, []).append(event.seq)
                answer[event.seq] = event  # a placeholder: the call itself, until answered
        elif event.type == TOOL_RESULT and isinstance(data, ToolResultData):
            for seq in event.source_event_seqs or ():
                found = answer.get(seq)
                if found is not None and found.type == TOOL_CALL:
                    answer[seq] = event
    results: list[StepResult] = []
    skipping = False
    for call in calls:
        same_id = logged.get(call.id)
        call_seq = same_id.pop(0) if same_id else None
        if call_seq is None:
            # Never recorded: the body never started. The pool's synthetic pair.
            result = aborted_before_dispatch_result()
            call_event = session.append(
                TOOL_CALL, ToolCallData(turn, step, call.id, call.name, call.arguments)
            )
            session.append(
                TOOL_RESULT,
                ToolResultData.from_result(turn, step, call.id, result),
                source_event_seqs=(call_event.seq,),
            )
            skipping = True
        elif answer[call_seq].type == TOOL_RESULT:
            answered = answer[call_seq]
            data = answered.data
            assert isinstance(data, ToolResultData)
            result = stored_result(data)
            skipping = skipping or _is_skipped_pair(call_seq, answered)
        else:
            # Recorded, never answered: the body may have run, unless the step was already
            # writing skipped pairs (a crash between a pair's two lines).
            result = aborted_before_dispatch_result() if skipping else aborted_result()
            session.append(
                TOOL_RESULT,
                ToolResultData.from_result(turn, step, call.id, result),
                source_event_seqs=(call_seq,),
            )
        results.append(StepResult(call.id, call.name, result))
    return tuple(results)


# ---------------------------------------------------------------------------------------------
# Reading the conversation back
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class PendingStep:
    """A step whose results the model has not been given (a crash came in between).

    Attributes:
        turn: Its turn.
        step: Its number within the turn.
        calls: The reply's calls, in model order.
    """

    turn: int
    step: int
    calls: tuple[ToolCallBlock, ...]


@attrs.frozen
class ConversationState:
    """What a log says about its conversation.

    Attributes:
        messages: Every recorded message, in order.
        pending: The last reply's step, if its results were never handed to the model (and
            it is not paused).
        next_turn: The number of the next turn (one past the highest turn in the log).
        paused: The last reply's step, if it paused its turn waiting for approval decisions
            (see :func:`~trio_harness.agent.paused_step`).
    """

    messages: tuple[Any, ...]
    pending: PendingStep | None
    next_turn: int
    paused: PausedStep | None = None


_KINDS: Final = ("input", "reply", "results")
_CALL_KEYS: Final = ("id", "name", "arguments")


def _must(field: str, what: str, value: object) -> Problem:
    return Problem(ValueError, f"must be {what}, got {js_type(value)}").at(field)


def conversation_problem(event: SessionEvent) -> Problem | None:
    """Why a ``conversation/messages`` event is not one :func:`record_messages` could have
    written (the path of the offending field below ``data``), or ``None``. Other events pass.

    Checked: ``kind`` is one of the three, ``turn`` an integer, ``step`` an integer (``null``
    too for ``input``), ``messages`` an array of objects, ``toolCalls`` (when present) an array of objects
    with string ``id``, ``name`` and ``arguments``, ``answers`` (when present) an array of
    strings. Other keys are left alone.
    """
    if event.type != CONVERSATION_EVENT:
        return None
    data = event.data
    if type(data) is not dict:
        return Problem(ValueError, f"must be an object, got {js_type(data)}")
    for key in ("kind", "turn", "step", "messages"):
        if key not in data:
            return Problem(ValueError, "is missing").at("." + key)
    kind = data["kind"]
    if kind not in _KINDS:
        got = js_json(kind) if type(kind) is str else js_type(kind)
        return Problem(ValueError, f'must be "input", "reply" or "results", got {got}').at(".kind")
    if type(data["turn"]) is not int:
        return _must(".turn", "an integer", data["turn"])
    step = data["step"]
    if type(step) is not int and not (step is None and kind == "input"):
        return _must(".step", "an integer", step)
    if type(data["messages"]) is not list:
        return _must(".messages", "an array", data["messages"])
    for index, message in enumerate(data["messages"]):
        # Every provider's message is an object; anything else would be sent to it verbatim.
        if type(message) is not dict:
            return _must(f"[{index}]", "an object", message).at(".messages")
    calls = data.get("toolCalls", [])
    if type(calls) is not list:
        return _must(".toolCalls", "an array", calls)
    for index, call in enumerate(calls):
        if type(call) is not dict:
            return _must(f"[{index}]", "an object", call).at(".toolCalls")
        for key in _CALL_KEYS:
            if key not in call:
                return (
                    Problem(ValueError, "is missing")
                    .at("." + key)
                    .at(f"[{index}]")
                    .at(".toolCalls")
                )
            if type(call[key]) is not str:
                return _must("." + key, "a string", call[key]).at(f"[{index}]").at(".toolCalls")
    answers = data.get("answers", [])
    if type(answers) is not list:
        return _must(".answers", "an array", answers)
    for index, answer in enumerate(answers):
        if type(answer) is not str:
            return _must(f"[{index}]", "a string", answer).at(".answers")
    return None


def read_conversation(events: Sequence[SessionEvent]) -> ConversationState:
    """The conversation recorded in ``events`` (see the module docstring).

    Raises:
        ValueError: A ``conversation/messages`` event is not one :func:`record_messages` could
            have written (``event <seq>: data.<field> ...``; :func:`open_agent_log` reports it
            as a malformed line of the file instead).
    """
    messages: list[Any] = []
    pending: PendingStep | None = None
    last_turn = -1
    for event in events:
        data = event.data
        if event.type in (TOOL_CALL, TOOL_RESULT):
            last_turn = max(last_turn, data.turn)
            continue
        problem = conversation_problem(event) or approval_problem(event)
        if problem is not None:
            raise ValueError(f"event {event.seq}: {problem.at('data').render()}")
        if not isinstance(data, dict) or type(data.get("turn")) is not int:
            continue
        if event.type == TURN_END_EVENT:
            last_turn = max(last_turn, data["turn"])
            continue
        if event.type != CONVERSATION_EVENT:
            continue
        last_turn = max(last_turn, data["turn"])
        messages.extend(data["messages"])
        kind = data.get("kind")
        if kind == "reply" and data.get("toolCalls"):
            calls = tuple(
                ToolCallBlock(call["id"], call["name"], call["arguments"])
                for call in data["toolCalls"]
            )
            pending = PendingStep(data["turn"], data["step"], calls)
        elif kind == "results":
            pending = None
    paused = None
    if pending is not None:
        paused = paused_step(events, pending.turn, pending.step, pending.calls)
        if paused is not None:
            pending = None
    return ConversationState(tuple(messages), pending, last_turn + 1, paused)


# ---------------------------------------------------------------------------------------------
# A log opened for an app
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Recovery:
    """What :func:`open_agent_log` found and did.

    Attributes:
        path: The log file.
        messages: Conversation messages resumed.
        cut: The incomplete last line a crash left (dropped from the file), if any.
        repaired: The ``tool/result`` (and synthetic ``tool/call``) events appended for calls a
            crash left unanswered.
        pending: The step whose results are handed to the model on resume, if any.
        paused: The step waiting for approval decisions, if the last turn paused.
    """

    path: str
    messages: int
    cut: LogCut | None
    repaired: tuple[SessionEvent, ...]
    pending: PendingStep | None
    paused: PausedStep | None = None

    @property
    def resumed(self) -> bool:
        """Whether the log already held a conversation."""
        return self.messages > 0

    def __str__(self) -> str:
        parts = [
            f"{self.path}: resumed {_count(self.messages, 'message')}"
            if self.messages
            else f"{self.path}: new conversation"
        ]
        if self.cut is not None:
            parts.append(
                f"dropped an incomplete last line ({len(self.cut.dropped)} bytes at byte "
                f"{self.cut.offset}) a crash left"
            )
        answered = [e for e in self.repaired if e.type == TOOL_RESULT]
        if answered:
            codes = [e.data.error.code for e in answered if e.data.error is not None]
            counts = ", ".join(f"{codes.count(code)} {code}" for code in sorted(set(codes)))
            parts.append(f"answered {_count(len(answered), 'call')} a crash left open ({counts})")
        if self.paused is not None:
            waiting = self.paused.undecided
            names = ", ".join(f"{call.name} ({call.call_id})" for call in waiting)
            parts.append(
                f"paused: {len(waiting)} call(s) waiting for approval: {names}"
                if waiting
                else "paused: every pending call is decided; run() resumes"
            )
        return "; ".join(parts)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


@attrs.define(eq=False)
class AgentLog:
    """A durable session log opened for an app (see :func:`open_agent_log`).

    Attributes:
        session: The :class:`~trio_harness.log.DurableSession` (the pool writes to it).
        conversation: The recorded conversation when the log was opened.
        recovery: What opening found and repaired (``str()`` is a one-line report).
    """

    session: DurableSession
    conversation: ConversationState
    recovery: Recovery

    @property
    def path(self) -> str:
        """The log file."""
        return self.session.path

    def close(self) -> None:
        """Close the log (sync and release its lock)."""
        self.session.close()

    def __enter__(self) -> AgentLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _event_problem(event: SessionEvent) -> Problem | None:
    return conversation_problem(event) or approval_problem(event)


def open_agent_log(
    path: str | os.PathLike[str], *, fsync: FsyncPolicy = "step", salvage: bool = False
) -> AgentLog:
    """Open (creating if missing) the durable log of an app's conversation, ready to resume.

    One call does what resuming needs: the crash cut is dropped (``DurableSession.open``), the
    step a crash left open is settled (every call of the last reply answered exactly once, in
    model order, truthfully: ``ABORTED`` for a call that started, ``ABORTED_BEFORE_DISPATCH`` for
    one that never did), any other call without a result is answered (``repair_replay``), and
    :attr:`AgentLog.recovery` reports it all. A step that paused its turn waiting for approval
    decisions is left as it is (``conversation.paused``): its waiting calls never started.

    Args:
        path: The log file.
        fsync: The durable log's fsync policy.
        salvage: Keep the valid prefix of a file with a malformed line (see
            ``DurableSession.open``).

    Raises:
        SessionLogError: The file is not a session log (or, without ``salvage``, has a malformed
            line).
        SessionLogLockedError: Another process has it open.
    """
    session, loaded = open_checked(
        path, _event_problem, fsync=fsync, salvage=salvage, keep_events=False
    )
    try:
        # What opening read, once; the session keeps no events (see open_agent_log's docs).
        state = read_conversation(loaded.events)
        before = len(session.events)
        if state.pending is not None:
            pending = state.pending
            settle_step(session, pending.turn, pending.step, pending.calls)
        # The events read at opening, then those settling appended (read back from the file).
        if not check_replay([*loaded.events, *session.events[len(loaded.events) :]]).valid:
            repair_replay(session)
        repaired = tuple(session.events[before:])
        del loaded
    except BaseException:
        session.close()
        raise
    recovery = Recovery(
        session.path,
        len(state.messages),
        session.recovered.cut,
        repaired,
        state.pending,
        state.paused,
    )
    return AgentLog(session, state, recovery)
