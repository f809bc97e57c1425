"""How many pool bugs ``PoolMonitor`` catches: bugs planted one at a time into the real pool.

Each mutant patches the pool (its state machine ``StepCore``, its Trio ``Driver`` or the step's
recorder) for the length of one run of a fixed battery of probe steps: windows, barriers, an
abort, an outside cancellation, scheduler failures, a raising classifier, prepare-time results,
invalid and valid caps. The real pool passes every probe without a violation; every mutant but
the equivalent one must make the monitor report at least one violation of the rule it breaks.

One mutant cannot be caught, and is listed with the reason: closing a group while failed bodies
still run changes nothing observable, because the Trio nursery itself waits for the bodies to
settle before the failure is raised.
"""

from __future__ import annotations

import collections
import contextlib
import math
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest
import trio
import trio.testing

import trio_harness as th
from trio_harness import testing
from trio_harness._pool import driver as driver_module
from trio_harness._pool import machine as machine_module
from trio_harness._pool import steps as steps_module
from trio_harness._pool.driver import Driver
from trio_harness._pool.machine import CallState, StepCore
from trio_harness.lowlevel import DispatchOutcome, Preparation

SETTLED = CallState.SETTLED
IN_FLIGHT = CallState.IN_FLIGHT


# ---------------------------------------------------------------------------------------------
# The app the probes run: two tools, a scheduler wrapper that fails on request, a classifier
# that raises on request
# ---------------------------------------------------------------------------------------------


class Boom(Exception):
    """A scheduler failure planted by a probe."""


