"""The streaming core: fed each call no later than a list core needs it, it decides the same."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_harness.lowlevel import CallState, Op, StepCore


def test_a_streaming_step_waits_for_its_first_call_and_for_the_end() -> None:
    core = StepCore(0, 2, stream=True)
    assert core.stream_open
    assert core.next_action() == (Op.RECEIVE, 0)
    assert core.arrived() == 0
    assert core.next_action() == (Op.CLASSIFY, 0)
    core.classified(0, True)
    assert core.next_action() == (Op.OPEN_GROUP, 0)
    assert core.next_action() == (Op.START, 0)
    assert core.prepared(0, dispatch=True)
    # The group goes on with call 1, not known yet: wait for it (c0 may settle meanwhile).
    assert core.next_action() == (Op.RECEIVE, 1)
    core.settled(0)
    assert core.next_action() == (Op.COMMIT, 0)
    core.committed_call(0)
    # Drained, but the group is not over until the next call or the end is known.
    assert core.next_action() == (Op.RECEIVE, 1)
    core.end_stream()
    assert core.next_action() == (Op.CLOSE_GROUP, 0)
    assert core.next_action() == (Op.DONE, 1)


def test_a_full_window_waits_for_a_settle_not_for_the_next_call() -> None:
    core = StepCore(1, 1, stream=True)
    core.classified(0, True)
    core.next_action()
    assert core.next_action() == (Op.START, 0)
    assert core.prepared(0, dispatch=True)
    assert core.next_action() == (Op.WAIT, -1)
    assert core.arrived() == 1
    assert core.next_action() == (Op.WAIT, -1)  # known, but the window is full
    core.settled(0)
    assert core.next_action() == (Op.COMMIT, 0)


def test_an_exclusive_call_does_not_wait_for_later_calls_but_the_next_group_does() -> None:
    core = StepCore(1, 4, stream=True)
    core.classified(0, False)
    assert core.next_action() == (Op.OPEN_GROUP, 0)
    assert core.next_action() == (Op.START, 0)
    assert core.prepared(0, dispatch=True)
    assert core.next_action() == (Op.WAIT, -1)  # a one-call group: no need for call 1
    core.settled(0)
    assert core.next_action() == (Op.COMMIT, 0)
    core.committed_call(0)
    assert core.next_action() == (Op.CLOSE_GROUP, 0)
    assert core.next_action() == (Op.RECEIVE, 1)


def test_a_next_call_no_longer_parallel_is_a_barrier_as_in_a_list() -> None:
    core = StepCore(1, 4, stream=True)
    core.classified(0, True)
    core.next_action()
    core.next_action()
    core.prepared(0, dispatch=True)
    assert core.next_action() == (Op.RECEIVE, 1)
    core.arrived()
    assert core.next_action() == (Op.CLASSIFY, 1)
    core.classified(1, False)
    assert core.next_action() == (Op.WAIT, -1)  # blocked; the stream being open changes nothing
    core.settled(0)
    assert core.next_action() == (Op.COMMIT, 0)
    core.committed_call(0)
    assert core.next_action() == (Op.CLASSIFY, 1)
    core.classified(1, False)
    assert core.next_action() == (Op.CLOSE_GROUP, 0)


def test_an_aborted_streaming_step_skips_every_call_that_still_arrives() -> None:
    core = StepCore(1, 2, stream=True, aborted=True)
    assert core.next_action() == (Op.SKIP, 0)
    core.skipped()
    assert core.next_action() == (Op.RECEIVE, 1)
    core.arrived()
    core.arrived()
    assert core.next_action() == (Op.SKIP, 1)
    core.skipped()
    core.end_stream()
    assert core.next_action() == (Op.DONE, 3)
    assert [core.state(i) for i in range(3)] == [CallState.SKIPPED] * 3


def test_a_failure_does_not_wait_for_the_stream() -> None:
    core = StepCore(0, 2, stream=True)
    core.fail(RuntimeError("broken stream"))
    assert core.next_action() == (Op.RAISE, -1)


def test_arrivals_after_the_end_are_rejected() -> None:
    core = StepCore(0, 2, stream=True)
    core.end_stream()
    with pytest.raises(RuntimeError, match="after the end of the stream"):
        core.arrived()
    with pytest.raises(RuntimeError):
        StepCore(2, 2).arrived()


@settings(max_examples=600)
@given(
    count=st.integers(0, 10),
    cap=st.integers(1, 4),
    aborted=st.integers(0, 5).map(lambda n: n == 0),
    ahead=st.integers(0, 10),
    data=st.data(),
)
def test_a_streaming_core_makes_the_list_cores_decisions(
    count: int, cap: int, aborted: bool, ahead: int, data: st.DataObject
) -> None:
    """Both cores get the same reports; the streaming one gets each call at a random moment no
    later than its RECEIVE. Every action other than RECEIVE is the list core's action."""
    known = min(ahead, count)
    lst = StepCore(count, cap, aborted=aborted)
    stream = StepCore(known, cap, aborted=aborted, stream=True)
    in_flight: list[int] = []
    receives = 0

    def feed() -> None:
        if stream.count < count:
            stream.arrived()
        elif stream.stream_open:
            stream.end_stream()

    def ask_stream() -> tuple[Op, int]:
        nonlocal receives
        while True:
            if data.draw(st.integers(0, 3)) == 0:
                feed()  # an early arrival, at a random moment
            action = stream.next_action()
            if action[0] is not Op.RECEIVE:
                return action
            receives += 1
            assert action[1] == stream.count
            feed()

    for _ in range(400):
        expected = lst.next_action()
        op, index = expected
        if op is Op.SKIP:
            # The streaming step skips the calls it knows, then each later one as it arrives.
            skipped: list[int] = []
            while True:
                action = ask_stream()
                if action[0] is Op.DONE:
                    break
                assert action[0] is Op.SKIP
                skipped.extend(range(action[1], stream.count))
                stream.skipped()
            lst.skipped()
            assert skipped == list(range(index, count))
            assert lst.next_action() == (Op.DONE, count)
            return
        assert ask_stream() == expected
        if op is Op.CLASSIFY:
            parallel = data.draw(st.booleans())
            lst.classified(index, parallel)
            stream.classified(index, parallel)
        elif op is Op.START:
            kind = data.draw(st.sampled_from(["dispatch", "result", "fail"]))
            if kind == "fail":
                for core in (lst, stream):
                    core.fail(RuntimeError("prepare"))
            else:
                dispatch = kind == "dispatch"
                if lst.prepared(index, dispatch=dispatch):
                    in_flight.append(index)
                stream.prepared(index, dispatch=dispatch)
        elif op is Op.COMMIT:
            lst.committed_call(index)
            stream.committed_call(index)
        elif op is Op.WAIT:
            which = in_flight.pop(data.draw(st.integers(0, len(in_flight) - 1)))
            fails = data.draw(st.integers(0, 9)) == 0
            for core in (lst, stream):
                if fails:
                    core.dispatch_failed(which, RuntimeError("dispatch"))
                else:
                    core.settled(which)
        elif op in (Op.RAISE, Op.DONE):
            assert stream.committed == lst.committed
            return
        if data.draw(st.integers(0, 15)) == 0:
            lst.abort()
            stream.abort()
        assert stream.in_flight == lst.in_flight
    raise AssertionError("the step did not end")
