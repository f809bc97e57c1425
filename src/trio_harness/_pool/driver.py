"""The pool's Trio driver: it only *runs* the decisions of :class:`~.machine.StepCore`.

One driver task (the caller's) owns classification, ordered prepare, ordered commit and the
session log; dispatch tasks run in a nursery per group (the core never starts more than ``cap``
dispatches at once: that is the window), store each outcome in its slot and post the slot index
to the driver's inbox, the one ordered committer. A dispatch task that finished its dispatch
takes the next one waiting, or parks until the driver hands it one, so a group spawns at most
``cap`` tasks instead of one per call (spawning is the largest cost of a no-op call); each
dispatch still runs in the context a task spawned for it would have had, and no task outlives
its group. Before every decision the driver drains the inbox, so results that can be committed
are committed before the next call is classified or started (a commit may change the
registry). The inbox is a deque and a parked-driver wake-up (what an unbounded memory channel
with one receiver does, without its bookkeeping: one post per call is on the hot path).

Streaming: a step fed by an async iterable of calls runs one more task, the *pump*, in a nursery
around the step: it reads the source and posts each call (and the end, or the source's error) to
the inbox the dispatch tasks post settles to, so the driver waits on one inbox for whichever
comes first. The driver admits arrivals only when it drains the inbox, before every
decision, exactly as it takes settles; a call that arrived is therefore classified, started and
committed at the same points as if the whole list had been given.

Failures and cancellation:

* a scheduler failure (an exception escaping ``prepare``/``dispatch``/``finalize``/``finish`` or
  ``execution_mode``) is caught where it happens and kept; the core drains the in-flight
  dispatches and the driver raises the first failure itself, outside the nursery;
* the step's ``abort`` event is watched by one ``abort_relay`` opened before any nursery, so the
  runtime's per-body scopes are cancelled without a task per call;
* cancellation from outside (the caller's scope, ``KeyboardInterrupt``) propagates at once; while
  it unwinds, the driver closes the log synchronously (no ``await`` in that path): every recorded
  ``tool/call`` gets an ``ABORTED`` result and every call never recorded gets a synthetic pair.
"""

from __future__ import annotations

import contextvars
import types
from collections import deque
from collections.abc import AsyncIterable, Callable
from typing import Any, cast

import attrs
import trio
from trio.lowlevel import enable_ki_protection

from .._errors import TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH, unreachable
from .._runtime import (
    NO_PROOF,
    ArgsProof,
    ToolExecution,
    ToolExecutionInput,
    ToolScheduler,
    abort_relay,
    current_relay,
    direct_classifier,
    fast_input,
    raise_sole,
    stale_cancellation,
)
from .._values import ToolExecutionResult
from .machine import (
    OP_CLASSIFY,
    OP_CLOSE_GROUP,
    OP_COMMIT,
    OP_DONE,
    OP_OPEN_GROUP,
    OP_RAISE,
    OP_RECEIVE,
    OP_SKIP,
    OP_START,
    OP_WAIT,
    StepCore,
)
from .protocols import PoolRuntime, PoolTracer, Recorder

__all__ = ["Driver"]


# A settled call waiting for its commit: (exec, result, needs post-execute). A plain tuple: one
# is built per call on the hot path.
_Slot = tuple["ToolExecution", ToolExecutionResult, bool]


@attrs.frozen
class _Failed:
    # A dispatch that raised.
    error: Exception


# What the pump posts to the driver's inbox besides settled slot indices (which are >= 0).
_ARRIVED = -1
_ENDED = -2
_BROKEN = -3


