"""Property-based testing of ports and of Trio apps built on trio_harness (needs hypothesis).

Install with ``pip install 'trio_harness[testing]'``; the rest of the library never imports
hypothesis. What is here:

* hypothesis strategies: :func:`subset_schemas`, :func:`valid_values` / :func:`invalid_values`
  (built from a schema, never filtered), :func:`parameter_maps`, :func:`argument_texts` (raw
  argument text of a tool, labelled by kind), :func:`scheduling_scenarios` (``spec/FORMAT.md``
  scenarios), and :func:`json_values`; they reach the edges the validator and the kit care about
  (``-0.0``, integers past 2**53, integral floats, long strings and arrays, odd keys and odd
  argument texts), with knobs to bound them, and raise ``InvalidArgument`` for bad arguments;
* :func:`check_session`: every invariant violation of a session log (what ``check-log`` prints);
* :class:`PoolMonitor`: a scheduler wrapper and pool tracer in one, which checks every guarantee
  the pool gives on the steps it watches and reports each broken one as a :class:`PoolViolation`.

Strategies for the library's value types (``st.from_type(trio_harness.ToolCallBlock)``, ...)
are registered by the hypothesis plugin the distribution declares (``trio_harness_hypothesis``).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

try:
    import hypothesis  # noqa: F401  (the extra this namespace needs, checked first)
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "trio_harness.testing needs hypothesis: pip install 'trio_harness[testing]'"
    ) from error

import attrs
import trio

from ._conformance import (
    ARGUMENT_KINDS,
    ArgumentText,
    ScenarioError,
    answer_scenario,
    argument_texts,
    check_log,
    invalid_values,
    json_values,
    parameter_maps,
    scheduling_scenarios,
    subset_schemas,
    valid_values,
)
from ._conformance import LogViolation as _LogViolation
from ._errors import TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH
from ._log import TOOL_CALL, TOOL_RESULT, Session, SessionEvent, ToolCallData, ToolResultData
from ._pool import (
    DEFAULT_MAX_PARALLEL_TOOL_CALLS,
    PoolTracer,
    StepOutcome,
    ToolCallBlock,
    execute_tool_calls,
)
from ._public import publish
from ._runtime import (
    DispatchOutcome,
    Preparation,
    Scheduler,
    ToolExecution,
    ToolExecutionInput,
    ToolRuntime,
)
from ._values import (
    ExecutionMode,
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
)

__all__ = [
    "ARGUMENT_KINDS",
    "ArgumentText",
    "BodyRecord",
    "PoolMonitor",
    "PoolViolation",
    "argument_texts",
    "check_session",
    "invalid_values",
    "json_values",
    "parameter_maps",
    "scheduling_scenarios",
    "subset_schemas",
    "valid_values",
]


def _expected_answer(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The reference answer to a scheduling scenario, exactly as the oracle answers it.

    Args:
        scenario: The ``scenario`` object of ``spec/FORMAT.md`` (decoded JSON).

    Returns:
        The ``expected`` object: ``events``, ``calls``, ``contexts``, ``outcome`` (and ``ties``
        when two scripted timers expired at one instant).

    Raises:
        ScenarioError: The scenario does not follow the format.
    """
    answered = answer_scenario({"op": "schedule", "scenario": dict(scenario)})
    if "expected" not in answered:
        raise ScenarioError(str(answered.get("error")))
    expected: dict[str, Any] = answered["expected"]
    return expected


def check_session(
    session_or_events: Session | Iterable[SessionEvent | Mapping[str, Any]],
    *,
    allow_unpaired: bool = False,
) -> list[_LogViolation]:
    """Every invariant violation of a session log (the rules of ``check-log``).

    Args:
        session_or_events: A :class:`~trio_harness.Session`, or its events (``SessionEvent``
            objects or their decoded wire form), in log order.
        allow_unpaired: Accept calls left without a result (a step that raised a scheduler
            failure leaves its started calls so).

    Returns:
        The violations (``seq``, ``rule``, ``message``) in log order; ``[]`` for a valid log.

    Raises:
        LogFormatError: An event is not a session event.
    """
    events = (
        session_or_events.events if isinstance(session_or_events, Session) else session_or_events
    )
    wire = [event.to_json() if isinstance(event, SessionEvent) else event for event in events]
    return check_log(wire, allow_unpaired=allow_unpaired)


