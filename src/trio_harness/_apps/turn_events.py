"""What ``run_turn`` reports and returns: its progress events and :class:`TurnResult`."""

from __future__ import annotations

from typing import Literal, TypeAlias

import attrs

from .._pool import StepOutcome, StepResult, ToolCallBlock
from .._values import ToolExecutionResult
from .approval_log import PendingCall
from .turn_model import FinishReason, ModelStep, TextDelta, Usage

__all__ = [
    "ModelReplied",
    "ModelRequested",
    "StepFinished",
    "StepStarted",
    "ToolCommitted",
    "ToolStarted",
    "TurnEvent",
    "TurnResult",
]


@attrs.frozen
class ModelRequested:
    """The loop is about to ask the model (``step`` counts from 0 within the turn)."""

    turn: int
    step: int


@attrs.frozen
class ModelReplied:
    """The model answered."""

    turn: int
    step: int
    reply: ModelStep


@attrs.frozen
class StepStarted:
    """A step's tool calls are about to run.

    In a streamed step it comes when the first call is complete (before :class:`ModelReplied`,
    and before any :class:`ToolStarted` of the step), ``groups`` holds the calls known so far
    (complete and handed to the pool: the first one) and ``complete`` is ``False``: the later
    calls start as they arrive, and the reply's calls are all known once it is complete
    (``ModelReplied.reply.tool_calls``).

    Attributes:
        groups: The calls as the pool will group them, from the classification at this moment:
            a run of parallel calls forms one group, each exclusive call is a group of its own.
        complete: Whether ``groups`` holds every call of the step (``False`` in a streamed
            step: more calls may follow).
    """

    turn: int
    step: int
    groups: tuple[tuple[ToolCallBlock, ...], ...]
    complete: bool = True


@attrs.frozen
class ToolStarted:
    """A tool body is starting (top-level calls of runtimes with execute wrappers only).

    Attributes:
        time: ``trio.current_time()`` when the body started.
    """

    turn: int
    step: int
    call_id: str
    name: str
    time: float


@attrs.frozen
class ToolCommitted:
    """A result was committed (model order; synthetic abort results are reported in
    :class:`StepFinished` only)."""

    turn: int
    step: int
    call_id: str
    name: str
    result: ToolExecutionResult
    time: float


@attrs.frozen
class StepFinished:
    """A step's results were committed and handed to the model."""

    turn: int
    step: int
    outcome: StepOutcome


TurnEvent: TypeAlias = (
    ModelRequested
    | TextDelta
    | ModelReplied
    | StepStarted
    | ToolStarted
    | ToolCommitted
    | StepFinished
)


@attrs.frozen(kw_only=True)
class TurnResult:
    """How a turn ended.

    Attributes:
        stop: ``"done"`` (a reply without tool calls), ``"concluded"`` (a tool called
            ``ctx.conclude_turn()``), ``"step_limit"``, ``"aborted"``, or ``"paused"`` (a call
            needs a person's decision: see ``pending``; the agent resumes the turn).
        steps: Tool steps run (model replies with tool calls whose results were committed).
        text: The text of the last model reply (``""`` if none).
        results: The last step's results.
        finish: The last reply's neutral finish reason (``"length"``, ``"refusal"``, ...:
            see :attr:`ModelStep.finish`); ``None`` when unknown or no reply came.
        usage: The tokens of every reply of the turn, summed (``None`` if none reported).
        response_id: The provider's id of the last reply.
        reply: The last reply itself (its refusal text, cut calls, raw message).
        pending: When ``stop`` is ``"paused"``: the calls waiting for a decision, in model
            order (the first has none; later ones may have one already). Empty otherwise.
    """

    stop: Literal["done", "concluded", "step_limit", "aborted", "paused"]
    steps: int
    text: str = ""
    results: tuple[StepResult, ...] = ()
    finish: FinishReason | None = None
    usage: Usage | None = None
    response_id: str | None = None
    reply: ModelStep | None = None
    pending: tuple[PendingCall, ...] = ()