class Driver:
    """Runs one :class:`StepCore` against a runtime (see the module docstring)."""

    __slots__ = (
        "_abort",
        "_admit",
        "_agent",
        "_arrivals",
        "_calls",
        "_checked",
        "_classifier",
        "_closing",
        "_core",
        "_fast",
        "_idle",
        "_inbox",
        "_inputs",
        "_pending",
        "_pump_scope",
        "_recorder",
        "_runtime",
        "_scheduler",
        "_slots",
        "_source",
        "_source_error",
        "_trace",
        "_waiter",
    )

    def __init__(
        self,
        runtime: PoolRuntime,
        inputs: list[ToolExecutionInput],
        cap: int,
        abort: trio.Event | None,
        recorder: Recorder,
        tracer: PoolTracer | None = None,
        *,
        source: AsyncIterable[Any] | None = None,
        admit: Callable[[Any], ToolExecutionInput] | None = None,
        own_arguments: bool = False,
        calls: list[tuple[str, str, Any]] | None = None,
        agent: object | None = None,
    ) -> None:
        """``source``/``admit``: a streaming step. ``inputs`` are the calls known at the start
        (they grow); ``admit`` turns each item of ``source`` into its input (and may raise).
        ``own_arguments``: the caller made every input's arguments afresh (parsed from the
        call's text) and hands them to nobody but this driver.

        ``calls``/``agent`` (with an empty ``inputs``, no tracer and no source): the calls as
        ``(call_id, name, arguments)``; call ``i``'s input is
        ``ToolExecutionInput(*calls[i], abort, agent=agent)``, built only when something needs
        it (the runtime's own scheduler and classification read the fields instead)."""
        assert calls is None or not (inputs or tracer is not None or source is not None)
        self._calls = calls
        self._agent = agent
        self._runtime = runtime
        # ``ToolRuntime.execution_mode`` without its frame (``None``: call the runtime's).
        self._classifier = direct_classifier(runtime)
        # Per call, the JSON node limit under which its classification found its arguments
        # lossless (``Registry.classify``), when only this driver holds them: no tracer (its
        # ``begin`` sees the inputs) and the runtime's own classification (which hands the
        # classifier a snapshot, never the arguments). ``None``: never trusted.
        self._checked: list[ArgsProof] | None = (
            [NO_PROOF] * (len(inputs) if calls is None else len(calls))
            if own_arguments and tracer is None and self._classifier is not None
            else None
        )
        # The optional tracer's phase callback; ``None`` costs one test per phase.
        self._trace: Callable[[str, int, object], None] | None = None
        if tracer is not None:
            tracer.begin(inputs, cap)
            self._trace = tracer.phase
        self._scheduler = runtime.scheduler
        # The runtime's own scheduler (not a wrapper of it): the driver then takes its fast
        # paths (``prepare_now``, ``dispatch_now``), which give exactly what ``prepare`` and
        # ``dispatch`` would, without their coroutines and phase objects.
        self._fast: ToolScheduler | None = (
            self._scheduler if type(self._scheduler) is ToolScheduler else None
        )
        # Call ``i``'s input, or ``None`` until it is built from ``calls[i]`` (``_input``).
        self._inputs: list[ToolExecutionInput | None] = (
            [None] * len(calls)
            if calls is not None
            else cast("list[ToolExecutionInput | None]", inputs)
        )
        count = len(self._inputs)
        self._abort = abort
        self._recorder = recorder
        self._core = StepCore(
            count,
            cap,
            aborted=abort is not None and abort.is_set(),
            stream=source is not None,
        )
        if self._core.aborted and self._trace is not None:
            self._trace("abort", -1, None)
        self._slots: list[_Slot | _Failed | None] = [None] * count
        self._source = source
        self._admit = admit
        # Calls the pump read and the driver has not admitted yet, in stream order.
        self._arrivals: deque[Any] = deque()
        self._source_error: Exception | None = None
        self._pump_scope = trio.CancelScope()
        # The inbox: settled slot indices from the dispatch tasks (at most ``cap`` at a time) and,
        # in a streaming step, the pump's messages (negative). ``_waiter`` is the driver's task
        # while it is parked waiting for a post.
        self._inbox: deque[int] = deque()
        self._waiter: trio.lowlevel.Task | None = None
        # Dispatches are entered in the order they were started (model order), as upstream
        # invokes them synchronously. Trio runs new tasks in an unspecified order, so a dispatch
        # task is not bound to a call: whichever task runs first takes the oldest pending
        # dispatch. Invariant: one entry per spawned task that has not run yet.
        self._pending: deque[tuple[int, ToolExecution, contextvars.Context]] = deque()
        # Workers: a dispatch task runs dispatches one after another while there are some (each
        # in the context a task spawned for it would have had), then parks in ``_idle`` until
        # the driver hands it the next one or the group closes (``_closing``).
        self._idle: list[trio.lowlevel.Task] = []
        self._closing = False

    @property
    def runs_tool_scheduler(self) -> bool:
        """Whether the step runs the runtime's own ``ToolScheduler`` (not a wrapper of it): its
        ``finish`` then gives every committed result, materialized."""
        return self._fast is not None

    async def run(self) -> bool:
        """Run the step; return whether it was aborted. Raises the first scheduler failure."""
        source = self._source
        if source is None:
            return await self._run()
        if isinstance(source, trio.MemoryReceiveChannel):
            # The calls already sent are known at once, as a list's are (the pump would take
            # them one checkpoint at a time).
            try:
                ended = self._take_buffered(source)
            except Exception as exc:
                self._end(exc)
                return await self._run()
            if ended:
                self._end(None)
                return await self._run()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._pump)
                try:
                    return await self._run()
                finally:
                    # Only the pump's own scope: cancelling the nursery's would swallow an
                    # outside cancellation of the step.
                    self._pump_scope.cancel()
        except BaseExceptionGroup as group:
            raise_sole(group)
            raise

    async def _pump(self) -> None:
        source = self._source
        with self._pump_scope:
            try:
                if isinstance(source, trio.MemoryReceiveChannel):
                    while not self._take_buffered(source):
                        try:
                            item = await source.receive()
                        except trio.EndOfChannel:
                            break
                        self._post(item)
                else:
                    assert source is not None
                    async for item in source:
                        self._post(item)
            except Exception as exc:
                # The source broke (e.g. the model's stream): a scheduler failure of the step.
                self._end(exc)
            else:
                self._end(None)

    def _end(self, error: Exception | None) -> None:
        self._source_error = error
        self._deliver(_ENDED if error is None else _BROKEN)

    def _post(self, item: object) -> None:
        self._arrivals.append(item)
        self._deliver(_ARRIVED)

    def _deliver(self, message: int) -> None:
        # Post to the inbox and wake the driver if it is parked (``_wait``).
        self._inbox.append(message)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            trio.lowlevel.reschedule(waiter)

    def _take_buffered(self, source: trio.MemoryReceiveChannel[Any]) -> bool:
        # Everything already sent, without a checkpoint (``receive`` has one per item); returns
        # whether the channel ended.
        while True:
            try:
                item = source.receive_nowait()
            except trio.WouldBlock:
                return False
            except trio.EndOfChannel:
                return True
            self._post(item)

    async def _run(self) -> bool:
        abort = self._abort
        try:
            if abort is not None and current_relay(abort) is None:
                # Opened before any nursery: dispatch tasks inherit it, so the runtime's body
                # scopes register with this one watcher.
                async with abort_relay(abort):
                    return await self._steps()
            return await self._steps()
        except BaseException:
            if not self._core.has_failure:
                # Cancelled from outside (or a bug): leave the log replay-valid. Synchronous.
                self._seal()
            raise

    @enable_ki_protection
    def _seal(self) -> None:
        if self._arrivals:
            # Calls read from the stream but not admitted yet are answered too.
            while self._arrivals and not self._core.has_failure:
                self._arrive()
        started, unstarted = self._core.seal()
        recorder = self._recorder
        trace = self._trace
        for index in started:
            recorder.cut_short(index)
            if trace is not None:
                trace("aborted", index, TOOL_ABORTED)
        for index in unstarted:
            recorder.cut_short(index)
            if trace is not None:
                trace("aborted", index, TOOL_ABORTED_BEFORE_DISPATCH)

    async def _steps(self) -> bool:
        core = self._core
        abort = self._abort
        while True:
            if self._inbox:
                self._drain()  # a streaming step: calls that arrived between groups
            if abort is not None and abort.is_set() and not core.aborted:
                self._abort_now()
            op, index = core.next_action()
            if op is OP_CLASSIFY:
                self._classify(index)
            elif op is OP_OPEN_GROUP:
                if self._trace is not None:
                    self._trace("group-open", index, core.group_parallel)
                try:
                    self._closing = False
                    async with trio.open_nursery() as nursery:
                        await self._group(nursery)
                except BaseExceptionGroup as group:
                    raise_sole(group)
                    raise
            elif op is OP_SKIP:
                self._skip(index)
            elif op is OP_RECEIVE:
                await self._wait()
            elif op is OP_RAISE:
                failure = core.failure
                assert isinstance(failure, BaseException)
                raise failure
            elif op is OP_DONE:
                if self._trace is not None:
                    self._trace("done", -1, core.aborted)
                return core.aborted
            else:  # pragma: no cover - the core only returns these outside a group
                unreachable("Op", op.value)

    async def _group(self, nursery: trio.Nursery) -> None:
        # START and COMMIT are handled inline (their awaits are the scheduler's own): this loop
        # runs a few times per call, and a helper coroutine per call costs more than its body.
        core = self._core
        abort = self._abort
        scheduler = self._scheduler
        fast = self._fast
        slots = self._slots
        trace = self._trace
        inbox = self._inbox
        checked = self._checked
        calls = self._calls
        while True:
            if inbox:
                self._drain()
            if abort is not None and abort.is_set() and not core.aborted:
                self._abort_now()
            op, index = core.next_action()
            if op is OP_START:
                self._start(index)
                if trace is not None:
                    trace("started", index, None)
                try:
                    if fast is None:
                        now = None
                    else:
                        proof = NO_PROOF if checked is None else checked[index]
                        input = self._inputs[index]
                        if input is None:
                            assert calls is not None
                            call_id, name, arguments = calls[index]
                            now = fast.prepare_call(
                                call_id, name, arguments, abort, self._agent, proof
                            )
                        else:
                            now = fast.prepare_now(input, proof)
                    if now is None:
                        preparation = await scheduler.prepare(self._input(index))
                        kind = preparation.kind
                        if kind != "dispatch" and kind != "post-result" and kind != "final-result":
                            unreachable("ScheduledToolPreparation", kind)
                        exec = preparation.exec
                        prepared = preparation.result
                    else:
                        kind, exec, prepared = now
                except Exception as exc:
                    self._fail(exc)
                    continue
                if trace is not None:
                    trace("prepared", index, kind)
                self._prepared(index, kind, exec, prepared, nursery)
            elif op is OP_COMMIT:
                slot = slots[index]
                assert type(slot) is tuple
                slots[index] = None
                exec, result, needs_post = slot
                try:
                    if needs_post:
                        if fast is None or (done := fast.finalize_now(exec, result)) is None:
                            result = await scheduler.finalize(exec, result)
                        else:
                            result = done
                    else:
                        result = scheduler.finish(exec, result)
                except Exception as exc:
                    self._fail(exc)
                    continue
                self._record(index, result)
            elif op is OP_CLASSIFY:
                self._classify(index)
            elif op is OP_WAIT or op is OP_RECEIVE:
                await self._wait()
            elif op is OP_CLOSE_GROUP:
                if trace is not None:
                    trace("group-close", index, None)
                self._closing = True
                idle = self._idle
                while idle:
                    trio.lowlevel.reschedule(idle.pop())
                return
            else:  # pragma: no cover - the core only returns these inside a group
                unreachable("Op", op.value)

    async def _wait(self) -> None:
        # Park until something is posted (a settle, or in a streaming step an arrival, the end or
        # the source's failure), then take everything posted. Only called with an empty inbox.
        self._waiter = trio.lowlevel.current_task()
        await trio.lowlevel.wait_task_rescheduled(self._unpark)
        self._drain()

    def _unpark(self, raise_cancel: object) -> trio.lowlevel.Abort:
        # Cancelled while parked: nobody may reschedule the task any more.
        self._waiter = None
        return trio.lowlevel.Abort.SUCCEEDED

    def _drain(self) -> None:
        inbox = self._inbox
        while inbox:
            self._settle(inbox.popleft())

    def _settle(self, index: int) -> None:
        if index < 0:
            self._message(index)
            return
        slot = self._slots[index]
        if isinstance(slot, _Failed):
            self._slots[index] = None
            self._core.dispatch_failed(index, slot.error)
        else:
            self._core.settled(index)

    def _message(self, kind: int) -> None:
        # What the pump posted, in stream order (see ``_pump``).
        if kind == _ARRIVED:
            if self._core.has_failure:
                self._arrivals.popleft()  # nothing more is logged after a failure
            else:
                self._arrive()
        elif kind == _ENDED:
            self._core.end_stream()
        else:
            error = self._source_error
            assert error is not None
            self._core.fail(error)

    def _arrive(self) -> None:
        item = self._arrivals.popleft()
        admit = self._admit
        assert admit is not None
        try:
            input = admit(item)
        except Exception as exc:
            self._core.fail(exc)
            return
        self._inputs.append(input)
        self._slots.append(None)
        if self._checked is not None:
            self._checked.append(NO_PROOF)
        index = self._core.arrived()
        if self._trace is not None:
            self._trace("arrived", index, (input.call_id, input.name))

    def _fail(self, error: Exception) -> None:
        # Failures that settled earlier in a dispatch task come first.
        self._drain()
        self._core.fail(error)

    def _input(self, index: int) -> ToolExecutionInput:
        # Call ``index``'s input, built from its call the first time something needs it.
        input = self._inputs[index]
        if input is None:
            calls = self._calls
            assert calls is not None
            call_id, name, arguments = calls[index]
            input = self._inputs[index] = fast_input(
                call_id, name, arguments, self._abort, self._agent
            )
        return input

    def _classify(self, index: int) -> None:
        input = self._inputs[index]
        classifier = self._classifier
        try:
            if classifier is None:
                mode = self._runtime.execution_mode(self._input(index))
            else:
                if input is None:
                    assert self._calls is not None
                    _, name, arguments = self._calls[index]
                else:
                    name, arguments = input.name, input.arguments
                mode, checked = classifier(name, arguments)
                if self._checked is not None:
                    self._checked[index] = checked
        except Exception as exc:
            self._fail(exc)
            return
        if self._trace is not None:
            self._trace("classified", index, mode.kind)
        self._core.classified(index, mode.kind == "parallel")

    def _prepared(
        self,
        index: int,
        kind: str,
        exec: ToolExecution,
        result: ToolExecutionResult | None,
        nursery: trio.Nursery,
    ) -> None:
        if self._inbox:
            self._drain()
        if kind == "dispatch":
            if self._core.prepared(index, dispatch=True):
                self._pending.append((index, exec, contextvars.copy_context()))
                idle = self._idle
                if idle:
                    trio.lowlevel.reschedule(idle.pop())
                else:
                    nursery.start_soon(self._worker)
        else:
            # A result-carrying preparation; a scheduler that breaks that fails at the commit.
            self._slots[index] = (exec, cast(ToolExecutionResult, result), kind == "post-result")
            self._core.prepared(index, dispatch=False)

    async def _worker(self) -> None:
        # Taken before any checkpoint: workers enter dispatches in the order they run, and the
        # queue is in start order, so dispatches are entered in model order.
        pending = self._pending
        idle = self._idle
        task = trio.lowlevel.current_task()

        def unpark(raise_cancel: object) -> trio.lowlevel.Abort:
            # Cancelled while idle (the group's nursery is unwinding).
            idle.remove(task)
            return trio.lowlevel.Abort.SUCCEEDED

        while True:
            if pending:
                index, exec, context = pending.popleft()
                await _in_context(context, self._dispatch(index, exec))
            elif self._closing:
                return
            else:
                idle.append(task)
                await trio.lowlevel.wait_task_rescheduled(unpark)

    async def _dispatch(self, index: int, exec: ToolExecution) -> None:
        slot: _Slot | _Failed
        if self._trace is not None:
            self._trace("body-started", index, None)
        try:
            fast = self._fast
            if fast is None or (body := fast.dispatch_now(exec)) is None:
                outcome = await self._scheduler.dispatch(exec)
                slot = (exec, outcome.result, outcome.kind == "post-result")
            else:
                # ``ToolScheduler.dispatch`` with no execute wrapper, written out.
                try:
                    result = await body
                except Exception as error:
                    slot = (exec, fast.dispatch_failed(exec, error), False)
                except trio.Cancelled as cancelled:
                    failure = stale_cancellation(cancelled)
                    if failure is None:
                        raise
                    slot = (exec, fast.dispatch_failed(exec, failure), False)
                else:
                    slot = (exec, fast.body_dispatched(exec, result), True)
        except Exception as exc:
            # A scheduler failure: kept for the driver, never raised into the nursery (siblings
            # must keep running until they settle).
            slot = _Failed(exc)
        if self._trace is not None:
            self._trace("settled", index, slot.error if type(slot) is _Failed else None)
        self._slots[index] = slot
        self._inbox.append(index)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            trio.lowlevel.reschedule(waiter)

    def _abort_now(self) -> None:
        self._core.abort()
        if self._trace is not None:
            self._trace("abort", -1, None)

    @enable_ki_protection
    def _skip(self, first: int) -> None:
        # The synthetic pairs of an abort and the core's report, as one protected unit.
        trace = self._trace
        for index in range(first, self._core.count):
            self._recorder.skipped(index)
            if trace is not None:
                trace("aborted", index, TOOL_ABORTED_BEFORE_DISPATCH)
        self._core.skipped()

    @enable_ki_protection
    def _start(self, index: int) -> None:
        # Protected: a SIGINT between the log's append and the core's (and recorder's) bookkeeping
        # would make the seal add a second ``tool/call`` for this call.
        self._recorder.started(index)

    @enable_ki_protection
    def _commit(self, index: int, result: ToolExecutionResult) -> bool:
        # Recording and the core's report happen with no checkpoint and no application code
        # between them, and protected from KeyboardInterrupt, so neither an outside cancellation
        # nor a SIGINT ever sees a recorded result the core still counts as uncommitted (the seal
        # would then record a second result for the call).
        try:
            self._recorder.committed(index, result)
        except Exception as exc:
            self._core.committed_call(index)
            self._fail(exc)
            return False
        self._core.committed_call(index)
        return True

    def _record(self, index: int, result: ToolExecutionResult) -> None:
        if self._commit(index, result):
            if self._trace is not None:
                self._trace("committed", index, result)
            # Application callbacks (``accept_context``) run only once the commit is booked.
            try:
                self._recorder.delivered(index, result)
            except Exception as exc:
                self._fail(exc)


@types.coroutine
def _in_context(context: contextvars.Context, coro: Any) -> Any:
    # Runs ``coro`` as if it were its own task's coroutine in ``context`` (a worker runs many
    # dispatches; none may see another's context changes): every step of it in the context,
    # every trap and answer passed through unchanged. An exception thrown in is thrown on from
    # outside the ``except`` block, so the coroutine sees no exception being handled.
    run = context.run
    failure: BaseException | None = None
    try:
        trap = run(coro.send, None)
        while True:
            try:
                answer = yield trap
            except BaseException as exc:
                failure = exc
            if failure is None:
                trap = run(coro.send, answer)
            else:
                thrown, failure = failure, None
                trap = run(coro.throw, thrown)
                del thrown
    except StopIteration as stop:
        return stop.value