@attrs.define
class BodyRecord:
    """What :class:`PoolMonitor` saw of one call (times are ``trio.current_time()``).

    Attributes:
        call_id: The call id.
        name: The tool name.
        exclusive: Whether the call must run alone (the monitor's ``exclusive`` answer, or the
            pool's own classification).
        prepared: When ``prepare`` was entered.
        body_started: When ``dispatch`` (wrappers and body) was entered; ``None`` if never.
        body_ended: When ``dispatch`` returned or raised; ``None`` if never.
        overlapped: Call ids whose body ran while this call's body started.
    """

    call_id: str
    name: str
    exclusive: bool
    prepared: float
    body_started: float | None = None
    body_ended: float | None = None
    overlapped: list[str] = attrs.field(factory=list)


@attrs.frozen
class PoolViolation:
    """One broken pool guarantee, as :class:`PoolMonitor` reports it.

    Attributes:
        rule: Which guarantee (see :meth:`PoolMonitor.check`); ``log/<rule>`` for a rule of
            :func:`check_session`.
        message: What happened, naming the calls.
        call_id: The call it is about, when there is one.
    """

    rule: str
    message: str
    call_id: str | None = None

    def __str__(self) -> str:
        return f"[{self.rule}] {self.message}"


_CANCELLED: Final = "cancelled"


@attrs.frozen
class _Event:
    kind: str
    index: int
    detail: object
    time: float
    busy: bool  # the driver was inside prepare or finalize
    aborted: bool  # the step's abort event was set


def _valid_cap(cap: object) -> bool:
    # The pool's promise, written out independently of its own ``validate_cap``.
    return type(cap) is int and cap >= 1


