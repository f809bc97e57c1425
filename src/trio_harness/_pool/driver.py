"""The pool's Trio driver: it only *runs* the decisions of :class:`~.machine.StepCore`.

How Trio's primitives carry the rules of one step:

* **The ordered committer** is the driver's own task (the caller's). It alone asks the core what
  to do next and does it: classify a call (``runtime.execution_mode``), record its start and
  ``await scheduler.prepare``, commit the call at the cursor (``await scheduler.finalize`` or
  ``scheduler.finish``, then the recorder). Policy and results therefore stay in model order.
* **A nursery per group.** Each group of the core runs in a nursery of its own; its dispatch
  tasks cannot outlive it.
* **The window is a** ``trio.CapacityLimiter(cap)``. A dispatch task holds one token, taken on
  its behalf by the driver when it is spawned and released when its dispatch returns; the core
  counts the same dispatches and starts a call only while a token is free (so the driver takes
  it with ``acquire_on_behalf_of_nowait``; a ``WouldBlock`` there would be a bug of the core).
* **A memory channel carries settled slots to the committer.** A dispatch task sends its slot
  (the call's index, its execution and result, or the scheduler failure it raised); the driver
  receives when the core says ``WAIT``, and takes everything already sent before every other
  decision, so a result that can be committed is committed before the next call is classified
  or started (a commit may change the registry).
* **Cancel scopes for abort.** The step opens one :func:`~.._runtime.abort_relay` for its abort
  event (a sub-call step whose event already has one reuses it): a watcher task that, once the
  event is set, cancels the cancel scope each running body registered with it (through the
  runtime's ``watch_scope``). The driver checks the event before every decision and tells the
  core, which then starts nothing more.
* **Deferred failures.** A scheduler failure (an exception escaping ``prepare``, ``dispatch``,
  ``finalize``, ``finish``, ``execution_mode``, ``accept_context``, the recorder or a streamed
  step's source) is caught where it happens and reported to the core, which drains the
  in-flight dispatches; the driver raises it itself, outside the nursery, once every dispatch
  settled.

Dispatches are *entered* in model order, as upstream invokes them synchronously. Trio may run
newly spawned tasks in either order, so a dispatch task is not bound to a call: the driver
queues ``(index, exec)`` when the core says a prepared call dispatches, spawns one task for it,
and whichever task runs first takes the oldest queued dispatch. (Each task still runs exactly
one dispatch, in the context it was spawned with.)

Streaming: a step fed by an async iterable of calls runs one more task, the *pump*, in a nursery
around the step: it reads the source and sends each call (then the end, or the source's error)
on the same channel the dispatch tasks send their slots on, so the committer waits for whichever
comes first and admits arrivals at the same points as settles.

Cancellation from outside (the caller's scope, ``KeyboardInterrupt``) propagates at once; while
it unwinds, the driver closes the log synchronously: every recorded ``tool/call`` gets an
``ABORTED`` result and every call never recorded gets a synthetic pair, unless a scheduler
failure came first (one a dispatch task already sent counts: the seal takes what was sent).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import AsyncIterable, Callable
from typing import Any, NamedTuple

import trio
from trio.lowlevel import enable_ki_protection

from .._errors import TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH, unreachable
from .._runtime import (
    ToolExecution,
    ToolExecutionInput,
    abort_relay,
    current_relay,
    raise_sole,
)
from .._values import ToolExecutionResult
from .machine import Op, StepCore
from .protocols import PoolRuntime, PoolTracer, Recorder

__all__ = ["Driver"]


class _Settled(NamedTuple):
    """A dispatch returned: call ``call``'s result, and whether post-execute still runs."""

    call: int
    exec: ToolExecution
    result: ToolExecutionResult
    needs_post: bool


class _Failed(NamedTuple):
    """A dispatch raised: a scheduler failure."""

    call: int
    error: Exception


class _Arrived(NamedTuple):
    """The pump read one more call of a streaming step."""

    item: object


