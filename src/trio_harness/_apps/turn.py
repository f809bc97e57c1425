"""A turn loop: model request → tool calls → pool → results → next request.

:func:`run_turn` drives any :class:`TurnModel` (a small protocol; ready implementations live in
:mod:`trio_harness.providers`) against a runtime. It stops when the model answers without tool
calls, a tool concludes the turn, the step limit is hit, or the abort event fires. Progress is
reported as :data:`TurnEvent` values to an ``on_event`` callback, so an app can print what runs.

Every tool call of every reply is answered, in the log and to the model, whatever ends the
turn: calls a step limit stops are run through the pool already aborted (they get its synthetic
``ABORTED_BEFORE_DISPATCH`` pairs), and a step cut short by a cancellation from outside, a
``KeyboardInterrupt`` or a scheduler failure is settled (``settle_step``) and its results handed
to the model before the exception goes on.

Streaming dispatch: a model that offers :attr:`StreamingTurnModel.step_streaming` (the ready
provider models do when constructed with ``stream=True``) hands each tool call over the moment
it is complete, and the pool starts it while the reply still streams; the session log is event
for event the one the same calls given as a list get. See :class:`StreamingTurnModel`.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias

import attrs
import trio
from trio.lowlevel import enable_ki_protection

from .._json import parse_arguments
from .._log import Session
from .._pool import (
    DEFAULT_MAX_PARALLEL_TOOL_CALLS,
    PoolRuntime,
    PoolTracer,
    StepOutcome,
    StepResult,
    ToolCallBlock,
    execute_tool_calls,
)
from .._runtime import ToolExecutionInput, cancel_on_abort, raise_sole
from .approval_log import PausedStep, PendingCall, record_pending
from .conversation import settle_step
from .turn_events import (
    ModelReplied,
    ModelRequested,
    StepFinished,
    StepStarted,
    ToolCommitted,
    ToolStarted,
    TurnEvent,
    TurnResult,
)
from .turn_model import (
    ModelStep,
    StepStreaming,
    TextDelta,
    TurnModel,
    Usage,
    text_to,
)
from .turn_observe import observe_step

__all__ = [
    "HoldPolicy",
    "ModelReplied",
    "ModelRequested",
    "StepFinished",
    "StepStarted",
    "StepTracerFactory",
    "ToolCommitted",
    "ToolStarted",
    "TurnEvent",
    "TurnResult",
    "plan_groups",
    "run_turn",
]


def plan_groups(
    runtime: PoolRuntime,
    calls: Sequence[ToolCallBlock],
    inputs: Sequence[ToolExecutionInput] | None = None,
) -> tuple[tuple[ToolCallBlock, ...], ...]:
    """Group calls as the pool would by their classification now (for display).

    ``inputs`` are the pool's own inputs of ``calls`` (``execute_tool_calls``'s ``on_inputs``),
    classified as they are, so the argument text is not parsed again; without them each text
    is parsed here.
    """
    groups: list[tuple[ToolCallBlock, ...]] = []
    run: list[ToolCallBlock] = []
    for index, call in enumerate(calls):
        try:
            input = (
                ToolExecutionInput(call.id, call.name, parse_arguments(call.arguments))
                if inputs is None
                else inputs[index]
            )
            parallel = runtime.execution_mode(input).kind == "parallel"
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
    model: TurnModel,
    tools: list[dict[str, Any]],
    abort: trio.Event | None,
    text: Callable[[str], object] | None,
) -> ModelStep | None:
    # The request is cancelled when the abort fires (None then). No nursery: the model's own
    # exceptions reach the caller bare, not wrapped in an ExceptionGroup.
    with text_to(text):
        if abort is None:
            return await model.step(tools)
        reply: ModelStep | None = None
        async with cancel_on_abort(abort):
            reply = await model.step(tools)
        return reply


#: Makes a tracer for one step: ``(turn, step) -> PoolTracer | None`` (e.g. a new ``StepTrace``).
StepTracerFactory: TypeAlias = Callable[[int, int], "PoolTracer | None"]


@enable_ki_protection
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
    tracer: StepTracerFactory | None = None,
    stream_calls: bool = True,
    agent: object | None = None,
    hold: HoldPolicy | None = None,
    resume: PausedStep | None = None,
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
        on_event: Called synchronously with every :data:`TurnEvent`. An exception it raises
            is the app's, never a tool's result: the callback is not called again, the step
            it came in runs to its end (every call answered, logged and handed to the model),
            and then ``run_turn`` raises it, before asking the model again.
        max_parallel_tool_calls: The pool's window.
        accept_context: Passed to ``execute_tool_calls``.
        tracer: Called with ``(turn, step)`` before each step; the tracer it returns (e.g. a
            new ``StepTrace(turn=turn, step=step)``) is given to the pool for that step, so
            every step can be drawn.
        stream_calls: Use the model's ``step_streaming`` when it offers one (see
            :class:`StreamingTurnModel`): each tool call starts as soon as it is complete,
            while the reply still streams. ``False`` waits for the whole reply, as for a model
            without it. A step at the step limit is never streamed, nor any step with ``hold``.
        agent: The agent the calls run for (``ApprovalRequest.agent``): an ``Ask`` reaches the
            runtime's approval service only for calls that have one.
        hold: Deferred approval (see :data:`HoldPolicy`): called with each reply's calls; when
            it names calls still waiting for a decision, the step runs only the calls before the
            first of them (to their end, committed), records an ``approval/pending`` event and
            the turn ends ``"paused"``, nothing handed to the model.
        resume: A paused step to finish first (its decisions given): its remaining calls run
            (the edited ones with their new arguments), the step's results go to the model and
            the turn goes on from the next step.

    Returns:
        How the turn ended, the steps run, the last text and the last step's results.

    Raises:
        ValueError: ``max_steps`` is negative.
        Exception: Whatever the model raises (e.g. the SDK's API errors), and the pool's
            scheduler failures, each as itself. Whatever interrupts a step (these, a
            cancellation from outside, ``KeyboardInterrupt``), the step's calls are all answered
            in ``session`` and handed to the model first. ``KeyboardInterrupt`` is delivered
            at the turn's next checkpoint (the loop's bookkeeping is protected from it).
        Exception: What ``on_event`` raised, once its step is answered (the step's own
            exception, if it has one, goes on instead).
        ExceptionGroup: The model's stream raised and the pool failed in one streamed step:
            both, ``[model error, scheduler failure]``, once every call in flight settled;
            unless both are ``OSError`` s with one ``errno`` (a full disk under the log both
            write to): then the pool's, bare, naming the other in a note.
    """
    if type(max_steps) is not int or max_steps < 0:
        raise ValueError("max_steps must be a non-negative integer")
    emit = _Events(on_event)
    schemas = getattr(runtime, "schemas", None)
    text = ""
    last: tuple[StepResult, ...] = ()
    step = 0
    replies = _Replies(emit)

    async def run_part(
        calls: Sequence[ToolCallBlock], start: int, held: Sequence[PendingCall]
    ) -> tuple[StepOutcome, tuple[PendingCall, ...]]:
        # calls[start:] up to the first held call without a decision (the edited ones with
        # their new arguments); what it returns paused is recorded before it returns.
        waiting = [call.index for call in held if call.decision is None and call.index >= start]
        stop = waiting[0] if waiting else len(calls)
        edited = {call.index: call.call for call in held if call.decision is not None}
        part = [edited.get(index, calls[index]) for index in range(start, stop)]
        outcome = StepOutcome(concluded=False, aborted=False, results=())
        if part:
            on_inputs = None
            if emit.listening:  # plan_groups classifies every call: only for a listener

                def on_inputs(inputs: Sequence[ToolExecutionInput]) -> None:
                    # The pool's own inputs: each call's text is parsed once, for both.
                    emit(StepStarted(turn, step, plan_groups(runtime, part, inputs)))

            observe = observe_step(runtime, turn, step, emit, listening=emit.listening)
            with observe:
                outcome = await execute_tool_calls(
                    runtime,
                    session,
                    part,
                    turn=turn,
                    step=step,
                    abort=abort,
                    max_parallel_tool_calls=max_parallel_tool_calls,
                    accept_context=accept_context,
                    agent=agent,
                    tracer=observe.tracer(tracer(turn, step) if tracer is not None else None),
                    on_inputs=on_inputs,
                )
        if not waiting:
            return outcome, ()
        if outcome.aborted or (abort is not None and abort.is_set()):
            # Aborted before the pause: the waiting calls are answered as never started.
            rest = await execute_tool_calls(
                runtime, session, calls[stop:], turn=turn, step=step, abort=_already_set()
            )
            return StepOutcome(
                concluded=outcome.concluded,
                aborted=True,
                results=outcome.results + rest.results,
            ), ()
        paused = tuple(call for call in held if call.index >= stop)
        record_pending(session, paused)
        return outcome, paused

    if resume is not None:
        step = resume.step
        done, still, answers = await _finish_paused(resume, run_part, model, session, turn)
        if still:
            return replies.result(stop="paused", steps=step, text=text, results=last, pending=still)
        emit(StepFinished(turn, step, attrs.evolve(done, results=answers)))
        step += 1
        last = answers
        if done.aborted:
            return replies.result(stop="aborted", steps=step, text=text, results=last)
        if done.concluded:
            return replies.result(stop="concluded", steps=step, text=text, results=last)
    while True:
        if abort is not None and abort.is_set():
            return replies.result(stop="aborted", steps=step, text=text, results=last)
        emit(ModelRequested(turn, step))
        # The callback's error (from this event, or from the step before, now answered) goes on
        # before the model is asked again; replies.result() raises it on every other way out.
        emit.raise_error()
        tools: list[dict[str, Any]] = schemas() if callable(schemas) else []
        streaming: StepStreaming | None = None
        if stream_calls and step < max_steps and hold is None:
            streaming = getattr(model, "step_streaming", None)
        if streaming is not None:
            streamed = _StreamedStep(
                model, streaming, runtime, session, turn, step, abort, emit, replies, agent
            )
            reply, outcome = await streamed.run(
                tools,
                max_parallel_tool_calls,
                accept_context,
                tracer(turn, step) if tracer is not None else None,
            )
            if reply is not None:
                text = reply.text
            if outcome is None:  # no call was handed over
                stop = "aborted" if reply is None else "done"
                return replies.result(stop=stop, steps=step, text=text, results=last)
            emit(StepFinished(turn, step, outcome))
            step += 1
            last = outcome.results
            if reply is None or outcome.aborted:
                return replies.result(stop="aborted", steps=step, text=text, results=last)
            if outcome.concluded:
                return replies.result(stop="concluded", steps=step, text=text, results=last)
            if reply.finish in _CUT:
                # Cut short after some calls ran: they are answered, the turn ends as a cut
                # reply's does.
                return replies.result(stop="done", steps=step, text=text, results=last)
            continue
        reply = await _ask(model, tools, abort, emit.text(turn, step))
        if reply is None:
            return replies.result(stop="aborted", steps=step, text=text, results=last)
        replies.add(reply)
        text = reply.text
        if not reply.tool_calls:
            emit(ModelReplied(turn, step, reply))
            return replies.result(stop="done", steps=step, text=text, results=last)
        limited = step >= max_steps
        results: tuple[StepResult, ...] | None = None
        paused: tuple[PendingCall, ...] = ()
        try:
            # Inside the step: a KeyboardInterrupt (or SystemExit) the callback raises still
            # leaves every call of the reply answered, in the log and to the model.
            emit(ModelReplied(turn, step, reply))
            if limited:
                step_tracer = tracer(turn, step) if tracer is not None else None
                # The calls are answered, through the pool, as calls it never started: the log
                # and the model get the same synthetic pairs as an abort before dispatch.
                outcome = await execute_tool_calls(
                    runtime,
                    session,
                    reply.tool_calls,
                    turn=turn,
                    step=step,
                    abort=_already_set(),
                    tracer=step_tracer,
                )
            else:
                held = hold(turn, step, reply.tool_calls) if hold is not None else ()
                outcome, paused = await run_part(reply.tool_calls, 0, held)
            if not paused:
                results = outcome.results
        except BaseException:
            # Synchronous (no checkpoint) and protected: the log gets a result for every call,
            # and the model every result, before the exception goes on.
            results = _settle_unwinding(session, turn, step, reply.tool_calls)
            raise
        finally:
            if results is not None:
                model.add_tool_results(results)
        if limited:
            return replies.result(stop="step_limit", steps=step, text=text, results=last)
        if paused:
            return replies.result(
                stop="paused", steps=step, text=text, results=last, pending=paused
            )
        emit(StepFinished(turn, step, outcome))
        step += 1
        last = outcome.results
        if outcome.aborted:
            return replies.result(stop="aborted", steps=step, text=text, results=last)
        if outcome.concluded:
            return replies.result(stop="concluded", steps=step, text=text, results=last)