class _DriverSteps(trio.abc.Instrument):
    """Tells the monitor each time the pool's driver task yields (it is waiting then)."""

    def __init__(self, monitor: PoolMonitor, driver: trio.lowlevel.Task) -> None:
        self._monitor = monitor
        self._driver = driver

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self._driver:
            self._monitor._record("yield", -1, None)


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

    def reset(self) -> None:
        """Forget the step watched so far (:meth:`execute_tool_calls` does this first)."""
        self._stop_watching()
        self.records: dict[str, BodyRecord] = {}
        self.max_in_flight = 0
        self._violations = []
        self._events: list[_Event] = []
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

    # -- the tracer ----------------------------------------------------------------------------

    def begin(self, calls: Sequence[ToolExecutionInput], cap: int, /) -> None:
        """Called by the pool when the step starts (forwarded to ``tracer``, if one was given)."""
        self._began += 1
        self._live = calls  # a streaming step appends its later calls to this very sequence
        self._initial = len(calls)
        self._inputs = list(calls)
        self._index = {id(call): index for index, call in enumerate(self._inputs)}
        self._cap = cap
        self._abort = self._inputs[0].abort if self._inputs else None
        self._record("begin", -1, cap)
        self._stop_watching()
        self._instrument = _DriverSteps(self, trio.lowlevel.current_task())
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
        if name == "classified":
            self._modes[index] = detail
        elif name == "arrived":
            self._arrived(index)
        if name == "started" and 0 <= index < len(self._inputs):
            detail = self._truth(self._inputs[index])
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
            _Event(
                kind,
                index,
                detail,
                trio.current_time(),
                self._busy > 0,
                abort is not None and abort.is_set(),
            )
        )

    # -- the scheduler -------------------------------------------------------------------------

    async def prepare(self, input: ToolExecutionInput, /) -> Preparation:
        """Record the call (top-level calls of the watched step only), then forward."""
        index = self._index.get(id(input)) if input.parent is None else None
        if index is None:
            return await self.inner.prepare(input)
        alone = bool(self._truth(input)) or self._modes.get(index) == "exclusive"
        self.records[input.call_id] = BodyRecord(
            input.call_id, input.name, alone, trio.current_time()
        )
        self._record("prepare>", index, None)
        self._busy += 1
        try:
            preparation = await self.inner.prepare(input)
        except BaseException as error:
            self._busy -= 1
            self._record("prepare<", index, error)
            raise
        self._busy -= 1
        self._exec_index[id(preparation.exec)] = index
        self._record("prepare<", index, preparation)
        return preparation

    async def dispatch(self, exec: ToolExecution, /) -> DispatchOutcome:
        """Record the body's interval around the forwarded dispatch."""
        index = self._exec_index.get(id(exec)) if exec.parent is None else None
        record = self.records.get(exec.call_id) if index is not None else None
        if index is None or record is None:
            return await self.inner.dispatch(exec)
        record.body_started = trio.current_time()
        record.overlapped = sorted(r.call_id for r in self._running.values())
        self._running[index] = record
        self.max_in_flight = max(self.max_in_flight, len(self._running))
        self._record("dispatch>", index, None)
        try:
            outcome = await self.inner.dispatch(exec)
        except BaseException as error:
            self._record("dispatch<", index, _CANCELLED if _is_cancel(error) else error)
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
        tool_calls: Sequence[ToolCallBlock],
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
        first_seq = len(session.events)
        accept = options.get("accept_context")
        if accept is not None and callable(accept):

            def accept_context(context: Any) -> object:
                try:
                    return accept(context)
                except Exception as error:
                    self._record("accept", -1, error)
                    raise

            options["accept_context"] = accept_context
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
                tool_calls,
                cap=max_parallel_tool_calls,
                first_seq=first_seq,
                raised=error,
                complete=True,
            )
            raise
        self._tee = None
        self.check(
            session,
            tool_calls,
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
        error = raised if isinstance(raised, BaseException) else None
        checker = _StepCheck(
            self, session, list(tool_calls), cap, first_seq, raised is not False, error, outcome
        )
        found = checker.run(complete)
        self._violations = found
        return found

    def violations(self) -> list[PoolViolation]:
        """The violations the last check found (``[]``: the step kept every guarantee)."""
        return list(self._violations)

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` listing the last check's violations, if any."""
        if self._violations:
            raise AssertionError(
                "pool guarantees broken:\n  " + "\n  ".join(map(str, self._violations))
            )


def _is_cancel(error: BaseException) -> bool:
    return isinstance(error, trio.Cancelled | KeyboardInterrupt) or (
        isinstance(error, BaseExceptionGroup)
        and all(_is_cancel(inner) for inner in error.exceptions)
    )


_READY: Final = "ready"


class _StepCheck:
    """One run of the rules over a monitored step (see :meth:`PoolMonitor.check`)."""

    def __init__(
        self,
        monitor: PoolMonitor,
        session: Session,
        calls: list[ToolCallBlock],
        cap: object,
        first_seq: int,
        raised: bool,
        error: BaseException | None,
        outcome: StepOutcome | None,
    ) -> None:
        self.m = monitor
        self.session = session
        self.calls = calls
        self.ids = [getattr(call, "id", "?") for call in calls]
        self.cap = cap
        self.first_seq = first_seq
        self.raised = raised
        self.error = error
        self.outcome = outcome
        self.cut = error is not None and _is_cancel(error)
        self.found: list[PoolViolation] = []
        self._said: set[tuple[str, str]] = set()

    def say(self, rule: str, message: str, index: int | None = None) -> None:
        if (rule, message) in self._said:
            return
        self._said.add((rule, message))
        call_id = self.ids[index] if index is not None and 0 <= index < len(self.ids) else None
        self.found.append(PoolViolation(rule, message, call_id))

    def name(self, index: int) -> str:
        return self.ids[index] if 0 <= index < len(self.ids) else f"#{index}"

    def run(self, complete: bool) -> list[PoolViolation]:
        m = self.m
        logged = len(self.session.events) > self.first_seq
        if not _valid_cap(self.cap):
            if not isinstance(self.error, ValueError):
                what = "raised " + type(self.error).__name__ if self.error is not None else "ran"
                self.say("cap", f"invalid cap {self.cap!r} was not refused: the step {what}")
            if m._began or logged or any(e.kind in ("prepare>", "mode") for e in m._events):
                self.say("cap", f"invalid cap {self.cap!r} was refused only after the step began")
            return self.found
        if not m._began:
            if self.error is not None and not logged:
                # Refused up front (a bad option or call): only the cap's refusal is wrong.
                if isinstance(self.error, ValueError) and "max_parallel" in str(self.error):
                    self.say("cap", f"valid cap {self.cap!r} was refused: {self.error}")
                return self.found
            self.say(
                "trace",
                "the step ran without the monitor as its tracer (run it through "
                "monitor.execute_tool_calls, or pass tracer=monitor)",
            )
            return self.found
        if m._cap != self.cap:
            self.say("window", f"the pool ran with a window of {m._cap}, asked {self.cap}")
        self.walk()
        self.after(complete)
        self.log()
        return self.found

    # -- the events, in order --------------------------------------------------------------------

    def walk(self) -> None:
        m = self.m
        n = len(self.calls)
        cap = self.cap
        assert isinstance(cap, int)
        self.started: list[int] = []
        self.terminal: dict[int, tuple[str, object]] = {}
        self.ready: set[int] = set()
        self.produced: dict[int, object] = {}
        self.exclusive: dict[int, bool] = {}
        classified: dict[int, tuple[int, object]] = {}
        in_flight = 0
        group_open = False
        group_parallel = False
        group_at = -1
        last_settle = -1
        self.failure: tuple[int, BaseException] | None = None
        finalizing: dict[int, int] = {}
        preparing: int | None = None
        running: set[int] = set()
        self.cancelled: list[int] = []
        body_order: list[int] = []
        dispatch_order: list[int] = []
        seen_begin = False
        known = m._initial  # calls the step had; a streaming step admits more as they arrive

        def cursor() -> int | None:
            for index in self.started:
                if index not in self.terminal:
                    return index
            return None

        def ready_at_cursor() -> int | None:
            at = cursor()
            return at if at is not None and at in self.ready else None

        def fail(at: int, error: object) -> None:
            if self.failure is None and isinstance(error, BaseException) and not _is_cancel(error):
                self.failure = (at, error)

        for at, event in enumerate(m._events):
            kind, index = event.kind, event.index
            if kind == "begin":
                if seen_begin:
                    self.say("trace", "the pool began the step twice")
                seen_begin = True
                continue
            if kind == "arrived":
                known = max(known, index + 1)
                continue
            if kind == "yield":
                if (
                    event.busy
                    or self.cut
                    or self.failure is not None
                    or event.aborted
                    or not (group_open and group_parallel)
                ):
                    continue
                # The driver yielded outside prepare and post-execute: it is waiting for a
                # body to settle, so it must have had nothing else to do.
                waiting = ready_at_cursor()
                if waiting is not None:
                    self.say(
                        "window-idle",
                        f"the pool waited with the result of {self.name(waiting)} ready to commit",
                        waiting,
                    )
                nxt = len(self.started)
                if nxt < min(n, known) and in_flight < cap:
                    mode = classified.get(nxt)
                    blocked = (
                        mode is not None
                        and mode[1] == "exclusive"
                        and mode[0] > max(last_settle, group_at)
                    )
                    if not blocked:
                        self.say(
                            "window-idle",
                            f"the pool waited with {in_flight} of {cap} bodies running while "
                            f"{self.name(nxt)} could start",
                            nxt,
                        )
                continue
            if kind in ("classified", "started"):
                waiting = ready_at_cursor()
                if waiting is not None and self.failure is None:
                    self.say(
                        "commit-first",
                        f"{self.name(index)} was {kind} while the result of "
                        f"{self.name(waiting)} was ready to commit",
                        index,
                    )
            if kind == "classified":
                classified[index] = (at, event.detail)
            elif kind == "group-open":
                group_open, group_parallel, group_at = True, bool(event.detail), at
            elif kind == "group-close":
                group_open = False
            elif kind == "started":
                self._started(at, event, index, classified)
            elif kind == "prepare>":
                if index not in self.started:
                    self.say("trace", f"{self.name(index)} was prepared without a started phase")
                if preparing is not None:
                    self.say(
                        "order",
                        f"{self.name(index)} was prepared while {self.name(preparing)} was "
                        "still being prepared",
                        index,
                    )
                preparing = index
            elif kind == "prepare<":
                preparing = None
                fail(at, event.detail)
            elif kind == "prepared":
                if event.detail == "dispatch":
                    in_flight += 1
                    dispatch_order.append(index)
                else:
                    self.ready.add(index)
            elif kind == "body-started":
                body_order.append(index)
            elif kind == "dispatch>":
                running.add(index)
            elif kind == "dispatch<":
                running.discard(index)
                if event.detail == _CANCELLED:
                    self.cancelled.append(index)
                fail(at, event.detail)
            elif kind == "settled":
                in_flight -= 1
                last_settle = at
                if event.detail is None:
                    self.ready.add(index)
                else:
                    fail(at, event.detail)
            elif kind == "finalize>":
                finalizing[index] = at
            elif kind in ("finalize<", "finish"):
                if isinstance(event.detail, BaseException):
                    fail(at, event.detail)
                else:
                    self.produced[index] = event.detail
            elif kind in ("mode", "accept"):
                fail(at, event.detail)
            elif kind == "committed":
                self._committed(at, event, index, finalizing)
            elif kind == "aborted":
                self._aborted(at, event, index)
            elif (
                kind == "done"
                and self.outcome is not None
                and self.outcome.aborted != event.aborted
            ):
                self.say(
                    "abort",
                    f"outcome.aborted is {self.outcome.aborted} but the abort was "
                    f"{'set' if event.aborted else 'not set'} when the step ended",
                )
        self.running_at_end = running
        if body_order != dispatch_order[: len(body_order)]:
            for position, index in enumerate(body_order):
                if dispatch_order[position] != index:
                    self.say(
                        "order",
                        f"the dispatch of {self.name(index)} was entered before that of "
                        f"{self.name(dispatch_order[position])}, which started first",
                        index,
                    )
                    break

    def _started(
        self, at: int, event: _Event, index: int, classified: dict[int, tuple[int, object]]
    ) -> None:
        expected = len(self.started)
        if index in self.started:
            self.say("order", f"{self.name(index)} was started twice", index)
            return
        if index != expected:
            self.say(
                "order",
                f"{self.name(index)} started before {self.name(expected)} (not in model order)",
                index,
            )
        if event.aborted:
            self.say("abort", f"{self.name(index)} started after the abort was set", index)
        if self.failure is not None:
            self.say(
                "failure",
                f"{self.name(index)} started after the scheduler failure {self.failure[1]!r}",
                index,
            )
        mode = classified.get(index)
        alone = event.detail is True or (mode is not None and mode[1] == "exclusive")
        self.exclusive[index] = alone
        for earlier in self.started:
            if earlier in self.terminal:
                continue
            if alone:
                self.say(
                    "barrier",
                    f"{self.name(index)} must run alone but started before the result of "
                    f"{self.name(earlier)} was committed",
                    index,
                )
                break
            if self.exclusive.get(earlier):
                self.say(
                    "barrier",
                    f"{self.name(index)} started before the result of {self.name(earlier)}, "
                    "which must run alone, was committed",
                    index,
                )
                break
        self.started.append(index)

    def _committed(self, at: int, event: _Event, index: int, finalizing: dict[int, int]) -> None:
        if index in self.terminal:
            self.say("answered-once", f"{self.name(index)} was answered twice", index)
        if self.failure is not None:
            began = finalizing.get(index)
            if began is None or began > self.failure[0]:
                self.say(
                    "failure",
                    f"{self.name(index)} was committed after the scheduler failure "
                    f"{self.failure[1]!r}",
                    index,
                )
        if index not in self.produced:
            self.say("result", f"{self.name(index)} was committed without being finished", index)
        elif event.detail is not self.produced[index]:
            self.say(
                "result",
                f"the result committed for {self.name(index)} is not the one the scheduler "
                "produced",
                index,
            )
        self.terminal[index] = ("committed", event.detail)

    def _aborted(self, at: int, event: _Event, index: int) -> None:
        code = event.detail
        if index in self.terminal:
            self.say("answered-once", f"{self.name(index)} was answered twice", index)
        if self.failure is not None:
            self.say(
                "failure",
                f"{self.name(index)} got a synthetic result after the scheduler failure "
                f"{self.failure[1]!r}",
                index,
            )
        started = index in self.started
        if code == TOOL_ABORTED_BEFORE_DISPATCH and started:
            self.say(
                "abort",
                f"{self.name(index)} had started but was answered ABORTED_BEFORE_DISPATCH",
                index,
            )
        if code == TOOL_ABORTED and not started:
            self.say("abort", f"{self.name(index)} never started but was answered ABORTED", index)
        if not started and not event.aborted and not self.cut:
            self.say(
                "abort",
                f"{self.name(index)} was skipped (a synthetic pair) without an abort",
                index,
            )
        self.terminal[index] = ("aborted", code)

    # -- after the step --------------------------------------------------------------------------

    def after(self, complete: bool) -> None:
        m = self.m
        cap = self.cap
        assert isinstance(cap, int)
        if m.max_in_flight > cap:
            self.say("window", f"{m.max_in_flight} bodies in flight at once, cap {cap}")
        for record in m.records.values():
            for other_id in record.overlapped:
                other = m.records[other_id]
                if record.exclusive or other.exclusive:
                    alone, partner = (
                        (record.call_id, other_id)
                        if record.exclusive
                        else (other_id, record.call_id)
                    )
                    self.say(
                        "exclusive",
                        f"the body of {alone}, which must run alone, overlaps the body of "
                        f"{partner} ({record.call_id} started at {record.body_started:g} while "
                        f"{other_id} was running)",
                    )
        failure = self.failure
        error = self.error
        if failure is not None:
            if not self.raised:
                self.say(
                    "failure",
                    f"the scheduler failure {failure[1]!r} was swallowed: the step returned",
                )
            elif error is not None and error is not failure[1] and not self.cut:
                self.say(
                    "failure",
                    f"the step raised {error!r}, not the first scheduler failure {failure[1]!r}",
                )
            if self.raised and not self.cut:
                for index in sorted(self.running_at_end):
                    self.say(
                        "failure",
                        f"the failure was raised while the body of {self.name(index)} still ran",
                        index,
                    )
                for index in self.cancelled:
                    self.say(
                        "failure",
                        f"the body of {self.name(index)} was cancelled instead of settling "
                        "before the failure was raised",
                        index,
                    )
        elif (
            complete
            and error is not None
            and isinstance(error, Exception)
            and not isinstance(error, ValueError | TypeError)
        ):
            self.say(
                "failure",
                f"the step raised {error!r} though no scheduler phase, classifier or "
                "accept_context failed",
            )
        n = len(self.calls)
        if failure is None and (not self.raised or self.cut):
            for index in range(n):
                if index not in self.terminal:
                    self.say("answered-once", f"{self.name(index)} was never answered", index)
        if failure is not None:
            for index in range(n):
                if index not in self.started and index in self.terminal:
                    self.say(
                        "failure",
                        f"{self.name(index)} never started but was answered though the step failed",
                        index,
                    )
        if self.cut:
            for index, (how, detail) in self.terminal.items():
                if how != "aborted":
                    continue
                expected = TOOL_ABORTED if index in self.started else TOOL_ABORTED_BEFORE_DISPATCH
                if detail != expected:
                    self.say(
                        "abort",
                        f"{self.name(index)} was cut short by a cancellation but answered "
                        f"{detail}, not {expected}",
                        index,
                    )
        outcome = self.outcome
        if outcome is not None:
            results = outcome.results
            if len(results) != n:
                self.say(
                    "answered-once", f"outcome.results holds {len(results)} results for {n} calls"
                )
            for index, entry in enumerate(results[:n]):
                call = self.calls[index]
                if entry.call_id != call.id or entry.name != call.name:
                    self.say(
                        "result",
                        f"outcome.results[{index}] is for {entry.call_id}, not {call.id}",
                        index,
                    )
                how, detail = self.terminal.get(index, ("", None))
                if how == "committed" and entry.result is not detail:
                    self.say(
                        "result",
                        f"outcome.results[{index}] is not the result committed for {call.id}",
                        index,
                    )
                if how == "aborted" and _code(entry.result) != detail:
                    self.say(
                        "result",
                        f"outcome.results[{index}] is not the {detail} result of {call.id}",
                        index,
                    )

    def log(self) -> None:
        events = self.session.events[self.first_seq :]
        # By call id, in log order (a model may reuse an id: the k-th call with an id is
        # answered by the k-th result with it).
        call_at: dict[str, list[int]] = {}
        answers: dict[str, list[tuple[int, SessionEvent]]] = {}
        for position, event in enumerate(events):
            data = event.data
            if event.type == TOOL_CALL and isinstance(data, ToolCallData):
                call_at.setdefault(data.call_id, []).append(position)
            elif event.type == TOOL_RESULT and isinstance(data, ToolResultData):
                answers.setdefault(data.message.source.call_id, []).append((position, event))
        seen: dict[str, int] = {}
        for index, call in enumerate(self.calls):
            occurrence = seen[call.id] = seen.get(call.id, -1) + 1
            how, detail = self.terminal.get(index, ("", None))
            if not how:
                continue
            logged = answers.get(call.id, [])
            if len(logged) <= occurrence:
                self.say("result", f"the result of {call.id} is not in the log", index)
                continue
            position, event = logged[occurrence]
            data = event.data
            if how == "committed":
                expected = detail
            else:
                expected = (
                    aborted_result() if detail == TOOL_ABORTED else aborted_before_dispatch_result()
                )
            if isinstance(expected, ToolExecutionResult) and data != ToolResultData.from_result(
                data.turn, data.step, call.id, expected
            ):
                self.say(
                    "result",
                    f"the log's result for {call.id} is not the result the pool committed",
                    index,
                )
            if how == "aborted" and index not in self.started:
                calls_at = call_at.get(call.id, [])
                if position - 1 not in calls_at:
                    self.say(
                        "abort",
                        f"{call.id} never started but its result is not the synthetic pair "
                        "(its tool/call directly followed by its result)",
                        index,
                    )
        for violation in check_session(self.session, allow_unpaired=self.raised and not self.cut):
            if violation.seq >= self.first_seq:
                self.say(f"log/{violation.rule}", f"seq {violation.seq}: {violation.message}")


def _code(result: ToolExecutionResult) -> str | None:
    error = result.error
    return None if error is None or error.info is None else error.info.code


#: Old spellings (0.1) that still work for one release, with a ``DeprecationWarning``.
_DEPRECATED: dict[str, tuple[Callable[[], Any], str]] = {
    "run_scenario": (
        lambda: _expected_answer,
        "trio_harness.testing.run_scenario is deprecated: use "
        "trio_harness.lowlevel.run_scenario(scenario).answer",
    ),
    "LogViolation": (
        lambda: _LogViolation,
        "trio_harness.testing.LogViolation moved to trio_harness.lowlevel.LogViolation",
    ),
}


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        value, message = _DEPRECATED[name]
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return value()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


publish(__name__, globals(), __all__)

# Strategies for the library's value types (also registered by the hypothesis plugin the
# distribution declares, without this import).
with contextlib.suppress(ImportError):
    import trio_harness_hypothesis

    trio_harness_hypothesis.register()
