"""The step API: ``execute_tool_calls`` and ``execute_sub_calls``, their values and recorders.

A step's calls are parsed into inputs, run by the :class:`~.driver.Driver` under the rules of
:class:`~.machine.StepCore`, and recorded: a step writes ``tool/call`` / ``tool/result`` events to
the session log in model order; a composite's sub-calls are collected into a list.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterable, Callable, Sequence
from typing import Any

import attrs
import trio

from .._errors import SubCallDepthError
from .._log import (
    TOOL_CALL,
    TOOL_RESULT,
    Session,
    ToolCallData,
    ToolResultData,
)
from .._runtime import (
    ToolExecution,
    ToolExecutionInput,
    abort_type_error,
    parsed_input,
    refuse_awaitable,
)
from .._values import (
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
)
from .driver import Driver
from .machine import validate_cap
from .protocols import PoolRuntime, PoolTracer

__all__ = [
    "DEFAULT_MAX_PARALLEL_SUB_CALLS",
    "DEFAULT_MAX_PARALLEL_TOOL_CALLS",
    "MAX_SUB_CALL_DEPTH",
    "StepOutcome",
    "StepResult",
    "SubCall",
    "SubCallResults",
    "ToolCallBlock",
    "execute_sub_calls",
    "execute_tool_calls",
]

#: Default rolling-window size of a step (:func:`execute_tool_calls`).
DEFAULT_MAX_PARALLEL_TOOL_CALLS = 10
#: Default window of :func:`execute_sub_calls`.
DEFAULT_MAX_PARALLEL_SUB_CALLS = 10
#: How deep composite tools may nest sub-calls: a composite whose own call is this many levels
#: deep gets ``SubCallDepthError`` from :func:`execute_sub_calls` (Trio itself fails at about 500
#: nested nurseries; each level costs about two).
MAX_SUB_CALL_DEPTH = 100


@attrs.frozen
class ToolCallBlock:
    """One tool call of an assistant message, in model order.

    Attributes:
        id: The model's tool-call id.
        name: The tool name.
        arguments: The raw argument text the model wrote (parsed with ``parse_arguments``).
    """

    id: str
    name: str
    arguments: str


@attrs.frozen
class SubCall:
    """A call a composite tool issues with arguments it already holds as a value."""

    id: str
    name: str
    arguments: Any


@attrs.frozen
class StepResult:
    """One committed result of a step, with the call it answers.

    Attributes:
        call_id: The model's tool-call id.
        name: The tool name the call asked for.
        result: The committed result (the one recorded in the session log).
    """

    call_id: str
    name: str
    result: ToolExecutionResult


@attrs.frozen
class StepOutcome:
    """What a step produced besides its session events.

    Attributes:
        concluded: A committed result asked to end the turn (``ctx.conclude_turn()``).
        aborted: The step's abort was set; calls that never started got synthetic results.
        results: Every committed result, in model order (one per call, synthetic abort results
            included). Not part of equality, so ``outcome == StepOutcome(concluded=..., aborted=...)``
            keeps comparing the two flags only.
    """

    concluded: bool = False
    aborted: bool = False
    results: tuple[StepResult, ...] = attrs.field(default=(), eq=False)


class SubCallResults(list[ToolExecutionResult]):
    """The results of :func:`execute_sub_calls`: a ``list`` of results in call order.

    Attributes:
        steps: The same results as :class:`StepResult` values (call id and tool name attached).
    """

    steps: tuple[StepResult, ...]


@attrs.define(eq=False)
class _SessionRecorder:
    """Writes a step's ``tool/call`` / ``tool/result`` events and hands contexts on."""

    _session: Session
    _blocks: list[ToolCallBlock]
    _turn: int
    _step: int
    _accept_context: Callable[[Any], object] | None
    _call_seqs: list[int]
    concluded: bool = False
    # Committed results in commit order, which is model order (index i answers block i).
    results: list[ToolExecutionResult] = attrs.field(factory=list)

    def started(self, index: int) -> None:
        block = self._blocks[index]
        data = ToolCallData(self._turn, self._step, block.id, block.name, block.arguments)
        self._call_seqs[index] = self._session.append(TOOL_CALL, data).seq

    def committed(self, index: int, result: ToolExecutionResult) -> None:
        data = ToolResultData.from_result(self._turn, self._step, self._blocks[index].id, result)
        self._session.append(TOOL_RESULT, data, source_event_seqs=(self._call_seqs[index],))
        self.results.append(result)
        if result.concludes_turn:
            self.concluded = True

    def delivered(self, index: int, result: ToolExecutionResult) -> None:
        accept = self._accept_context
        if accept is not None:
            for context in result.additional_contexts:
                returned = accept(context)
                refuse_awaitable(
                    returned,
                    "accept_context must be a synchronous callable "
                    f"(it returned {type(returned).__name__}); every context would be lost",
                )

    def skipped(self, index: int) -> None:
        self.started(index)
        self.committed(index, aborted_before_dispatch_result())

    def cut_short(self, index: int) -> None:
        # Unwinding: never call back into the application (no accept_context).
        if self._call_seqs[index] < 0:
            self.started(index)
            result = aborted_before_dispatch_result()
        else:
            result = aborted_result()
        data = ToolResultData.from_result(self._turn, self._step, self._blocks[index].id, result)
        self._session.append(TOOL_RESULT, data, source_event_seqs=(self._call_seqs[index],))


