"""PoolMonitor: a scheduler wrapper and pool tracer in one, which records every phase of the
steps it watches (and, through a Trio instrument, when the pool waits) and checks them
against the rules of :mod:`.rules`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from typing import Any

import attrs
import trio

from .._log import TOOL_CALL, Session, ToolCallData
from .._pool import (
    DEFAULT_MAX_PARALLEL_TOOL_CALLS,
    PoolTracer,
    StepOutcome,
    ToolCallBlock,
    execute_tool_calls,
)
from .._runtime import (
    ApprovalRequest,
    ApprovalService,
    DispatchOutcome,
    Preparation,
    Scheduler,
    ToolExecution,
    ToolExecutionInput,
    ToolRuntime,
    ToolScheduler,
)
from .._values import (
    ExecutionMode,
    ToolExecutionResult,
)
from .rules import (
    CANCELLED,
    BodyRecord,
    Event,
    PoolViolation,
    StepCheck,
    Watched,
    is_cancel,
)

__all__ = ["PoolMonitor"]


class _DriverSteps(trio.abc.Instrument):
    """Tells the monitor each time the pool's driver task yields (it is waiting then)."""

    def __init__(self, monitor: PoolMonitor, driver: trio.lowlevel.Task) -> None:
        self._monitor = monitor
        self._driver = driver

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self._driver:
            self._monitor._record("yield", -1, self._monitor._truth_of_next())


class _MonitoredRuntime:
    """The runtime as the monitored step sees it: the monitor as scheduler, and a classifier
    whose failures the monitor records."""

    def __init__(self, monitor: PoolMonitor) -> None:
        self._monitor = monitor

    @property
    def scheduler(self) -> Scheduler:
        return self._monitor

    def execution_mode(self, input: ToolExecutionInput, /) -> ExecutionMode:
        monitor = self._monitor
        try:
            mode = monitor.runtime.execution_mode(input)
        except Exception as error:
            monitor._record("mode", monitor._index.get(id(input), -1), error)
            raise
        return mode


class _WatchedApproval:
    """The runtime's approval service as the monitored step sees it: each request recorded."""

    def __init__(self, monitor: PoolMonitor, inner: ApprovalService) -> None:
        self._monitor = monitor
        self.inner = inner

    async def request(self, request: ApprovalRequest, /) -> str:
        monitor = self._monitor
        index = monitor._preparing if monitor._preparing is not None else -1
        monitor._record("approval>", index, request.call_id)
        try:
            outcome = await self.inner.request(request)
        finally:
            monitor._record("approval<", index, request.call_id)
        return outcome


class _WatchedSource:
    """A streamed step's calls as the pool sees them: an exception of the source is recorded
    (it is the step's failure, as a scheduler's is), with the number of calls the source gave
    before it as the event's index (the pool takes the failure after admitting those)."""

    def __init__(self, monitor: PoolMonitor, source: AsyncIterable[ToolCallBlock]) -> None:
        self._monitor = monitor
        self._source = source
        self._iterator: AsyncIterator[ToolCallBlock] | None = None
        self._given = 0

    def __aiter__(self) -> _WatchedSource:
        return self

    async def __anext__(self) -> ToolCallBlock:
        if self._iterator is None:
            self._iterator = aiter(self._source)
        try:
            call = await anext(self._iterator)
        except StopAsyncIteration:
            raise
        except Exception as error:
            self._monitor._record("source", self._given, error)
            raise
        self._given += 1
        return call