async def _finish_paused(
    paused: PausedStep,
    run_part: Callable[
        [Sequence[ToolCallBlock], int, Sequence[PendingCall]],
        Awaitable[tuple[StepOutcome, tuple[PendingCall, ...]]],
    ],
    model: TurnModel,
    session: Session,
    turn: int,
) -> tuple[StepOutcome, tuple[PendingCall, ...], tuple[StepResult, ...]]:
    """Run a paused step's remaining calls; ``(outcome, still paused, the step's results)``.

    Every result of the step is read back from the log (the calls before the pause may have run
    in another process) and handed to the model once none is waiting; whatever interrupts the
    part, the whole step is settled and handed over first."""
    step = paused.step
    results: tuple[StepResult, ...] | None = None
    still: tuple[PendingCall, ...] = ()
    try:
        outcome, still = await run_part(paused.calls, paused.pending[0].index, paused.pending)
        if not still:
            results = settle_step(session, turn, step, paused.calls)
    except BaseException:
        results = _settle_unwinding(session, turn, step, paused.calls)
        raise
    finally:
        if results is not None:
            model.add_tool_results(results)
    return outcome, still, results or ()


def _settle_unwinding(
    session: Session, turn: int, step: int, calls: Sequence[ToolCallBlock]
) -> tuple[StepResult, ...] | None:
    """``settle_step`` while an exception unwinds the step: the results to hand to the model,
    or ``None`` when the log refuses the calls (not ``str``; the first error goes on)."""
    try:
        return settle_step(session, turn, step, calls)
    except Exception:
        return None


