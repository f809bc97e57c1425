"""A turn loop: model request → tool calls → pool → results → next request.

:func:`run_turn` drives any :class:`TurnModel` (a small protocol; ready implementations live in
:mod:`trio_harness.providers`) against a runtime. It stops when the model answers without tool
calls, a tool concludes the turn, the step limit is hit, or the abort event fires. Progress is
reported as :data:`TurnEvent` values to an ``on_event`` callback, so an app can print what runs.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, TypeAlias

import attrs
import trio

from .._json import parse_arguments
from .._log import Session
from .._pool import (
    DEFAULT_MAX_PARALLEL_TOOL_CALLS,
    PoolRuntime,
    StepOutcome,
    StepResult,
    ToolCallBlock,
    execute_tool_calls,
)
from .._runtime import ToolExecutionInput, cancel_on_abort
from .._values import ToolExecutionResult, error_result

__all__ = [
    "FinishReason",
    "ModelReplied",
    "ModelRequested",
    "ModelStep",
    "StepFinished",
    "StepStarted",
    "ToolCommitted",
    "ToolStarted",
    "TurnEvent",
    "TurnModel",
    "TurnResult",
    "Usage",
    "plan_groups",
    "run_turn",
]


@attrs.frozen(kw_only=True)
class Usage:
    """Tokens one reply (or a whole turn, summed) used, provider-neutral.

    Attributes:
        input_tokens: Prompt tokens, cached ones included.
        output_tokens: Generated tokens (reasoning included).
        cached_input_tokens: The part of ``input_tokens`` read from the provider's cache.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """``input_tokens + output_tokens``."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
        )


#: Why a reply ended, provider-neutral (``ModelStep.finish``): ``"tool_calls"``, ``"end"`` (a
#: normal end, stop sequences included), ``"length"`` (the output token limit or the context
#: window), ``"refusal"``, ``"content_filter"``, ``"incomplete"`` (incomplete for another reason),
#: ``"pause"`` (Anthropic's ``pause_turn``: send the conversation again to continue).
FinishReason: TypeAlias = Literal[
    "tool_calls", "end", "length", "refusal", "content_filter", "incomplete", "pause"
]


@attrs.frozen(kw_only=True)
class ModelStep:
    """One model reply, provider-neutral.

    Attributes:
        text: The reply's text (``""`` when none).
        tool_calls: The tool calls to run, in model order (never the calls of a reply cut short).
        stop_reason: The provider's stop/finish reason, when known.
        raw: The provider message or output the model appended to its conversation.
        finish: The neutral reason (see :data:`FinishReason`), when known.
        refusal: The model's refusal text, when it refused.
        cut_calls: Tool calls of a reply that ended before it was complete (``finish`` is
            ``"length"``, ``"content_filter"`` or ``"refusal"``): never run, and left out of the
            stored conversation.
        usage: Tokens used, when the provider reported them.
        response_id: The provider's id of the reply (completion, response or message id).
    """

    text: str = ""
    tool_calls: tuple[ToolCallBlock, ...] = ()
    stop_reason: str | None = None
    raw: Any = None
    finish: FinishReason | None = None
    refusal: str | None = None
    cut_calls: tuple[ToolCallBlock, ...] = ()
    usage: Usage | None = None
    response_id: str | None = None