class _Ended(NamedTuple):
    """The pump's source ended (``error`` is ``None``) or raised ``error``."""

    error: Exception | None


_Message = _Settled | _Failed | _Arrived | _Ended


class Driver:
    """Runs one :class:`StepCore` against a runtime (see the module docstring).

    Args:
        runtime: Classifies calls (``execution_mode``) and holds the scheduler (read once).
        inputs: The calls known at the start, in model order (a streaming step appends).
        cap: The window.
        abort: The step's abort event, or ``None``.
        recorder: Where started, committed and skipped calls are reported.
        tracer: Told every phase of every call, or ``None``.
        source: A streaming step's async iterable of calls.
        admit: Turns each item of ``source`` into its input (and may raise: a scheduler
            failure).
    """

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
    ) -> None:
        self._runtime = runtime
        self._scheduler = runtime.scheduler
        self._inputs = inputs
        self._abort = abort
        self._recorder = recorder
        self._trace: Callable[[str, int, object], None] | None = None
        if tracer is not None:
            tracer.begin(inputs, cap)
            self._trace = tracer.phase
        self._core = StepCore(
            len(inputs),
            cap,
            aborted=abort is not None and abort.is_set(),
            stream=source is not None,
        )
        if self._core.aborted:
            self._tell("abort", -1, None)
        self._source = source
        self._admit = admit
        self._window = trio.CapacityLimiter(cap)
        self._send, self._receive = trio.open_memory_channel[_Message](math.inf)
        # Messages sent on the channel and not received yet: the committer reads the channel
        # without waiting only when it holds something (an empty one raises ``WouldBlock``).
        self._unread = 0
        # Settled slots received and not committed yet, by call index.
        self._slots: dict[int, _Settled] = {}
        # Prepared dispatches waiting for a task to take them, in model order. Invariant: one
        # entry per spawned dispatch task that has not run yet.
        self._pending: deque[tuple[int, ToolExecution]] = deque()

    async def run(self) -> bool:
        """Run the step; return whether it was aborted. Raises the first scheduler failure."""
        if self._source is None:
            return await self._run()
        pump_scope = trio.CancelScope()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._pump, pump_scope)
                try:
                    return await self._run()
                finally:
                    # Only the pump's own scope: cancelling the nursery's would swallow an
                    # outside cancellation of the step.
                    pump_scope.cancel()
        except BaseExceptionGroup as group:
            raise_sole(group)
            raise

    async def _pump(self, scope: trio.CancelScope) -> None:
        source = self._source
        assert source is not None
        with scope:
            try:
                if isinstance(source, trio.MemoryReceiveChannel):
                    # ``receive_nowait`` first: calls already sent are known at once, as a
                    # list's are (``async for`` would take them one checkpoint at a time).
                    while True:
                        try:
                            item = source.receive_nowait()
                        except trio.WouldBlock:
                            try:
                                item = await source.receive()
                            except trio.EndOfChannel:
                                break
                        except trio.EndOfChannel:
                            break
                        self._post(_Arrived(item))
                else:
                    async for item in source:
                        self._post(_Arrived(item))
            except Exception as exc:
                # The source broke (e.g. the model's stream): a scheduler failure of the step.
                self._post(_Ended(exc))
            else:
                self._post(_Ended(None))

    async def _run(self) -> bool:
        abort = self._abort
        try:
            if abort is not None and current_relay(abort) is None:
                # Opened before any group's nursery: dispatch tasks inherit it, so every body's
                # cancel scope registers with this one watcher.
                async with abort_relay(abort):
                    return await self._steps()
            return await self._steps()
        except BaseException:
            # Cancelled from outside (or a bug): leave the log replay-valid. Synchronous.
            self._seal()
            raise

    # -- the decisions, outside and inside a group -----------------------------------------

    async def _steps(self) -> bool:
        core = self._core
        while True:
            self._take_sent()
            op, index = core.next_action()
            if op is Op.CLASSIFY:
                self._classify(index)
            elif op is Op.OPEN_GROUP:
                self._tell("group-open", index, core.group_parallel)
                try:
                    async with trio.open_nursery() as nursery:
                        await self._group(nursery)
                except BaseExceptionGroup as group:
                    raise_sole(group)
                    raise
            elif op is Op.SKIP:
                self._skip(index)
            elif op is Op.RECEIVE:
                await self._receive_one()
            elif op is Op.RAISE:
                failure = core.failure
                assert isinstance(failure, BaseException)
                raise failure
            elif op is Op.DONE:
                self._tell("done", -1, core.aborted)
                return core.aborted
            else:  # pragma: no cover - the core only returns these outside a group
                unreachable("Op", op.value)

    async def _group(self, nursery: trio.Nursery) -> None:
        core = self._core
        while True:
            self._take_sent()
            op, index = core.next_action()
            if op is Op.START:
                await self._start(index, nursery)
            elif op is Op.COMMIT:
                await self._commit(index)
            elif op is Op.CLASSIFY:
                self._classify(index)
            elif op is Op.WAIT or op is Op.RECEIVE:
                await self._receive_one()
            elif op is Op.CLOSE_GROUP:
                self._tell("group-close", index, None)
                return
            else:  # pragma: no cover - the core only returns these inside a group
                unreachable("Op", op.value)

    # -- the actions -----------------------------------------------------------------------

    def _classify(self, index: int) -> None:
        try:
            mode = self._runtime.execution_mode(self._inputs[index])
        except Exception as exc:
            self._fail(exc)
            return
        self._tell("classified", index, mode.kind)
        self._core.classified(index, mode.kind == "parallel")

    async def _start(self, index: int, nursery: trio.Nursery) -> None:
        self._record_start(index)
        self._tell("started", index, None)
        try:
            preparation = await self._scheduler.prepare(self._inputs[index])
            kind = preparation.kind
            if kind != "dispatch" and kind != "post-result" and kind != "final-result":
                unreachable("Preparation", kind)
        except Exception as exc:
            self._fail(exc)
            return
        self._tell("prepared", index, kind)
        # Settles that arrived while prepare awaited come first (they may commit).
        self._take_sent()
        exec = preparation.exec
        if kind == "dispatch":
            if self._core.prepared(index, dispatch=True):
                self._window.acquire_on_behalf_of_nowait(index)
                self._pending.append((index, exec))
                nursery.start_soon(self._dispatch)
        else:
            # A result-carrying preparation; a scheduler that breaks that fails at the commit.
            result: Any = preparation.result
            self._slots[index] = _Settled(index, exec, result, kind == "post-result")
            self._core.prepared(index, dispatch=False)

    async def _dispatch(self) -> None:
        # Taken before any checkpoint: tasks take dispatches in the order they first run, and
        # the queue is in model order, so dispatches are entered in model order.
        index, exec = self._pending.popleft()
        self._tell("body-started", index, None)
        message: _Settled | _Failed
        try:
            outcome = await self._scheduler.dispatch(exec)
            message = _Settled(index, exec, outcome.result, outcome.kind == "post-result")
        except Exception as exc:
            # A scheduler failure: sent to the committer, never raised into the nursery
            # (siblings must keep running until they settle).
            message = _Failed(index, exc)
        finally:
            self._window.release_on_behalf_of(index)
        self._tell("settled", index, message.error if type(message) is _Failed else None)
        self._post(message)

    async def _commit(self, index: int) -> None:
        settled = self._slots.pop(index)
        try:
            if settled.needs_post:
                result = await self._scheduler.finalize(settled.exec, settled.result)
            else:
                result = self._scheduler.finish(settled.exec, settled.result)
        except Exception as exc:
            self._fail(exc)
            return
        if self._record_commit(index, result):
            self._tell("committed", index, result)
            # Application callbacks (``accept_context``) run only once the commit is booked.
            try:
                self._recorder.delivered(index, result)
            except Exception as exc:
                self._fail(exc)

    # -- the channel -------------------------------------------------------------------------

    async def _receive_one(self) -> None:
        # Wait for one message (a settle, or in a streaming step an arrival or the end), then
        # take everything else already sent.
        message = await self._receive.receive()
        self._take(message)
        self._take_sent()

    def _post(self, message: _Message) -> None:
        self._send.send_nowait(message)
        self._unread += 1

    def _take_sent(self) -> None:
        # Everything already sent, without a checkpoint; then the abort, before any decision.
        while self._unread:
            self._take(self._receive.receive_nowait())
        abort = self._abort
        if abort is not None and abort.is_set() and not self._core.aborted:
            self._core.abort()
            self._tell("abort", -1, None)

    def _take(self, message: _Message) -> None:
        self._unread -= 1
        core = self._core
        if type(message) is _Settled:
            self._slots[message.call] = message
            core.settled(message.call)
        elif type(message) is _Failed:
            core.dispatch_failed(message.call, message.error)
        elif type(message) is _Arrived:
            if core.has_failure:
                return  # nothing more is logged after a failure
            self._arrive(message.item)
        elif type(message) is _Ended:
            if message.error is None:
                core.end_stream()
            else:
                core.fail(message.error)
        else:  # pragma: no cover - only the driver's own tasks send
            unreachable("message", message)

    def _arrive(self, item: object) -> None:
        admit = self._admit
        assert admit is not None
        try:
            input = admit(item)
        except Exception as exc:
            self._core.fail(exc)
            return
        self._inputs.append(input)
        index = self._core.arrived()
        self._tell("arrived", index, (input.call_id, input.name))

    def _fail(self, error: Exception) -> None:
        # Failures that settled earlier in a dispatch task come first.
        self._take_sent()
        self._core.fail(error)

    def _tell(self, phase: str, index: int, detail: object) -> None:
        if self._trace is not None:
            self._trace(phase, index, detail)

    # -- bookkeeping protected from KeyboardInterrupt ------------------------------------------
    #
    # Each records with no checkpoint and no application code between the recorder and the
    # core's report, so neither an outside cancellation nor a SIGINT ever sees a recorded call
    # or result the core does not know about (the seal would then record a second one).

    @enable_ki_protection
    def _record_start(self, index: int) -> None:
        self._recorder.started(index)

    @enable_ki_protection
    def _record_commit(self, index: int, result: ToolExecutionResult) -> bool:
        try:
            self._recorder.committed(index, result)
        except Exception as exc:
            self._core.committed_call(index)
            self._fail(exc)
            return False
        self._core.committed_call(index)
        return True

    @enable_ki_protection
    def _skip(self, first: int) -> None:
        # The synthetic pairs of an abort and the core's report, as one unit.
        for index in range(first, self._core.count):
            self._recorder.skipped(index)
            self._tell("aborted", index, TOOL_ABORTED_BEFORE_DISPATCH)
        self._core.skipped()

    @enable_ki_protection
    def _seal(self) -> None:
        # Everything already sent is taken first, as before any decision: a scheduler failure a
        # dispatch task sent before the cancellation came means no synthetic result (the failure's
        # rule), and calls the pump sent but the driver had not admitted are answered too.
        while self._unread and not self._core.has_failure:
            try:
                message = self._receive.receive_nowait()
            except (trio.WouldBlock, trio.ClosedResourceError):
                break
            self._take(message)
        if self._core.has_failure:
            return
        started, unstarted = self._core.seal()
        for index in started:
            self._recorder.cut_short(index)
            self._tell("aborted", index, TOOL_ABORTED)
        for index in unstarted:
            self._recorder.cut_short(index)
            self._tell("aborted", index, TOOL_ABORTED_BEFORE_DISPATCH)