class PoolMonitor:
    """Checks every guarantee of the pool on the steps it watches (a scheduler wrapper and a
    :class:`~trio_harness.lowlevel.PoolTracer` in one).

    Args:
        runtime: The real runtime; its ``scheduler`` is replaced by the monitor (which forwards
            every phase to the original, ``monitor.inner``: wrap your own scheduler first).
        exclusive: ``(name, arguments) -> bool``: which calls must run alone. The default asks
            ``runtime.execution_mode`` (the tools' own classifiers); pass the truth about your
            tools to catch a classifier that claims a writer is parallel. A call the pool itself
            classified exclusive must run alone too.

    Run a step through :meth:`execute_tool_calls` (it checks the step, and the cap before the
    step); or call ``trio_harness.execute_tool_calls(runtime, ..., tracer=monitor)`` yourself and
    then :meth:`check`. :meth:`violations` lists what broke.
    """

    def __init__(
        self,
        runtime: ToolRuntime,
        *,
        exclusive: Callable[[str, Any], bool] | None = None,
    ) -> None:
        self.runtime = runtime
        self.inner: Scheduler = runtime.scheduler
        self._exclusive = exclusive
        self._violations: list[PoolViolation] = []
        self._tee: PoolTracer | None = None
        self._instrument: _DriverSteps | None = None
        self.reset()
        runtime.scheduler = self
        policy = runtime._policy
        if policy.approval is not None and not isinstance(policy.approval, _WatchedApproval):
            policy.approval = _WatchedApproval(self, policy.approval)

    def reset(self) -> None:
        """Forget the step watched so far (:meth:`execute_tool_calls` does this first)."""
        self._stop_watching()
        self.records: dict[int, BodyRecord] = {}
        self.max_in_flight = 0
        self._violations = []
        self._events: list[Event] = []
        self._inputs: list[ToolExecutionInput] = []
        self._live: Sequence[ToolExecutionInput] = ()
        self._initial = 0
        self._index: dict[int, int] = {}
        self._exec_index: dict[int, int] = {}
        self._cap: int | None = None
        self._abort: trio.Event | None = None
        self._busy = 0
        self._running: dict[int, BodyRecord] = {}
        self._modes: dict[int, object] = {}
        self._began = 0
        self._preparing: int | None = None
        self._committed: list[tuple[int, ToolExecutionResult]] = []
        self._contexts_given = False
        self._driver: trio.lowlevel.Task | None = None
        self._checked = False
        self._told_abort = False
        self._starts = 0  # calls started so far (in model order)

    def _truth_of_next(self) -> bool | None:
        """Whether the next call to start must run alone now (``None``: unknown); only with
        your ``exclusive`` (the runtime's classifier is not asked more than the pool asks it)."""
        if self._exclusive is None or self._starts >= len(self._inputs):
            return None
        return self._truth(self._inputs[self._starts])

    # -- the tracer ----------------------------------------------------------------------------

    def begin(self, calls: Sequence[ToolExecutionInput], cap: int, /) -> None:
        """Called by the pool when the step starts (forwarded to ``tracer``, if one was given).

        A step begun after the last one was checked starts afresh (as :meth:`reset`)."""
        if self._checked:
            self.reset()
        self._began += 1
        self._live = calls  # a streaming step appends its later calls to this very sequence
        self._initial = len(calls)
        self._inputs = list(calls)
        self._index = {id(call): index for index, call in enumerate(self._inputs)}
        self._cap = cap
        if self._abort is None:
            self._abort = self._inputs[0].abort if self._inputs else None
        self._record("begin", -1, cap)
        self._stop_watching()
        self._driver = trio.lowlevel.current_task()
        self._instrument = _DriverSteps(self, self._driver)
        trio.lowlevel.add_instrument(self._instrument)
        if self._tee is not None:
            self._tee.begin(calls, cap)

    def _stop_watching(self) -> None:
        instrument, self._instrument = self._instrument, None
        if instrument is not None:
            with contextlib.suppress(KeyError, RuntimeError):
                trio.lowlevel.remove_instrument(instrument)

    def phase(self, name: str, index: int, detail: object, /) -> None:
        """Called by the pool at each phase instant (forwarded to ``tracer``, if one was given)."""
        if name == "abort":
            self._told_abort = True  # the pool saw the abort set (its event may be on no input)
        if name == "committed" and isinstance(detail, ToolExecutionResult):
            self._committed.append((index, detail))
        if name == "classified":
            self._modes[index] = detail
        elif name == "arrived":
            self._arrived(index)
        if name == "started" and 0 <= index < len(self._inputs):
            detail = self._truth(self._inputs[index])
            self._starts = max(self._starts, index + 1)
        self._record(name, index, detail)
        if name == "done":
            self._stop_watching()
        if self._tee is not None:
            self._tee.phase(name, index, detail if name != "started" else None)

    def _arrived(self, index: int) -> None:
        """A streaming step admitted call ``index``: watch it like the calls known at the start."""
        if index == len(self._inputs) and index < len(self._live):
            call = self._live[index]
            self._inputs.append(call)
            self._index[id(call)] = index
            if self._abort is None:
                self._abort = call.abort

    def _truth(self, input: ToolExecutionInput) -> bool | None:
        try:
            if self._exclusive is not None:
                return bool(self._exclusive(input.name, input.arguments))
            return self.runtime.execution_mode(input).kind == "exclusive"
        except Exception:
            return None  # a raising classifier: the pool's own answer decides

    def _record(self, kind: str, index: int, detail: object) -> None:
        abort = self._abort
        self._events.append(
            Event(
                kind,
                index,
                detail,
                trio.current_time(),
                self._busy > 0,
                self._told_abort or (abort is not None and abort.is_set()),
                trio.lowlevel.current_task() is self._driver,
            )
        )

    # -- the scheduler -------------------------------------------------------------------------

    async def prepare(self, input: ToolExecutionInput, /) -> Preparation:
        """Record the call (top-level calls of the watched step only), then forward."""
        index = self._index.get(id(input)) if input.parent is None else None
        if index is None:
            return await self.inner.prepare(input)
        alone = bool(self._truth(input)) or self._modes.get(index) == "exclusive"
        self.records[index] = BodyRecord(
            input.call_id, input.name, alone, trio.current_time(), index=index
        )
        self._record("prepare>", index, None)
        self._busy += 1
        self._preparing = index
        try:
            preparation = await self.inner.prepare(input)
        except BaseException as error:
            self._busy -= 1
            self._preparing = None
            self._record("prepare<", index, error)
            raise
        self._busy -= 1
        self._preparing = None
        self._exec_index[id(preparation.exec)] = index
        self._record("prepare<", index, preparation)
        return preparation

    async def dispatch(self, exec: ToolExecution, /) -> DispatchOutcome:
        """Record the body's interval around the forwarded dispatch."""
        index = self._exec_index.get(id(exec)) if exec.parent is None else None
        record = self.records.get(index) if index is not None else None
        if index is None or record is None:
            return await self.inner.dispatch(exec)
        record.body_started = trio.current_time()
        record.overlapping = sorted(self._running)
        record.overlapped = [self._running[i].call_id for i in record.overlapping]
        self._running[index] = record
        self.max_in_flight = max(self.max_in_flight, len(self._running))
        self._record("dispatch>", index, None)
        try:
            outcome = await self.inner.dispatch(exec)
        except BaseException as error:
            self._record("dispatch<", index, CANCELLED if is_cancel(error) else error)
            raise
        finally:
            del self._running[index]
            record.body_ended = trio.current_time()
        self._record("dispatch<", index, outcome)
        return outcome

    async def finalize(
        self, exec: ToolExecution, result: ToolExecutionResult, /
    ) -> ToolExecutionResult:
        """Forward (recording the result it produced)."""
        index = self._exec_index.get(id(exec)) if exec.parent is None else None
        if index is None:
            return await self.inner.finalize(exec, result)
        self._record("finalize>", index, result)
        self._busy += 1
        try:
            final = await self.inner.finalize(exec, result)
        except BaseException as error:
            self._busy -= 1
            self._record("finalize<", index, error)
            raise
        self._busy -= 1
        self._record("finalize<", index, final)
        return final

    def finish(self, exec: ToolExecution, result: ToolExecutionResult, /) -> ToolExecutionResult:
        """Forward (recording the result it produced)."""
        index = self._exec_index.get(id(exec)) if exec.parent is None else None
        if index is None:
            return self.inner.finish(exec, result)
        try:
            final = self.inner.finish(exec, result)
        except BaseException as error:
            self._record("finish", index, error)
            raise
        self._record("finish", index, final)
        return final

    # -- steps ---------------------------------------------------------------------------------

    async def execute_tool_calls(
        self,
        session: Session,
        tool_calls: Sequence[ToolCallBlock] | AsyncIterable[ToolCallBlock],
        *,
        max_parallel_tool_calls: Any = DEFAULT_MAX_PARALLEL_TOOL_CALLS,
        tracer: PoolTracer | None = None,
        **options: Any,
    ) -> StepOutcome:
        """Run one step with :func:`trio_harness.execute_tool_calls` and :meth:`check` it.

        ``options`` go to ``execute_tool_calls`` (``abort``, ``turn``, ``step``,
        ``accept_context``, ...); ``tracer`` is told every phase too. Whatever the step raises
        (a scheduler failure, a refused cap, a cancellation) is re-raised after the check; use
        :meth:`violations` or :meth:`assert_ok` for the verdict.
        """
        self.reset()
        self._tee = tracer
        self._abort = options.get("abort")
        first_seq = len(session.events)
        accept = options.get("accept_context")
        if accept is not None and callable(accept):
            self._contexts_given = True

            def accept_context(context: Any) -> object:
                self._record("context", self._holder(context), None)
                try:
                    return accept(context)
                except Exception as error:
                    self._record("accept", -1, error)
                    raise

            options["accept_context"] = accept_context
        if isinstance(tool_calls, AsyncIterable) and not isinstance(
            tool_calls, trio.MemoryReceiveChannel
        ):
            # (a memory channel goes as it is: the pool reads one without waiting, and it
            # raises nothing of its own)
            tool_calls = _WatchedSource(self, tool_calls)
        try:
            outcome = await execute_tool_calls(
                _MonitoredRuntime(self),
                session,
                tool_calls,
                max_parallel_tool_calls=max_parallel_tool_calls,
                tracer=self,
                **options,
            )
        except BaseException as error:
            self._tee = None
            self.check(
                session,
                _calls_of(session, first_seq, tool_calls),
                cap=max_parallel_tool_calls,
                first_seq=first_seq,
                raised=error,
                complete=True,
            )
            raise
        self._tee = None
        self.check(
            session,
            _calls_of(session, first_seq, tool_calls),
            cap=max_parallel_tool_calls,
            first_seq=first_seq,
            outcome=outcome,
            complete=True,
        )
        return outcome

    def check(
        self,
        session: Session,
        tool_calls: Sequence[ToolCallBlock],
        *,
        cap: Any = DEFAULT_MAX_PARALLEL_TOOL_CALLS,
        first_seq: int = 0,
        raised: bool | BaseException = False,
        outcome: StepOutcome | None = None,
        complete: bool = False,
        abort: trio.Event | None = None,
    ) -> list[PoolViolation]:
        """Check the step whose events start at ``first_seq``; returns (and keeps) the violations.

        Args:
            session: The step's log.
            tool_calls: The step's calls.
            cap: The ``max_parallel_tool_calls`` it was given.
            first_seq: The seq of its first event.
            raised: What the step raised (``True``: it raised, what is unknown).
            outcome: What it returned.
            complete: Every failure the step could raise was observed (``accept_context`` and
                the classifier were watched: :meth:`execute_tool_calls` does this).
            abort: The step's abort event, when the pool did not hand it on its inputs (a step
                with no call, or your own pool's inputs without it).

        Rules (each violation names its rule):

        ``cap``: an invalid cap (not a positive ``int``; ``bool`` is not) is refused with
        ``ValueError`` before anything happens (nothing logged, prepared or classified); a
        valid one is not refused. ``window``: the pool ran with the cap it was given; never more
        than ``cap`` bodies at once. ``window-idle``: the pool never waited while it could start
        a call of an open parallel group (fewer than ``cap`` bodies running and the next call not
        classified exclusive since the last body settled), nor with the next result in model
        order ready to commit. ``exclusive``: no body overlaps a body that must run alone.
        ``barrier``: a call that must run alone starts only once every earlier result is
        committed, and no later call starts before its result is committed. ``commit-first``: a
        result ready at the commit cursor is committed before anything is classified or started.
        ``order``: calls start (and are prepared) one at a time in model order; dispatches are
        entered in that order. ``abort``: nothing starts once the abort is set; a call that never
        started is answered by its synthetic ``ABORTED_BEFORE_DISPATCH`` pair (its ``tool/call``
        directly followed by its result), only after an abort or a cancellation; a started call
        is never answered ``ABORTED_BEFORE_DISPATCH`` by the pool, and one cut short by a
        cancellation is answered ``ABORTED``; ``outcome.aborted`` says whether the abort was
        set. ``failure``: the first scheduler failure (an exception from prepare, dispatch,
        finalize, finish or the classifier) is the one raised, only after every body that began
        settled (none cancelled), and nothing starts or commits after it (except the commit
        whose post-execute was running); a step raises only such a failure. ``result``: the
        result committed (traced, logged and returned in ``outcome.results``) is the one the
        scheduler produced. ``answered-once``: every call is answered exactly once (a step that
        raised a failure may leave started calls unanswered, and never answers unstarted ones).
        ``trace``: the pool told the tracer about every phase. ``log/<rule>``: the rules of
        :func:`check_session` over the log, from ``first_seq`` on.
        """
        self._stop_watching()
        self._checked = True
        if abort is not None and self._abort is None:
            self._abort = abort
            self._events = [
                attrs.evolve(event, aborted=True)
                if event.kind == "done" and abort.is_set()
                else event
                for event in self._events
            ]
        error = raised if isinstance(raised, BaseException) else None
        policy = self.runtime._policy
        watched = Watched(
            self._events,
            self._began,
            self._cap,
            self._initial,
            self.records,
            self.max_in_flight,
            wrapped_dispatch=bool(policy.execute_wrappers.items),
            # (the scenario runner's planted-failure wrapper forwards every answer unchanged)
            own_scheduler=isinstance(self.inner, ToolScheduler)
            or getattr(self.inner, "forwards_answers", False) is True,
            contexts_given=self._contexts_given,
        )
        checker = StepCheck(
            watched, session, list(tool_calls), cap, first_seq, raised is not False, error, outcome
        )
        found = checker.run(complete)
        self._violations = found
        return found

    def _holder(self, context: object) -> int:
        # The committed call whose result holds ``context`` (the latest one), or -1.
        for index, result in reversed(self._committed):
            if any(item is context for item in result.additional_contexts):
                return index
        return -1

    def violations(self) -> list[PoolViolation]:
        """The violations the last check found (``[]``: the step kept every guarantee)."""
        return list(self._violations)

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` listing the last check's violations, if any."""
        if self._violations:
            raise AssertionError(
                "pool guarantees broken:\n  " + "\n  ".join(map(str, self._violations))
            )


def _calls_of(
    session: Session, first_seq: int, given: Sequence[ToolCallBlock] | AsyncIterable[ToolCallBlock]
) -> Sequence[ToolCallBlock]:
    """The step's calls: as given, or for a streamed step, as its ``tool/call`` events logged
    them (every call that arrived before a failure is logged, in model order)."""
    if not isinstance(given, AsyncIterable):
        return given
    return [
        ToolCallBlock(event.data.call_id, event.data.name, event.data.arguments)
        for event in session.events[first_seq:]
        if event.type == TOOL_CALL and isinstance(event.data, ToolCallData)
    ]