class TurnModel(Protocol):
    """What :func:`run_turn` needs of a model: one request, and a way to hand results back.

    The model owns its conversation: ``step`` sends it (with the tools) and appends the reply;
    ``add_tool_results`` appends the step's results in the provider's format.
    """

    async def step(self, tools: Sequence[dict[str, Any]], /) -> ModelStep:
        """Ask the model; ``tools`` is the neutral list (``name``, ``description``, ``parameters``)."""
        ...

    def add_tool_results(self, results: Sequence[StepResult], /) -> None:
        """Append a step's committed results (model order) to the conversation."""
        ...


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

    Attributes:
        groups: The calls as the pool will group them, from the classification at this moment:
            a run of parallel calls forms one group, each exclusive call is a group of its own.
    """

    turn: int
    step: int
    groups: tuple[tuple[ToolCallBlock, ...], ...]


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
    ModelRequested | ModelReplied | StepStarted | ToolStarted | ToolCommitted | StepFinished
)


@attrs.frozen(kw_only=True)
class TurnResult:
    """How a turn ended.

    Attributes:
        stop: ``"done"`` (a reply without tool calls), ``"concluded"`` (a tool called
            ``ctx.conclude_turn()``), ``"step_limit"`` or ``"aborted"``.
        steps: Tool steps run (model replies with tool calls whose results were committed).
        text: The text of the last model reply (``""`` if none).
        results: The last step's results.
        finish: The last reply's neutral finish reason (``"length"``, ``"refusal"``, ...:
            see :attr:`ModelStep.finish`); ``None`` when unknown or no reply came.
        usage: The tokens of every reply of the turn, summed (``None`` if none reported).
        response_id: The provider's id of the last reply.
        reply: The last reply itself (its refusal text, cut calls, raw message).
    """

    stop: Literal["done", "concluded", "step_limit", "aborted"]
    steps: int
    text: str = ""
    results: tuple[StepResult, ...] = ()
    finish: FinishReason | None = None
    usage: Usage | None = None
    response_id: str | None = None
    reply: ModelStep | None = None


def plan_groups(
    runtime: PoolRuntime, calls: Sequence[ToolCallBlock]
) -> tuple[tuple[ToolCallBlock, ...], ...]:
    """Group calls as the pool would by their classification now (for display)."""
    groups: list[tuple[ToolCallBlock, ...]] = []
    run: list[ToolCallBlock] = []
    for call in calls:
        try:
            mode = runtime.execution_mode(
                ToolExecutionInput(call.id, call.name, parse_arguments(call.arguments))
            )
            parallel = mode.kind == "parallel"
        except Exception:
            parallel = False
        if parallel:
            run.append(call)
            continue
        if run:
            groups.append(tuple(run))
            run = []
        groups.append((call,))
    if run:
        groups.append(tuple(run))
    return tuple(groups)


async def _ask(
    model: TurnModel, tools: list[dict[str, Any]], abort: trio.Event | None
) -> ModelStep | None:
    # The request is cancelled when the abort fires (None then). No nursery: the model's own
    # exceptions reach the caller bare, not wrapped in an ExceptionGroup.
    if abort is None:
        return await model.step(tools)
    reply: ModelStep | None = None
    async with cancel_on_abort(abort):
        reply = await model.step(tools)
    return reply


async def run_turn(
    model: TurnModel,
    runtime: PoolRuntime,
    session: Session,
    *,
    turn: int = 0,
    max_steps: int = 10,
    abort: trio.Event | None = None,
    on_event: Callable[[TurnEvent], object] | None = None,
    max_parallel_tool_calls: int = DEFAULT_MAX_PARALLEL_TOOL_CALLS,
    accept_context: Callable[[Any], object] | None = None,
) -> TurnResult:
    """Run one turn: ask the model, run its tool calls, send the results back, repeat.

    Args:
        model: The model (see :class:`TurnModel`); it holds the conversation.
        runtime: The tools (``runtime.schemas()`` is sent on every request when available).
        session: Gets the ``tool/call`` and ``tool/result`` events of every step.
        turn: Turn number recorded on the events.
        max_steps: Tool steps allowed before the turn stops with ``"step_limit"``.
        abort: Setting it ends the turn: a pending model request is cancelled, a running step
            is aborted (its results are still committed and handed to the model).
        on_event: Called synchronously with every :data:`TurnEvent`.
        max_parallel_tool_calls: The pool's window.
        accept_context: Passed to ``execute_tool_calls``.

    Returns:
        How the turn ended, the steps run, the last text and the last step's results.

    Raises:
        ValueError: ``max_steps`` is negative.
        Exception: Whatever the model raises (e.g. the SDK's API errors), and the pool's
            scheduler failures.
    """
    if type(max_steps) is not int or max_steps < 0:
        raise ValueError("max_steps must be a non-negative integer")
    emit = on_event if on_event is not None else _ignore
    schemas = getattr(runtime, "schemas", None)
    text = ""
    last: tuple[StepResult, ...] = ()
    step = 0
    replies = _Replies()
    while True:
        if abort is not None and abort.is_set():
            return replies.result(stop="aborted", steps=step, text=text, results=last)
        emit(ModelRequested(turn, step))
        tools: list[dict[str, Any]] = schemas() if callable(schemas) else []
        reply = await _ask(model, tools, abort)
        if reply is None:
            return replies.result(stop="aborted", steps=step, text=text, results=last)
        replies.add(reply)
        emit(ModelReplied(turn, step, reply))
        text = reply.text
        if not reply.tool_calls:
            return replies.result(stop="done", steps=step, text=text, results=last)
        if step >= max_steps:
            # The calls are answered so the conversation stays valid for the next turn.
            model.add_tool_results(_not_run(reply.tool_calls))
            return replies.result(stop="step_limit", steps=step, text=text, results=last)
        emit(StepStarted(turn, step, plan_groups(runtime, reply.tool_calls)))
        with _observe(runtime, turn, step, emit):
            outcome = await execute_tool_calls(
                runtime,
                session,
                reply.tool_calls,
                turn=turn,
                step=step,
                abort=abort,
                max_parallel_tool_calls=max_parallel_tool_calls,
                accept_context=accept_context,
            )
        model.add_tool_results(outcome.results)
        emit(StepFinished(turn, step, outcome))
        step += 1
        last = outcome.results
        if outcome.aborted:
            return replies.result(stop="aborted", steps=step, text=text, results=last)
        if outcome.concluded:
            return replies.result(stop="concluded", steps=step, text=text, results=last)


def _ignore(event: TurnEvent) -> None:
    pass


class _Replies:
    """The turn's replies so far: the last one and the summed usage, for the TurnResult."""

    def __init__(self) -> None:
        self.last: ModelStep | None = None
        self.usage: Usage | None = None

    def add(self, reply: ModelStep) -> None:
        self.last = reply
        if reply.usage is not None:
            self.usage = reply.usage if self.usage is None else self.usage + reply.usage

    def result(self, **fields: Any) -> TurnResult:
        last = self.last
        if last is None:
            return TurnResult(**fields)
        return TurnResult(
            **fields,
            finish=last.finish,
            usage=self.usage,
            response_id=last.response_id,
            reply=last,
        )


def _not_run(calls: Sequence[ToolCallBlock]) -> list[StepResult]:
    result = error_result("step limit reached; the call was not run")
    return [StepResult(call.id, call.name, result) for call in calls]


# The step being observed in this task's context. Dispatch tasks inherit the context of the step's
# nursery, so a hook sees the marker of the turn that started the call: two turns running on one
# runtime each report only their own calls.
_observed_step: contextvars.ContextVar[object] = contextvars.ContextVar(
    "trio_harness_observed_step", default=None
)


class _observe:
    """Reports body starts and commits of one step through the runtime's hooks, if it has them."""

    def __init__(
        self, runtime: Any, turn: int, step: int, emit: Callable[[TurnEvent], object]
    ) -> None:
        self._disposers: list[Callable[[], None]] = []
        self._token: contextvars.Token[object] | None = None
        add_wrapper = getattr(runtime, "add_execute_wrapper", None)
        add_observer = getattr(runtime, "add_result_observer", None)
        if add_wrapper is None or add_observer is None:
            return
        marker = self._marker = object()

        async def wrapper(exec: Any, next: Callable[[], Any]) -> Any:
            if exec.parent is None and _observed_step.get() is marker:
                emit(ToolStarted(turn, step, exec.call_id, exec.name, trio.current_time()))
            return await next()

        def observer(exec: Any, result: ToolExecutionResult) -> None:
            if exec.parent is None and _observed_step.get() is marker:
                emit(
                    ToolCommitted(turn, step, exec.call_id, exec.name, result, trio.current_time())
                )

        self._disposers = [add_wrapper(wrapper), add_observer(observer)]

    def __enter__(self) -> None:
        if self._disposers:
            self._token = _observed_step.set(self._marker)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _observed_step.reset(self._token)
        for dispose in self._disposers:
            dispose()