#: Deferred approval's policy for ``run_turn``: ``(turn, step, calls) -> pending``: the calls of
#: a reply that need a person's decision, in model order, each with its index in ``calls`` and
#: its decision if one is known (``()``: none).
HoldPolicy: TypeAlias = Callable[[int, int, Sequence[ToolCallBlock]], Sequence[PendingCall]]


class _Events:
    """``on_event`` as the turn calls it: an exception it raises is kept, not let through.

    The callback is the app's code running inside the pool (a tool's execute wrapper, a result
    observer) and inside the streamed step's tasks: raised there, its error would become a
    tool's result or be logged and lost. So the first exception is kept and the callback is not
    called again; the turn raises it (:meth:`raise_error`) once the step it came in is answered.
    """

    def __init__(self, on_event: Callable[[TurnEvent], object] | None) -> None:
        self._on_event = on_event
        self._error: Exception | None = None

    def __call__(self, event: TurnEvent) -> None:
        if self._on_event is None or self._error is not None:
            return
        try:
            self._on_event(event)
        except Exception as exc:
            self._error = exc

    @property
    def listening(self) -> bool:
        """Whether an event emitted now reaches the callback (so it is worth building)."""
        return self._on_event is not None and self._error is None

    def text(self, turn: int, step: int) -> Callable[[str], object] | None:
        """The sink of a request's :func:`~.turn_model.report_text`: ``TextDelta`` events, or
        ``None`` without a callback."""
        if self._on_event is None:
            return None
        return lambda fragment: self(TextDelta(turn, step, fragment))

    def raise_error(self) -> None:
        """Raise the callback's exception, if it raised one."""
        error = self._error
        if error is not None:
            raise error


