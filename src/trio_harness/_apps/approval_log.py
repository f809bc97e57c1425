"""Human approval in the session log: the calls waiting for a decision, and the decisions.

Two event types sit beside the pool's and the conversation's (one event is one log line, so a
crash never splits one):

* ``approval/pending``: calls of a step waiting for a person (``calls``: each ``index`` in the
  step, ``id``, ``name``, ``arguments``, ``reason``). A *deferred* record (``inline: false``) is
  written when a turn pauses; the calls it lists have not started. An *inline* record
  (``inline: true``) is written when a decision callback is asked, while the step runs;
* ``approval/decision``: one person's answer for one call (``index``, ``id``, ``approved``, and
  ``message`` for a rejection or ``arguments`` for an approval with edited arguments).

:func:`paused_step` reads a log back: a step is *paused* when its last deferred record came
after every ``tool/call`` of the step (nothing of it ran since it paused). A step whose calls
started again after the record (a resume that a crash cut short) is not paused: it is settled as
any step a crash left open.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs

from .._json import js_json
from .._log import TOOL_CALL, Problem, Session, SessionEvent, ToolCallData, js_type
from .._pool import ToolCallBlock

__all__ = [
    "APPROVAL_DECISION_EVENT",
    "APPROVAL_PENDING_EVENT",
    "ApprovalDecision",
    "PausedStep",
    "PendingCall",
    "approval_problem",
    "paused_step",
    "record_decision",
    "record_pending",
]

#: Session event type of calls waiting for a decision (see the module docstring).
APPROVAL_PENDING_EVENT: Final = "approval/pending"
#: Session event type of one decision (see the module docstring).
APPROVAL_DECISION_EVENT: Final = "approval/decision"


@attrs.frozen(kw_only=True)
class ApprovalDecision:
    """A person's answer for one call that needs approval.

    Make one with :meth:`approve` or :meth:`reject`.

    Attributes:
        approved: Whether the call may run.
        message: For a rejection: what the model sees after ``the user rejected tool "<name>"``
            (``None``: upstream's message alone).
        arguments: For an approval: the arguments to run the call with instead of the model's,
            as JSON text (``None``: the model's own). Deferred mode only.
    """

    approved: bool
    message: str | None = None
    arguments: str | None = None

    @classmethod
    def approve(cls, arguments: Any = None) -> ApprovalDecision:
        """Let the call run; ``arguments`` (a JSON value, e.g. a dict) replaces the model's."""
        return cls(approved=True, arguments=None if arguments is None else js_json(arguments))

    @classmethod
    def reject(cls, message: str | None = None) -> ApprovalDecision:
        """Refuse the call; the model sees the rejection (and ``message``, if given)."""
        return cls(approved=False, message=message)


@attrs.frozen(kw_only=True)
class PendingCall:
    """A call waiting for (or given) a decision.

    Attributes:
        turn: Its turn.
        step: Its step within the turn.
        index: Its place among the step's calls (model order; ``-1`` for an inline question).
        call_id: The model's call id.
        name: The tool.
        arguments: The arguments as the model sent them (JSON text).
        reason: Why it needs approval (the rule's reason), if any.
        decision: The decision recorded for it so far, if any.
    """

    turn: int
    step: int
    index: int
    call_id: str
    name: str
    arguments: str
    reason: str | None = None
    decision: ApprovalDecision | None = None

    @property
    def call(self) -> ToolCallBlock:
        """The call as it runs: the model's, or with the decision's edited arguments."""
        edited = self.decision.arguments if self.decision is not None else None
        return ToolCallBlock(self.call_id, self.name, self.arguments if edited is None else edited)


@attrs.frozen(kw_only=True)
class PausedStep:
    """A step that ended its turn waiting for decisions (read back by :func:`paused_step`).

    Attributes:
        turn: Its turn.
        step: Its step within the turn.
        calls: Every call of the step's reply, in model order.
        pending: The calls waiting for a person, in model order, with the decisions so far.
    """

    turn: int
    step: int
    calls: tuple[ToolCallBlock, ...]
    pending: tuple[PendingCall, ...]

    @property
    def undecided(self) -> tuple[PendingCall, ...]:
        """The pending calls without a decision."""
        return tuple(call for call in self.pending if call.decision is None)

    def decided(self, call: PendingCall, decision: ApprovalDecision) -> PausedStep:
        """This step with ``decision`` given to ``call``."""
        pending = tuple(
            attrs.evolve(item, decision=decision) if item.index == call.index else item
            for item in self.pending
        )
        return attrs.evolve(self, pending=pending)


def record_pending(
    session: Session, calls: Sequence[PendingCall], *, inline: bool = False
) -> SessionEvent:
    """Append one ``approval/pending`` event listing ``calls`` (one turn and step)."""
    first = calls[0]
    data = {
        "turn": first.turn,
        "step": first.step,
        "inline": inline,
        "calls": [
            {
                "index": call.index,
                "id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
                "reason": call.reason,
            }
            for call in calls
        ],
    }
    return session.append(APPROVAL_PENDING_EVENT, data)


def record_decision(
    session: Session, call: PendingCall, decision: ApprovalDecision
) -> SessionEvent:
    """Append one ``approval/decision`` event: ``decision`` for ``call``."""
    data: dict[str, Any] = {
        "turn": call.turn,
        "step": call.step,
        "index": call.index,
        "id": call.call_id,
        "approved": decision.approved,
    }
    if decision.message is not None:
        data["message"] = decision.message
    if decision.arguments is not None:
        data["arguments"] = decision.arguments
    return session.append(APPROVAL_DECISION_EVENT, data)


def _must(field: str, what: str, value: object) -> Problem:
    return Problem(ValueError, f"must be {what}, got {js_type(value)}").at(field)


_OPTIONAL_TEXT: Final = ("reason", "message", "arguments")


def _fields(data: dict[str, Any], keys: dict[str, type]) -> Problem | None:
    for key, kind in keys.items():
        if key not in data:
            return Problem(ValueError, "is missing").at("." + key)
        if type(data[key]) is not kind:
            what = {int: "an integer", str: "a string", bool: "a boolean", list: "an array"}[kind]
            return _must("." + key, what, data[key])
    for key in _OPTIONAL_TEXT:
        if key in data and data[key] is not None and type(data[key]) is not str:
            return _must("." + key, "a string", data[key])
    return None


def approval_problem(event: SessionEvent) -> Problem | None:
    """Why an ``approval/*`` event is not one this module could have written (the path of the
    offending field below ``data``), or ``None``. Other events pass."""
    if event.type not in (APPROVAL_PENDING_EVENT, APPROVAL_DECISION_EVENT):
        return None
    data = event.data
    if type(data) is not dict:
        return Problem(ValueError, f"must be an object, got {js_type(data)}")
    if event.type == APPROVAL_DECISION_EVENT:
        keys = {"turn": int, "step": int, "index": int, "id": str, "approved": bool}
        return _fields(data, keys)
    problem = _fields(data, {"turn": int, "step": int, "inline": bool, "calls": list})
    if problem is not None:
        return problem
    if not data["calls"]:
        return Problem(ValueError, "must not be empty").at(".calls")
    for index, call in enumerate(data["calls"]):
        if type(call) is not dict:
            return _must(f"[{index}]", "an object", call).at(".calls")
        problem = _fields(call, {"index": int, "id": str, "name": str, "arguments": str})
        if problem is not None:
            return problem.at(f"[{index}]").at(".calls")
    return None


def _decision(data: dict[str, Any]) -> ApprovalDecision:
    return ApprovalDecision(
        approved=data["approved"], message=data.get("message"), arguments=data.get("arguments")
    )


def paused_step(
    events: Sequence[SessionEvent], turn: int, step: int, calls: Sequence[ToolCallBlock]
) -> PausedStep | None:
    """The step ``(turn, step)`` (its reply's ``calls``) as a paused step, or ``None`` when it is
    not paused (no deferred ``approval/pending`` record, or a ``tool/call`` of the step after the
    last one: a resume had started)."""
    pending: list[PendingCall] | None = None
    for event in events:
        data = event.data
        if event.type == TOOL_CALL and isinstance(data, ToolCallData):
            if (data.turn, data.step) == (turn, step):
                pending = None
            continue
        if type(data) is not dict or (data.get("turn"), data.get("step")) != (turn, step):
            continue
        if event.type == APPROVAL_PENDING_EVENT and data.get("inline") is False:
            pending = [
                PendingCall(
                    turn=turn,
                    step=step,
                    index=call["index"],
                    call_id=call["id"],
                    name=call["name"],
                    arguments=call["arguments"],
                    reason=call.get("reason"),
                )
                for call in data["calls"]
            ]
        elif event.type == APPROVAL_DECISION_EVENT and pending is not None:
            pending = [
                attrs.evolve(call, decision=_decision(data))
                if call.index == data["index"] and call.decision is None
                else call
                for call in pending
            ]
    if not pending:
        return None
    return PausedStep(turn=turn, step=step, calls=tuple(calls), pending=tuple(pending))