@attrs.define(eq=False)
class _ListRecorder:
    """Collects sub-call results in call order (nothing is logged)."""

    results: list[ToolExecutionResult | None]

    def started(self, index: int) -> None:
        pass

    def committed(self, index: int, result: ToolExecutionResult) -> None:
        self.results[index] = result

    def delivered(self, index: int, result: ToolExecutionResult) -> None:
        pass

    def skipped(self, index: int) -> None:
        self.results[index] = aborted_before_dispatch_result()

    def cut_short(self, index: int) -> None:
        pass  # the exception propagates; no results are returned


def _check_abort(abort: object) -> None:
    error = abort_type_error(abort)
    if error is not None:
        raise error


async def execute_tool_calls(
    runtime: PoolRuntime,
    session: Session,
    tool_calls: Sequence[ToolCallBlock] | AsyncIterable[ToolCallBlock],
    *,
    turn: int = 0,
    step: int = 0,
    abort: trio.Event | None = None,
    max_parallel_tool_calls: int | None = DEFAULT_MAX_PARALLEL_TOOL_CALLS,
    accept_context: Callable[[Any], object] | None = None,
    agent: object | None = None,
    tracer: PoolTracer | None = None,
    on_inputs: Callable[[Sequence[ToolExecutionInput]], object] | None = None,
) -> StepOutcome:
    """Execute one step's tool calls: grouped, windowed, committed in model order.

    Args:
        runtime: The ``ToolRuntime`` (``execution_mode`` and ``scheduler`` are used).
        session: The log; gets a ``tool/call`` per started call and a ``tool/result`` per
            committed result (citing its call), in model order.
        tool_calls: The step's calls, in model order: a sequence, or an async iterable (e.g. the
            receive end of a ``trio`` memory channel) that yields each call as it arrives while
            the model still streams. Streamed calls start as soon as they arrive, under the
            same rules and with the same session events as the whole list would get; the step
            ends when the iterable does (an aborted step still answers every call that
            arrives, so a stream should end on the abort too). A call that is not a
            ``ToolCallBlock``, or an exception from the iterable, is a scheduler failure.
        turn: Turn number recorded on the events.
        step: Step number recorded on the events.
        abort: Setting it aborts the step (no new starts; running bodies are cancelled).
        max_parallel_tool_calls: The window: at most this many bodies run at once; ``None`` is
            "not given" (the default, 10), as upstream's ``value ?? DEFAULT`` reads its config.
        accept_context: Receives every additional context of every committed result, in order.
        agent: The agent the calls run for (passed on each input).
        tracer: Optional :class:`PoolTracer` told every phase of every call (e.g. a
            ``StepTrace``); nothing is traced when ``None``.
        on_inputs: Called with the step's inputs (a listed step only: each call's text parsed
            once, as the pool runs it) once the options are checked, before anything is logged
            or classified; e.g. to show how the calls will group (``run_turn``'s
            ``StepStarted``) without parsing them again. What it raises propagates, and the step
            does not run.

    Returns:
        Whether a committed result concluded the turn, whether the step was aborted, and the
        committed results in model order (``outcome.results``).

    Raises:
        ValueError: ``max_parallel_tool_calls`` is not a positive integer.
        TypeError: ``turn`` or ``step`` is not an ``int`` (a ``bool`` is not), or a call's
            ``id``, ``name`` or ``arguments`` is not a ``str``; nothing is logged. (``str`` and
            ``int`` subclasses are logged as their plain values.)
        Exception: The first scheduler failure, after every in-flight body settled.
    """
    cap = validate_cap(
        DEFAULT_MAX_PARALLEL_TOOL_CALLS
        if max_parallel_tool_calls is None
        else max_parallel_tool_calls
    )
    _check_abort(abort)
    if accept_context is not None and (
        not callable(accept_context) or inspect.iscoroutinefunction(accept_context)
    ):
        raise TypeError(
            "accept_context must be a synchronous callable, got "
            + ("an async function" if callable(accept_context) else type(accept_context).__name__)
        )
    turn, step = _plain_int("turn", turn), _plain_int("step", step)
    if isinstance(tool_calls, AsyncIterable):
        blocks: list[ToolCallBlock] = []
        call_seqs: list[int] = []
        recorder = _SessionRecorder(session, blocks, turn, step, accept_context, call_seqs)

        def admit(block: object) -> ToolExecutionInput:
            # A streamed call, checked and parsed as a listed one is (see below).
            plain = _plain_call(len(blocks), block)
            blocks.append(plain)
            call_seqs.append(-1)
            return parsed_input(plain.id, plain.name, plain.arguments, abort, agent=agent)

        driver = Driver(runtime, [], cap, abort, recorder, tracer, source=tool_calls, admit=admit)
    else:
        blocks = _plain_blocks(tool_calls)
        recorder = _SessionRecorder(session, blocks, turn, step, accept_context, [-1] * len(blocks))
        # The one parse of each call's argument text: the value is the pool's own.
        inputs = [
            parsed_input(block.id, block.name, block.arguments, abort, agent=agent)
            for block in blocks
        ]
        if on_inputs is not None:
            on_inputs(tuple(inputs))  # the driver's own list stays its own
        driver = Driver(runtime, inputs, cap, abort, recorder, tracer)
    aborted = await driver.run()
    return StepOutcome(
        concluded=recorder.concluded,
        aborted=aborted,
        results=_step_results(blocks, recorder.results),
    )


