"""The pure scheduling core, step by step and as a hypothesis state machine."""

from __future__ import annotations

import pathlib
import sys

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from trio_harness.lowlevel import (
    CallState,
    Op,
    StepCore,
    validate_cap,
)


def test_core_does_not_import_trio() -> None:
    import trio_harness._pool.machine as core

    assert "trio" not in core.__dict__
    source = pathlib.Path(core.__file__).read_text(encoding="utf-8")
    assert "import trio" not in source
    assert "trio_harness._pool.machine" in sys.modules


@pytest.mark.parametrize("cap", [0, -3, 1.0, True, None, "1"])
def test_validate_cap_rejects_non_positive_integers(cap: object) -> None:
    with pytest.raises(ValueError, match=r"^max_parallel_tool_calls must be a positive integer$"):
        validate_cap(cap)


def test_validate_cap_accepts_positive_integers() -> None:
    assert validate_cap(1) == 1
    assert validate_cap(10**9) == 10**9


def start_parallel(core: StepCore, index: int) -> None:
    """Classifies call ``index`` parallel and starts it for dispatch (opening the group if due)."""
    core.classified(index, True)
    action = core.next_action()
    if action[0] is Op.OPEN_GROUP:
        action = core.next_action()
    assert action == (Op.START, index)
    assert core.prepared(index, dispatch=True) is True


def test_parallel_group_fills_the_window_then_waits() -> None:
    core = StepCore(3, 2)
    assert core.next_action() == (Op.CLASSIFY, 0)
    core.classified(0, True)
    assert core.next_action() == (Op.OPEN_GROUP, 0)
    assert core.next_action() == (Op.START, 0)
    assert core.prepared(0, dispatch=True) is True
    assert core.next_action() == (Op.CLASSIFY, 1)  # later calls are reclassified before start
    core.classified(1, True)
    assert core.next_action() == (Op.START, 1)
    assert core.prepared(1, dispatch=True)
    assert core.next_action() == (Op.WAIT, -1)  # window full
    core.settled(1)
    assert core.next_action() == (Op.CLASSIFY, 2)  # c1 cannot commit before c0
    core.classified(2, True)
    assert core.next_action() == (Op.START, 2)
    assert core.prepared(2, dispatch=True)
    assert core.next_action() == (Op.WAIT, -1)
    core.settled(0)
    assert core.next_action() == (Op.COMMIT, 0)
    core.committed_call(0)
    assert core.next_action() == (Op.COMMIT, 1)
    core.committed_call(1)
    assert core.next_action() == (Op.WAIT, -1)
    core.settled(2)
    assert core.next_action() == (Op.COMMIT, 2)
    core.committed_call(2)
    assert core.next_action() == (Op.CLOSE_GROUP, 0)
    assert core.next_action() == (Op.DONE, 3)
    assert not core.aborted


def test_exclusive_call_is_a_one_call_group() -> None:
    core = StepCore(2, 5)
    core.classified(0, False)
    assert core.next_action() == (Op.OPEN_GROUP, 0)
    assert core.next_action() == (Op.START, 0)
    assert not core.prepared(0, dispatch=False)  # prepare produced the result
    assert core.next_action() == (Op.COMMIT, 0)
    core.committed_call(0)
    assert core.next_action() == (Op.CLOSE_GROUP, 0)
    assert core.next_action() == (Op.CLASSIFY, 1)


def test_commit_comes_before_the_next_classification() -> None:
    core = StepCore(3, 3)
    start_parallel(core, 0)
    core.settled(0)
    assert core.next_action() == (Op.COMMIT, 0)


def test_a_call_no_longer_parallel_ends_the_group_once_drained() -> None:
    core = StepCore(3, 3)
    start_parallel(core, 0)
    assert core.next_action() == (Op.CLASSIFY, 1)
    core.classified(1, False)
    assert core.next_action() == (Op.WAIT, -1)  # blocked: no reclassification until a settle
    core.settled(0)
    assert core.next_action() == (Op.COMMIT, 0)
    core.committed_call(0)
    assert core.next_action() == (Op.CLASSIFY, 1)  # reclassified afresh
    core.classified(1, False)
    assert core.next_action() == (Op.CLOSE_GROUP, 0)
    assert core.next_action() == (Op.CLASSIFY, 1)  # first call of the next group
    core.classified(1, False)
    assert core.next_action() == (Op.OPEN_GROUP, 1)
    assert not core.group_parallel


def test_abort_drains_commits_and_skips_the_rest() -> None:
    core = StepCore(4, 2)
    start_parallel(core, 0)
    core.abort()
    assert core.next_action() == (Op.WAIT, -1)
    core.settled(0)
    assert core.next_action() == (Op.COMMIT, 0)
    core.committed_call(0)
    assert core.next_action() == (Op.CLOSE_GROUP, 0)
    assert core.next_action() == (Op.SKIP, 1)
    core.skipped()
    assert core.next_action() == (Op.DONE, 4)
    assert core.aborted
    assert [core.state(i) for i in range(4)] == [CallState.COMMITTED] + [CallState.SKIPPED] * 3


def test_already_aborted_step_skips_everything_without_classifying() -> None:
    core = StepCore(2, 1, aborted=True)
    assert core.next_action() == (Op.SKIP, 0)
    core.skipped()
    assert core.next_action() == (Op.DONE, 2)