# The neutral finish reasons of a reply cut short (``providers.CUT``, which builds on this package).
_CUT = frozenset({"length", "content_filter", "refusal", "incomplete"})


class _StreamedStep:
    """One streamed step: the model streams in one task and hands each complete call to the
    pool, which runs in the caller's task, through an unbounded memory channel.

    The pool gets a private abort event: the user's abort sets it (and cancels the request), and
    so does a model error, so the calls already handed over drain to ``ABORTED`` (started) or
    ``ABORTED_BEFORE_DISPATCH`` and are all answered before the error goes on as itself. When
    the pool fails too (a scheduler failure), both go on in one ``ExceptionGroup``.
    """

    def __init__(
        self,
        model: TurnModel,
        streaming: StepStreaming,
        runtime: PoolRuntime,
        session: Session,
        turn: int,
        step: int,
        abort: trio.Event | None,
        emit: _Events,
        replies: _Replies,
        agent: object | None = None,
    ) -> None:
        self._agent = agent
        self._model = model
        self._streaming = streaming
        self._runtime = runtime
        self._session = session
        self._turn = turn
        self._step = step
        self._abort = abort
        self._emit = emit
        self._replies = replies
        self._send, self._receive = trio.open_memory_channel[ToolCallBlock](math.inf)
        # Every call handed over, in model order (what the model's stored message holds).
        self.sent: list[ToolCallBlock] = []
        self._stop = trio.Event()
        self._model_scope = trio.CancelScope()
        self._watch_scope = trio.CancelScope()
        self.reply: ModelStep | None = None
        self.error: Exception | None = None

    def _on_call(self, call: ToolCallBlock) -> None:
        if not self.sent and self._emit.listening:
            # The calls known so far are this one: one group, whatever its classification, so
            # nothing is parsed or classified for the event (the pool does both, once).
            self._emit(StepStarted(self._turn, self._step, ((call,),), complete=False))
        self._send.send_nowait(call)
        self.sent.append(call)

    async def _ask(self, tools: list[dict[str, Any]]) -> None:
        try:
            with self._model_scope, text_to(self._emit.text(self._turn, self._step)):
                reply = await self._streaming(tools, self._on_call)
                self.reply = reply
                self._replies.add(reply)
                self._emit(ModelReplied(self._turn, self._step, reply))
        except Exception as exc:
            # The model's error: the step is aborted; run() raises it once every call handed
            # over is answered.
            self.error = exc
            self._stop.set()
        finally:
            self._send.close()

    async def _watch(self, abort: trio.Event) -> None:
        with self._watch_scope:
            await abort.wait()
            self._stop.set()
            self._model_scope.cancel()

    async def run(
        self,
        tools: list[dict[str, Any]],
        window: int,
        accept_context: Callable[[Any], object] | None,
        step_tracer: PoolTracer | None,
    ) -> tuple[ModelStep | None, StepOutcome | None]:
        """``(reply, outcome)``: the reply (``None`` when an abort cancelled it) and the step's
        outcome (``None`` when no call was handed over). Every call handed over is answered in
        the log and to the model before this returns or raises."""
        turn, step = self._turn, self._step
        outcome: StepOutcome | None = None
        failure: Exception | None = None
        results: tuple[StepResult, ...] | None = None
        try:
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._ask, tools)
                    if self._abort is not None:
                        nursery.start_soon(self._watch, self._abort)
                    try:
                        observe = observe_step(
                            self._runtime, turn, step, self._emit, listening=self._emit.listening
                        )
                        with observe:
                            outcome = await execute_tool_calls(
                                self._runtime,
                                self._session,
                                self._receive,
                                turn=turn,
                                step=step,
                                abort=self._stop,
                                max_parallel_tool_calls=window,
                                accept_context=accept_context,
                                agent=self._agent,
                                tracer=observe.tracer(step_tracer),
                            )
                    except Exception as exc:  # a scheduler failure: the request is cancelled
                        failure = exc
                        self._model_scope.cancel()
                    finally:
                        self._watch_scope.cancel()
            except BaseExceptionGroup as group:
                raise_sole(group)
                raise
            if failure is not None:
                results = self._settle()
                error = self.error
                if error is not None and _one_failure(error, failure):
                    # One cause seen twice (a full disk under the log both write to): one
                    # error, so that `except OSError` always works.
                    failure.add_note(f"the model's stream failed with it too: {error!r}")
                    raise failure
                if error is not None:
                    # Two independent failures of one step, neither caused by the other: both
                    # go on, each as itself, as a nursery of the two tasks would raise them.
                    raise ExceptionGroup(
                        f"the model's stream and the pool both failed in turn {turn}, step {step}",
                        [error, failure],
                    )
                raise failure
            reply = self.reply
            if reply is not None and list(reply.tool_calls) != self.sent:
                # A model breaking the contract: every call of its reply is answered (the
                # missing ones as never started) before the error, so the conversation holds.
                handed = [call.id for call in self.sent]
                self.sent = list(reply.tool_calls)
                results = self._settle()
                raise TypeError(
                    "step_streaming returned tool calls other than those it handed to on_call "
                    f"({[call.id for call in reply.tool_calls]}; handed over: {handed})"
                )
            if outcome is not None:
                results = outcome.results
        except BaseException:
            # Cancelled from outside, KeyboardInterrupt: synchronous, as in the list step.
            if results is None:
                results = self._settle()
            raise
        finally:
            if results is not None and self.sent:
                self._model.add_tool_results(results)
        if self.error is not None:
            raise self.error
        return self.reply, outcome if self.sent else None

    @enable_ki_protection
    def _settle(self) -> tuple[StepResult, ...] | None:
        try:
            return settle_step(self._session, self._turn, self._step, self.sent)
        except Exception:  # calls the log refuses (not str): the first error goes on
            return None


def _one_failure(first: Exception, second: Exception) -> bool:
    """Whether two errors of one step are one failure: ``OSError`` s with one ``errno``."""
    return (
        isinstance(first, OSError)
        and isinstance(second, OSError)
        and first.errno is not None
        and first.errno == second.errno
    )


class _Replies:
    """The turn's replies so far: the last one and the summed usage, for the TurnResult (which
    the turn does not return when its ``on_event`` raised: that error goes on instead)."""

    def __init__(self, events: _Events) -> None:
        self._events = events
        self.last: ModelStep | None = None
        self.usage: Usage | None = None

    def add(self, reply: ModelStep) -> None:
        self.last = reply
        if reply.usage is not None:
            self.usage = reply.usage if self.usage is None else self.usage + reply.usage

    def result(self, **fields: Any) -> TurnResult:
        self._events.raise_error()
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


def _already_set() -> trio.Event:
    event = trio.Event()
    event.set()
    return event