def _step_results(
    calls: Sequence[SubCall | ToolCallBlock], results: Sequence[ToolExecutionResult]
) -> tuple[StepResult, ...]:
    # Results are committed in model order, so result i answers call i.
    return tuple(
        StepResult(call.id, call.name, result) for call, result in zip(calls, results, strict=True)
    )


def _plain_int(option: str, value: int) -> int:
    if type(value) is int:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__index__(value)
    raise TypeError(f"execute_tool_calls: {option} must be an int, got {type(value).__name__}")


def _plain_blocks(tool_calls: Sequence[ToolCallBlock]) -> list[ToolCallBlock]:
    """The calls as exact ``ToolCallBlock`` values holding exact ``str`` fields (what the log keeps)."""
    blocks = list(tool_calls)
    for index, block in enumerate(blocks):
        if not (
            type(block) is ToolCallBlock
            and type(block.id) is str
            and type(block.name) is str
            and type(block.arguments) is str
        ):
            blocks[index] = _plain_block(index, block)
    return blocks


def _plain_call(index: int, block: object) -> ToolCallBlock:
    """Call ``index`` of a streamed step as :func:`_plain_blocks` would keep it."""
    if (
        type(block) is ToolCallBlock
        and type(block.id) is str
        and type(block.name) is str
        and type(block.arguments) is str
    ):
        return block
    return _plain_block(index, block)


def _plain_block(index: int, block: object) -> ToolCallBlock:
    fields: list[str] = []
    for name in ("id", "name", "arguments"):
        value = getattr(block, name, _MISSING)
        if value is _MISSING:
            raise TypeError(
                f"execute_tool_calls: tool_calls[{index}] must be a ToolCallBlock (id, name, "
                f"arguments), got {type(block).__name__}"
            )
        if not isinstance(value, str):
            raise TypeError(
                f"execute_tool_calls: tool_calls[{index}].{name} must be a str, "
                f"got {type(value).__name__}"
            )
        fields.append(str.__str__(value))
    return ToolCallBlock(*fields)


_MISSING: Any = object()


async def execute_sub_calls(
    ctx: ToolExecution,
    calls: Sequence[SubCall | ToolCallBlock],
    *,
    max_parallel_sub_calls: int = DEFAULT_MAX_PARALLEL_SUB_CALLS,
) -> SubCallResults:
    """Run a composite tool's sub-calls through the pool; return their results in call order.

    Sub-calls are grouped and windowed like a step's calls, under the parent's abort event. They
    are nested executions (``parent=ctx.exec``, same ``root_call_id`` and agent), so their results
    carry no presentation meta. Nothing is written to a session log: the composite decides what
    its own result says. Contexts and ``concludes_turn`` of sub-results are returned, not acted on.

    Args:
        ctx: The composite body's run context.
        calls: :class:`SubCall` (argument values) or :class:`ToolCallBlock` (raw argument text).
        max_parallel_sub_calls: The window for these sub-calls.

    Returns:
        A ``list`` of the results in call order; its ``steps`` attribute holds them as
        :class:`StepResult` values (call id and tool name attached).

    Raises:
        ValueError: ``max_parallel_sub_calls`` is not a positive integer.
        SubCallDepthError: ``ctx`` is already :data:`MAX_SUB_CALL_DEPTH` levels deep.
        Exception: The first scheduler failure, after every in-flight sub-call settled.
    """
    cap = validate_cap(max_parallel_sub_calls, "max_parallel_sub_calls must be a positive integer")
    parent = ctx.exec
    depth = 1
    ancestor = parent.parent
    while ancestor is not None:
        depth += 1
        ancestor = ancestor.parent
    if depth >= MAX_SUB_CALL_DEPTH:
        raise SubCallDepthError(MAX_SUB_CALL_DEPTH)
    abort = ctx.abort
    inputs = [
        parsed_input(
            call.id,
            call.name,
            call.arguments,
            abort,
            parent=parent,
            agent=parent.agent,
            root_call_id=parent.root_call_id,
        )
        if isinstance(call, ToolCallBlock)
        else ToolExecutionInput(
            call.id,
            call.name,
            call.arguments,
            abort,
            parent=parent,
            agent=parent.agent,
            root_call_id=parent.root_call_id,
        )
        for call in calls
    ]
    results: list[ToolExecutionResult | None] = [None] * len(inputs)
    await Driver(ctx.runtime, inputs, cap, abort, _ListRecorder(results)).run()
    out = SubCallResults(result for result in results if result is not None)
    out.steps = _step_results(calls, out)
    return out