def test_failure_drains_without_commits_then_raises_the_first() -> None:
    core = StepCore(3, 3)
    start_parallel(core, 0)
    start_parallel(core, 1)
    first, second = RuntimeError("first"), RuntimeError("second")
    core.dispatch_failed(1, first)
    core.classified(2, True)
    assert core.next_action() == (Op.WAIT, -1)  # no start after a failure
    core.settled(0)
    core.fail(second)
    assert core.next_action() == (Op.CLOSE_GROUP, 0)  # settled c0 is not committed
    assert core.next_action() == (Op.RAISE, -1)
    assert core.failure is first
    assert core.state(0) == CallState.SETTLED


def test_prepared_for_dispatch_after_a_failure_is_abandoned() -> None:
    core = StepCore(2, 2)
    core.classified(0, True)
    core.next_action()
    core.next_action()
    core.fail(ValueError("x"))
    assert core.prepared(0, dispatch=True) is False
    assert core.state(0) == CallState.ABANDONED
    assert core.in_flight == 0


def test_seal_returns_started_and_unstarted_ranges() -> None:
    core = StepCore(4, 2)
    start_parallel(core, 0)
    start_parallel(core, 1)
    assert core.seal() == (range(0, 2), range(2, 4))
    assert core.in_flight == 0


def test_reports_out_of_turn_are_rejected() -> None:
    core = StepCore(2, 2)
    with pytest.raises(RuntimeError, match="call 0 is PENDING, expected IN_FLIGHT"):
        core.settled(0)
    with pytest.raises(ValueError, match="classified call 1, expected 0"):
        core.classified(1, True)
    with pytest.raises(RuntimeError):
        core.skipped()


class CoreMachine(RuleBasedStateMachine):
    """Drive the core like the Trio driver would, with random outcomes, checking invariants."""

    def __init__(self) -> None:
        super().__init__()
        self.core: StepCore | None = None
        self.finished = False
        self.in_flight: list[int] = []
        self.commits: list[int] = []
        self.starts: list[int] = []
        self.aborted_at_start: int | None = None
        self.failed = False
        self.group_parallel = False

    @initialize(count=st.integers(0, 12), cap=st.integers(1, 5), aborted=st.booleans())
    def create(self, count: int, cap: int, aborted: bool) -> None:
        self.core = StepCore(count, cap, aborted=aborted and count % 3 == 0)
        if self.core.aborted:
            self.aborted_at_start = 0

    @precondition(lambda self: self.core is not None and not self.finished)
    @rule(data=st.data())
    def act(self, data: st.DataObject) -> None:
        core = self.core
        assert core is not None
        op, index = core.next_action()
        if op is Op.CLASSIFY:
            core.classified(index, data.draw(st.booleans()))
        elif op is Op.OPEN_GROUP:
            assert core.in_flight == 0
            self.group_parallel = core.group_parallel
        elif op is Op.START:
            assert not core.aborted
            assert not core.has_failure
            if not self.group_parallel:
                assert core.in_flight == 0
            assert index == len(self.starts)
            self.starts.append(index)
            kind = data.draw(st.sampled_from(["dispatch", "result", "fail"]))
            if kind == "fail":
                core.fail(RuntimeError(f"prepare {index}"))
                self.failed = True
            elif core.prepared(index, dispatch=kind == "dispatch"):
                self.in_flight.append(index)
        elif op is Op.COMMIT:
            assert not core.has_failure
            assert index == len(self.commits)
            if data.draw(st.integers(0, 9)) == 0:
                core.fail(RuntimeError(f"finalize {index}"))
                self.failed = True
            else:
                core.committed_call(index)
                self.commits.append(index)
        elif op is Op.WAIT:
            assert self.in_flight
            which = self.in_flight.pop(data.draw(st.integers(0, len(self.in_flight) - 1)))
            if data.draw(st.integers(0, 9)) == 0:
                core.dispatch_failed(which, RuntimeError(f"dispatch {which}"))
                self.failed = True
            else:
                core.settled(which)
        elif op is Op.CLOSE_GROUP:
            assert core.in_flight == 0
        elif op is Op.SKIP:
            assert core.aborted
            assert index == len(self.starts)
            core.skipped()
        elif op is Op.RAISE:
            assert self.failed
            assert core.in_flight == 0
            self.finished = True
        elif op is Op.DONE:
            assert not self.failed
            assert self.commits == list(range(len(self.starts)))
            assert core.committed == core.count
            self.finished = True

    @rule()
    def settle_down(self) -> None:
        # Always applicable, so a finished machine can still take steps.
        if self.finished:
            assert self.core is not None
            assert self.core.in_flight == 0

    @precondition(lambda self: self.core is not None and not self.finished)
    @rule()
    def abort(self) -> None:
        assert self.core is not None
        if not self.core.aborted:
            self.aborted_at_start = len(self.starts)
        self.core.abort()

    @invariant()
    def window_and_cursors(self) -> None:
        core = self.core
        if core is None:
            return
        assert 0 <= core.in_flight <= core.cap
        assert core.in_flight == len(self.in_flight) or self.finished
        assert core.committed <= core.started <= core.count
        if self.aborted_at_start is not None:
            assert len(self.starts) == self.aborted_at_start  # nothing starts after an abort


TestCoreMachine = CoreMachine.TestCase