class FaultyScheduler:
    """The user's own scheduler wrapper: fails in ``prepare``/``dispatch`` when told to."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def prepare(self, input: th.ToolExecutionInput, /) -> Preparation:
        if isinstance(input.arguments, dict) and input.arguments.get("fail") == "prepare":
            raise Boom(f"prepare {input.call_id}")
        preparation: Preparation = await self.inner.prepare(input)
        return preparation

    async def dispatch(self, exec: th.ToolExecution, /) -> DispatchOutcome:
        outcome: DispatchOutcome = await self.inner.dispatch(exec)
        if isinstance(exec.arguments, dict) and exec.arguments.get("fail") == "dispatch":
            raise Boom(f"dispatch {exec.call_id}")
        return outcome

    async def finalize(
        self, exec: th.ToolExecution, result: th.ToolExecutionResult, /
    ) -> th.ToolExecutionResult:
        final: th.ToolExecutionResult = await self.inner.finalize(exec, result)
        return final

    def finish(
        self, exec: th.ToolExecution, result: th.ToolExecutionResult, /
    ) -> th.ToolExecutionResult:
        final: th.ToolExecutionResult = self.inner.finish(exec, result)
        return final


class ProbeRuntime(th.ToolRuntime):
    def execution_mode(self, input: th.ToolExecutionInput) -> th.ExecutionMode:
        if isinstance(input.arguments, dict) and input.arguments.get("classify") == "raise":
            raise Boom(f"classify {input.call_id}")
        return super().execution_mode(input)


def make_runtime() -> ProbeRuntime:
    async def body(args: Any, ctx: Any) -> str:
        await trio.sleep(args.get("ms", 1) / 1000)
        return "ok"

    runtime = ProbeRuntime()
    text = th.ToolOutput(
        schema={"type": "string"}, render=lambda args, value: [{"type": "text", "text": value}]
    )
    for name, parallel in (("read", True), ("write", False)):
        runtime.register(
            th.define_tool(
                name=name,
                description=name,
                parameters={"ms": {"type": "integer"}},
                output=text,
                execute=body,
                is_concurrency_safe=(lambda args: True) if parallel else None,
            )
        )
    runtime.scheduler = FaultyScheduler(runtime.scheduler)
    return runtime


@attrs.frozen
class Probe:
    name: str
    calls: tuple[tuple[str, dict[str, Any]], ...]
    cap: Any = 2
    abort_ms: int | None = None
    cancel_ms: int | None = None


def r(ms: int, **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("read", {"ms": ms, **extra})


def w(ms: int, **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("write", {"ms": ms, **extra})


PROBES = [
    Probe("window", (r(5), r(1), r(3), r(2), r(4)), cap=2),
    Probe("wide window", (r(5), r(1), r(3), r(2), r(4)), cap=3),
    Probe("barrier", (r(5), r(1), w(3), r(2), r(4)), cap=3),
    Probe("barriers", (w(2), r(3), r(1), w(1), r(2)), cap=2),
    Probe("prepare results", (r(3), ("missing", {}), r(1), ("missing", {}), r(2)), cap=2),
    Probe("abort", (r(10), r(10), r(1), w(1), r(1)), cap=2, abort_ms=5),
    Probe("cancellation", (r(10), r(10), r(10), r(1)), cap=2, cancel_ms=5),
    Probe("dispatch failure", (r(10), r(3, fail="dispatch"), r(10), r(1)), cap=3),
    Probe("two failures", (r(3, fail="dispatch"), r(5, fail="dispatch"), r(1)), cap=2),
    Probe("prepare failure", (r(4), r(1, fail="prepare"), r(1)), cap=2),
    Probe("classifier failure", (r(5), r(1, classify="raise"), r(1)), cap=2),
    Probe("cap True", (r(1), r(1)), cap=True),
    Probe("cap 2.5", (r(1), r(1)), cap=2.5),
    Probe("cap inf", (r(1), r(1)), cap=math.inf),
    Probe("cap 1", (r(2), r(1)), cap=1),
]


def run_probe(probe: Probe) -> list[testing.PoolViolation]:
    runtime = make_runtime()
    monitor = testing.PoolMonitor(runtime)
    session = th.Session()
    calls = [
        th.ToolCallBlock(f"c{index}", name, __import__("json").dumps(args))
        for index, (name, args) in enumerate(probe.calls)
    ]

    async def main() -> None:
        abort = trio.Event()

        async def abort_later(ms: int) -> None:
            await trio.sleep(ms / 1000)
            abort.set()

        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                if probe.abort_ms is not None:
                    nursery.start_soon(abort_later, probe.abort_ms)
                with trio.CancelScope() as scope:
                    if probe.cancel_ms is not None:
                        scope.deadline = trio.current_time() + probe.cancel_ms / 1000
                    with contextlib.suppress(Exception):
                        await monitor.execute_tool_calls(
                            session,
                            calls,
                            max_parallel_tool_calls=probe.cap,
                            abort=abort if probe.abort_ms is not None else None,
                        )
                nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return monitor.violations()


# ---------------------------------------------------------------------------------------------
# The mutants
# ---------------------------------------------------------------------------------------------

Patch = Callable[[pytest.MonkeyPatch], None]


def wrap(mp: pytest.MonkeyPatch, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
    mp.setattr(owner, name, make(getattr(owner, name)))


def window_too_wide(mp: pytest.MonkeyPatch) -> None:
    def make(init: Any) -> Any:
        # The core's count and the limiter's tokens both one too many.
        def __init__(self: Driver, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **kwargs)
            self._core._cap += 1
            self._window.total_tokens += 1

        return __init__

    wrap(mp, Driver, "__init__", make)


def window_of_one(mp: pytest.MonkeyPatch) -> None:
    def make(init: Any) -> Any:
        def __init__(self: Driver, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **kwargs)
            self._core._cap = 1
            self._window.total_tokens = 1

        return __init__

    wrap(mp, Driver, "__init__", make)


def no_rolling_refill(mp: pytest.MonkeyPatch) -> None:
    # Once a body of the group settled, wait for the whole window to drain before refilling.
    draining: dict[int, StepCore] = {}  # the cores waiting for their window to drain (kept
    # alive here, so an id is never reused while it is a key)

    def make_settled(settled: Any) -> Any:
        def patched(self: StepCore, index: int) -> None:
            settled(self, index)
            if self._in_flight > 0:
                draining[id(self)] = self

        return patched

    def make_next(next_action: Any) -> Any:
        def patched(self: StepCore) -> Any:
            cursor = self._cursor
            commit_ready = cursor < self._next and self._state[cursor] == SETTLED
            if (
                self._in_group
                and not self._has_failure
                and self._in_flight > 0
                and id(self) in draining
                and not commit_ready
            ):
                return machine_module.Op.WAIT, -1
            if self._in_flight == 0:
                draining.pop(id(self), None)
            return next_action(self)

        return patched

    wrap(mp, StepCore, "settled", make_settled)
    wrap(mp, StepCore, "next_action", make_next)


def classification_ignored(mp: pytest.MonkeyPatch) -> None:
    wrap(mp, StepCore, "classified", lambda f: lambda self, index, parallel: f(self, index, True))


def no_reclassification(mp: pytest.MonkeyPatch) -> None:
    def make(classified: Any) -> Any:
        def patched(self: StepCore, index: int, parallel: bool) -> None:
            classified(self, index, True if self._in_group else parallel)

        return patched

    wrap(mp, StepCore, "classified", make)


def exclusive_joins_a_group(mp: pytest.MonkeyPatch) -> None:
    def make(between: Any) -> Any:
        def patched(self: StepCore) -> Any:
            action = between(self)
            if action[0] is machine_module.Op.OPEN_GROUP and not self._parallel:
                self._group_end = self._count
            return action

        return patched

    wrap(mp, StepCore, "_between_groups", make)


def barrier_before_commit(mp: pytest.MonkeyPatch) -> None:
    # An exclusive call found blocked is started as soon as the window drained, before the
    # earlier results are committed.
    blocked: dict[int, tuple[StepCore, int]] = {}  # the exclusive call each core found blocked

    def make_classified(classified: Any) -> Any:
        def patched(self: StepCore, index: int, parallel: bool) -> None:
            if self._in_group and not parallel:
                blocked[id(self)] = (self, index)
            classified(self, index, parallel)

        return patched

    def make_next(next_action: Any) -> Any:
        def patched(self: StepCore) -> Any:
            nxt = self._next
            if (
                self._in_group
                and not self._has_failure
                and not self._aborted
                and self._in_flight == 0
                and blocked.get(id(self), (None, -1))[1] == nxt
                and self._cursor < nxt
            ):
                del blocked[id(self)]
                self._next_mode = None
                self._blocked = False
                self._next = nxt + 1
                self._state[nxt] = CallState.PREPARING
                return machine_module.Op.START, nxt
            return next_action(self)

        return patched

    wrap(mp, StepCore, "classified", make_classified)
    wrap(mp, StepCore, "next_action", make_next)


def start_before_commit(mp: pytest.MonkeyPatch) -> None:
    def make(next_action: Any) -> Any:
        def patched(self: StepCore) -> Any:
            cursor = self._cursor
            if (
                self._in_group
                and not self._has_failure
                and not self._aborted
                and not self._blocked
                and cursor < self._next < self._group_end
                and self._state[cursor] == SETTLED
                and self._in_flight < self._cap
                and self._next_mode is not False
            ):
                self._state[cursor] = IN_FLIGHT  # hide the ready result for one decision
                try:
                    return next_action(self)
                finally:
                    self._state[cursor] = SETTLED
            return next_action(self)

        return patched

    wrap(mp, StepCore, "next_action", make)


def commits_swapped(mp: pytest.MonkeyPatch) -> None:
    # The recorder logs call 0's result after call 1's.
    held: dict[int, tuple[Any, Any]] = {}  # recorder id -> (recorder, call 0's result)

    def make(committed: Any) -> Any:
        def patched(self: Any, index: int, result: Any) -> None:
            if index == 0:
                held[id(self)] = (self, result)
                return
            committed(self, index, result)
            if id(self) in held:
                committed(self, 0, held.pop(id(self))[1])

        return patched

    wrap(mp, steps_module._SessionRecorder, "committed", make)


class _Lifo(collections.deque[Any]):
    def popleft(self) -> Any:
        return self.pop()


def dispatch_out_of_order(mp: pytest.MonkeyPatch) -> None:
    def make(init: Any) -> Any:
        def __init__(self: Driver, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **kwargs)
            self._pending = _Lifo()

        return __init__

    wrap(mp, Driver, "__init__", make)


def abort_ignored(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(StepCore, "abort", lambda self: None)


def skipped_marked_aborted(mp: pytest.MonkeyPatch) -> None:
    def skipped(self: Any, index: int) -> None:
        self.started(index)
        self.committed(index, th.aborted_result())

    mp.setattr(steps_module._SessionRecorder, "skipped", skipped)


def cut_short_marked_before_dispatch(mp: pytest.MonkeyPatch) -> None:
    def cut_short(self: Any, index: int) -> None:
        if self._call_seqs[index] < 0:
            self.started(index)
        data = th.log.ToolResultData.from_result(
            self._turn, self._step, self._blocks[index].id, th.aborted_before_dispatch_result()
        )
        self._session.append("tool/result", data, source_event_seqs=(self._call_seqs[index],))

    mp.setattr(steps_module._SessionRecorder, "cut_short", cut_short)


def aborted_rewritten(mp: pytest.MonkeyPatch) -> None:
    def make(record: Any) -> Any:
        def patched(self: Driver, index: int, result: th.ToolExecutionResult) -> bool:
            info = result.error.info if result.error is not None else None
            if info is not None and info.code == th.TOOL_ABORTED:
                result = th.aborted_before_dispatch_result()
            return bool(record(self, index, result))

        return patched

    wrap(mp, Driver, "_record_commit", make)


def failure_raised_at_once(mp: pytest.MonkeyPatch) -> None:
    async def _dispatch(self: Driver) -> None:
        index, exec = self._pending.popleft()
        if self._trace is not None:
            self._trace("body-started", index, None)
        try:
            outcome = await self._scheduler.dispatch(exec)  # a failure escapes into the nursery
        finally:
            self._window.release_on_behalf_of(index)
        if self._trace is not None:
            self._trace("settled", index, None)
        self._post(
            driver_module._Settled(index, exec, outcome.result, outcome.kind == "post-result")
        )

    mp.setattr(Driver, "_dispatch", _dispatch)


def failure_swallowed(mp: pytest.MonkeyPatch) -> None:
    def make(next_action: Any) -> Any:
        def patched(self: StepCore) -> Any:
            action = next_action(self)
            if action[0] is machine_module.Op.RAISE:
                return machine_module.Op.DONE, self._count
            return action

        return patched

    wrap(mp, StepCore, "next_action", make)


def failure_does_not_stop(mp: pytest.MonkeyPatch) -> None:
    # A failed dispatch is remembered, but the step goes on until its window drained.
    failures: dict[int, tuple[StepCore, object]] = {}

    def dispatch_failed(self: StepCore, index: int, error: object) -> None:
        self._state[index] = CallState.FAILED
        self._in_flight -= 1
        self._blocked = False
        failures.setdefault(id(self), (self, error))

    def make_next(next_action: Any) -> Any:
        def patched(self: StepCore) -> Any:
            pending = failures.get(id(self), (None, None))[1]
            if pending is not None and (not self._in_group or self._in_flight == 0):
                self.fail(pending)
            return next_action(self)

        return patched

    mp.setattr(StepCore, "dispatch_failed", dispatch_failed)
    wrap(mp, StepCore, "next_action", make_next)


def last_failure_kept(mp: pytest.MonkeyPatch) -> None:
    def fail(self: StepCore, error: object) -> None:
        self._has_failure = True
        self._failure = error

    mp.setattr(StepCore, "fail", fail)


def close_group_before_draining(mp: pytest.MonkeyPatch) -> None:
    # Equivalent: the nursery waits for the bodies anyway.
    def make(next_action: Any) -> Any:
        def patched(self: StepCore) -> Any:
            if self._in_group and self._has_failure and self._in_flight:
                self._in_group = False
                return machine_module.Op.CLOSE_GROUP, self._group_start
            return next_action(self)

        return patched

    wrap(mp, StepCore, "next_action", make)


def classifier_failure_swallowed(mp: pytest.MonkeyPatch) -> None:
    def _classify(self: Driver, index: int) -> None:
        try:
            mode = self._runtime.execution_mode(self._inputs[index])
        except Exception:
            mode = th.EXCLUSIVE
        if self._trace is not None:
            self._trace("classified", index, mode.kind)
        self._core.classified(index, mode.kind == "parallel")

    mp.setattr(Driver, "_classify", _classify)


def result_logged_twice(mp: pytest.MonkeyPatch) -> None:
    def make(committed: Any) -> Any:
        def patched(self: Any, index: int, result: Any) -> None:
            committed(self, index, result)
            if index == 0:
                committed(self, index, result)

        return patched

    wrap(mp, steps_module._SessionRecorder, "committed", make)


def result_not_logged(mp: pytest.MonkeyPatch) -> None:
    def make(committed: Any) -> Any:
        def patched(self: Any, index: int, result: Any) -> None:
            if index == 1:
                self.results.append(result)
                return
            committed(self, index, result)

        return patched

    wrap(mp, steps_module._SessionRecorder, "committed", make)


def skipped_pairs_split(mp: pytest.MonkeyPatch) -> None:
    def _skip(self: Driver, first: int) -> None:
        indices = range(first, self._core.count)
        for index in indices:
            self._recorder.started(index)
        for index in indices:
            self._recorder.committed(index, th.aborted_before_dispatch_result())
            if self._trace is not None:
                self._trace("aborted", index, th.TOOL_ABORTED_BEFORE_DISPATCH)
        self._core.skipped()

    mp.setattr(Driver, "_skip", _skip)


def seal_forgets_unstarted(mp: pytest.MonkeyPatch) -> None:
    def _seal(self: Driver) -> None:
        started, _unstarted = self._core.seal()
        for index in started:
            self._recorder.cut_short(index)
            if self._trace is not None:
                self._trace("aborted", index, th.TOOL_ABORTED)

    mp.setattr(Driver, "_seal", _seal)


def outcome_without_synthetic_results(mp: pytest.MonkeyPatch) -> None:
    real = steps_module._step_results

    def _step_results(calls: Any, results: Any) -> Any:
        return tuple(
            entry
            for entry in real(calls, results)
            if not (entry.result.error and entry.result.error.info)
        )

    mp.setattr(steps_module, "_step_results", _step_results)


def outcome_never_aborted(mp: pytest.MonkeyPatch) -> None:
    def make(run: Any) -> Any:
        async def patched(self: Driver) -> bool:
            await run(self)
            return False

        return patched

    wrap(mp, Driver, "run", make)


def _lenient(cap: object, message: str = "") -> Any:
    return cap


def cap_not_validated(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(steps_module, "validate_cap", _lenient)
    mp.setattr(machine_module, "validate_cap", _lenient)


def cap_validated_late(mp: pytest.MonkeyPatch) -> None:
    cap_not_validated(mp)

    def make(start: Any) -> Any:
        async def patched(self: Driver, index: int, nursery: trio.Nursery) -> None:
            await start(self, index, nursery)
            cap = self._core.cap
            if not (type(cap) is int and cap >= 1):
                raise ValueError("max_parallel_tool_calls must be a positive integer")

        return patched

    wrap(mp, Driver, "_start", make)


def valid_cap_refused(mp: pytest.MonkeyPatch) -> None:
    real = machine_module.validate_cap

    def validate(
        cap: object, message: str = "max_parallel_tool_calls must be a positive integer"
    ) -> int:
        if cap == 1:
            raise ValueError(message)
        return real(cap, message)

    mp.setattr(steps_module, "validate_cap", validate)


#: (mutant, the rule it breaks): the monitor must report a violation of that rule.
MUTANTS: list[tuple[Patch, str]] = [
    (window_too_wide, "window"),
    (window_of_one, "window-idle"),
    (no_rolling_refill, "window-idle"),
    (classification_ignored, "exclusive"),
    (no_reclassification, "exclusive"),
    (exclusive_joins_a_group, "exclusive"),
    (barrier_before_commit, "barrier"),
    (start_before_commit, "commit-first"),
    (commits_swapped, "log/model-order"),
    (dispatch_out_of_order, "order"),
    (abort_ignored, "abort"),
    (skipped_marked_aborted, "result"),
    (cut_short_marked_before_dispatch, "result"),
    (aborted_rewritten, "result"),
    (skipped_pairs_split, "abort"),
    (seal_forgets_unstarted, "answered-once"),
    (outcome_without_synthetic_results, "answered-once"),
    (outcome_never_aborted, "abort"),
    (failure_raised_at_once, "failure"),
    (failure_swallowed, "failure"),
    (failure_does_not_stop, "failure"),
    (last_failure_kept, "failure"),
    (classifier_failure_swallowed, "failure"),
    (result_logged_twice, "log/one-result"),
    (result_not_logged, "result"),
    (cap_not_validated, "cap"),
    (cap_validated_late, "cap"),
    (valid_cap_refused, "cap"),
]
#: Mutants no observer can tell from the real pool, with the reason.
EQUIVALENT: list[tuple[Patch, str]] = [
    (close_group_before_draining, "the Trio nursery waits for the failed step's bodies anyway"),
]


@contextlib.contextmanager
def planted(mutant: Patch) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mutant(mp)
        yield


def battery() -> dict[str, list[testing.PoolViolation]]:
    return {probe.name: run_probe(probe) for probe in PROBES}


def test_the_real_pool_passes_every_probe() -> None:
    assert battery() == {probe.name: [] for probe in PROBES}


def test_the_monitor_catches_every_planted_pool_bug() -> None:
    caught: dict[str, set[str]] = {}
    for mutant, _rule in MUTANTS:
        with planted(mutant):
            found = battery()
        caught[mutant.__name__] = {v.rule for violations in found.values() for v in violations}
    missed = [mutant.__name__ for mutant, _ in MUTANTS if not caught[mutant.__name__]]
    wrong_rule = [
        (mutant.__name__, rule, sorted(caught[mutant.__name__]))
        for mutant, rule in MUTANTS
        if caught[mutant.__name__] and rule not in caught[mutant.__name__]
    ]
    assert (missed, wrong_rule) == ([], [])
    assert len(MUTANTS) == 28  # the score: 28 of 28 (plus one equivalent mutant, below)


def test_the_once_equivalent_mutant_is_seen_by_the_trace_rule() -> None:
    # It closes the group before the in-flight dispatches settled: the nursery still waits for
    # them, but the tracer is told group-close first (the blind mutant 008 is this bug).
    for mutant, _reason in EQUIVALENT:
        with planted(mutant):
            found = battery()
        assert {v.rule for violations in found.values() for v in violations} == {"trace"}


def test_the_probe_runtime_is_used_by_the_driver_module() -> None:
    # The mutants patch these very objects: the pool must still be built from them.
    assert driver_module.Driver is Driver
    assert steps_module.Driver is Driver
