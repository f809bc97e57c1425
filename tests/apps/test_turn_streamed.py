"""``run_turn`` over a model that streams its calls (issue 21): calls start as they are complete,
the log is the list run's, and whatever ends a streamed step (the model's error, an abort, a
scheduler failure, a cancellation from outside) every call handed over is answered, in the log
and to the model, and the conversation never holds results without their call message (scripted
model, virtual time, deterministic)."""

from __future__ import annotations

import pytest
import trio
import trio.testing

import trio_harness as th

from .scripted_model import StreamedReply, StreamingModel
from .test_turn_interrupted import (
    Broken,
    assert_log_answers_every_call,
    break_dispatch,
    codes,
    slow_runtime,
)

# Three waits complete at 0.5, 1.0 and 1.5 s; the reply ends at 2 s.
CALLS = [
    (0.5, ("c1", "wait", '{"seconds": 3}')),
    (1.0, ("c2", "wait", '{"seconds": 1}')),
    (1.5, ("c3", "wait", '{"seconds": 1}')),
]
FINAL: StreamedReply = ("done", [], 0.5, None)


def log_of(session: th.Session) -> list[object]:
    return [(e.type, e.data, e.source_event_seqs) for e in session.events]


async def test_calls_start_as_they_arrive_and_the_step_ends_sooner(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[th.turn.TurnEvent] = []
    model = StreamingModel([("go", list(CALLS), 2.0, None), FINAL])
    result = await th.run_turn(model, slow_runtime(), th.Session(), on_event=seen.append)
    assert (result.stop, result.steps, result.text) == ("done", 1, "done")
    starts = [(e.call_id, e.time) for e in seen if isinstance(e, th.turn.ToolStarted)]
    assert starts == [("c1", 0.5), ("c2", 1.0), ("c3", 1.5)]
    finished = next(e for e in seen if isinstance(e, th.turn.StepFinished))
    assert [type(e).__name__ for e in seen[:3]] == ["ModelRequested", "StepStarted", "ToolStarted"]
    replied = next(i for i, e in enumerate(seen) if isinstance(e, th.turn.ModelReplied))
    assert seen.index(finished) > replied
    assert trio.current_time() == 4.0  # c1: 0.5 + 3 s, then the final reply (0.5 s)
    assert model.conversation == [
        ("reply", ["c1", "c2", "c3"]),
        ("results", ["c1", "c2", "c3"]),
        ("reply", []),
    ]


async def test_stream_calls_false_waits_for_the_whole_reply(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[th.turn.TurnEvent] = []
    model = StreamingModel([("go", list(CALLS), 2.0, None), FINAL])
    await th.run_turn(model, slow_runtime(), th.Session(), on_event=seen.append, stream_calls=False)
    starts = [e.time for e in seen if isinstance(e, th.turn.ToolStarted)]
    assert starts == [2.0, 2.0, 2.0]
    assert trio.current_time() == 5.5


async def test_calls_that_arrive_before_they_are_needed_log_exactly_as_a_list(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # c1 runs 3 s: c2 and c3 arrive while it runs, before the list step would commit anything.
    streamed, listed = th.Session(), th.Session()
    await th.run_turn(
        StreamingModel([("go", list(CALLS), 2.0, None), FINAL]), slow_runtime(), streamed
    )
    whole = StreamingModel([("go", list(CALLS), 0.0, None), FINAL], streams=False)
    await th.run_turn(whole, slow_runtime(), listed)
    assert log_of(streamed) == log_of(listed)


async def test_a_model_error_mid_stream_aborts_the_step_then_goes_on_as_itself(
    autojump_clock: trio.testing.MockClock,
) -> None:
    class Overloaded(Exception):
        pass

    # c1 runs (until aborted), c2 waits behind the exclusive write; the stream breaks at 2 s.
    calls = [
        (0.5, ("c1", "wait", '{"seconds": 10}')),
        (1.0, ("c2", "write", '{"text": "x"}')),
    ]
    model = StreamingModel([("", calls, 2.0, Overloaded("overloaded"))])
    session = th.Session()
    with pytest.raises(Overloaded, match="overloaded"):
        await th.run_turn(model, slow_runtime(), session)
    assert trio.current_time() == 2.0
    assert codes(model.results_seen[-1]) == [("c1", "ABORTED"), ("c2", "ABORTED_BEFORE_DISPATCH")]
    assert model.conversation == [("partial", ["c1", "c2"]), ("results", ["c1", "c2"])]
    assert_log_answers_every_call(session)


async def test_a_model_error_before_any_call_is_the_list_runs(
    autojump_clock: trio.testing.MockClock,
) -> None:
    model = StreamingModel([("", [], 1.0, KeyError("gone"))])
    session = th.Session()
    with pytest.raises(KeyError):
        await th.run_turn(model, slow_runtime(), session)
    assert model.conversation == []
    assert session.events == []


async def test_an_abort_mid_stream_cancels_the_request_and_answers_what_arrived(
    autojump_clock: trio.testing.MockClock,
) -> None:
    model = StreamingModel([("go", list(CALLS), 2.0, None), FINAL])
    session = th.Session()
    abort = trio.Event()
    async with trio.open_nursery() as nursery:

        async def abort_at(seconds: float) -> None:
            await trio.sleep(seconds)
            abort.set()

        nursery.start_soon(abort_at, 1.2)
        result = await th.run_turn(model, slow_runtime(), session, abort=abort)
    assert (result.stop, result.steps, result.reply) == ("aborted", 1, None)
    assert trio.current_time() == 1.2
    # c3 was still streaming: never run, never in the conversation.
    assert codes(model.results_seen[-1]) == [("c1", "ABORTED"), ("c2", "ABORTED")]
    assert model.conversation == [("partial", ["c1", "c2"]), ("results", ["c1", "c2"])]
    assert_log_answers_every_call(session)


async def test_an_abort_before_any_call_is_the_list_runs(
    autojump_clock: trio.testing.MockClock,
) -> None:
    model = StreamingModel([("go", list(CALLS), 2.0, None)])
    abort = trio.Event()
    async with trio.open_nursery() as nursery:

        async def abort_soon() -> None:
            await trio.sleep(0.2)
            abort.set()

        nursery.start_soon(abort_soon)
        result = await th.run_turn(model, slow_runtime(), th.Session(), abort=abort)
    assert (result.stop, result.steps) == ("aborted", 0)
    assert model.conversation == []


async def test_a_cancellation_from_outside_mid_stream_still_answers_every_call_handed_over(
    autojump_clock: trio.testing.MockClock,
) -> None:
    model = StreamingModel([("go", list(CALLS), 2.0, None), FINAL])
    session = th.Session()
    with trio.move_on_after(1.2) as scope:
        await th.run_turn(model, slow_runtime(), session)
    assert scope.cancelled_caught
    assert codes(model.results_seen[-1]) == [("c1", "ABORTED"), ("c2", "ABORTED")]
    assert model.conversation == [("partial", ["c1", "c2"]), ("results", ["c1", "c2"])]
    assert_log_answers_every_call(session)


async def test_a_scheduler_failure_mid_stream_cancels_the_request_and_answers_the_step(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runtime = slow_runtime()
    break_dispatch(runtime, after=1)
    model = StreamingModel([("go", list(CALLS), 3.0, None), FINAL])
    session = th.Session()
    with pytest.raises(Broken, match="dispatch exploded"):
        await th.run_turn(model, runtime, session)
    # c1 failed at 1.5 s; c2, in flight, settled at 2 s; then the request was cancelled (the
    # reply would have ended at 3 s). c3 arrived after the failure: answered as never started.
    assert trio.current_time() == 2.0
    assert codes(model.results_seen[-1]) == [
        ("c1", "ABORTED"),
        ("c2", "ABORTED"),
        ("c3", "ABORTED_BEFORE_DISPATCH"),
    ]
    assert model.conversation[0] == ("partial", ["c1", "c2", "c3"])
    assert_log_answers_every_call(session)


@pytest.mark.parametrize("first", ["model", "pool"])
async def test_a_model_error_and_a_scheduler_failure_in_one_step_are_both_raised_in_a_group(
    autojump_clock: trio.testing.MockClock, first: str
) -> None:
    class Overloaded(Exception):
        pass

    runtime = slow_runtime()
    if first == "pool":
        break_dispatch(runtime, after=1)
    else:
        # The real dispatch runs until the abort, then the dispatch fails.
        break_dispatch(runtime, run_first=True)
    if first == "model":
        # The stream breaks at 2 s: c1 (10 s) is aborted, and its dispatch then fails.
        calls = [(0.5, ("c1", "wait", '{"seconds": 10}'))]
        model = StreamingModel([("", calls, 2.0, Overloaded("overloaded"))])
    else:
        # c1's dispatch fails at 1.5 s; the stream breaks at 1.8 s while c2 is in flight (2 s).
        calls = [(0.5, ("c1", "wait", '{"seconds": 3}')), (1.0, ("c2", "wait", '{"seconds": 1}'))]
        model = StreamingModel([("", calls, 1.8, Overloaded("overloaded"))])
    session = th.Session()
    with pytest.raises(ExceptionGroup) as caught:
        await th.run_turn(model, runtime, session)
    group = caught.value
    assert str(group) == (
        "the model's stream and the pool both failed in turn 0, step 0 (2 sub-exceptions)"
    )
    model_error, failure = group.exceptions
    assert (type(model_error), str(model_error)) == (Overloaded, "overloaded")
    assert (type(failure), str(failure)) == (Broken, "dispatch exploded")
    # Raised once every call in flight settled, every call answered.
    assert trio.current_time() == 2.0
    ids = [call[0] for _, call in calls]
    assert codes(model.results_seen[-1]) == [(call_id, "ABORTED") for call_id in ids]
    assert model.conversation == [("partial", ids), ("results", ids)]
    assert_log_answers_every_call(session)


async def test_the_step_at_the_limit_is_answered_whole(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[th.turn.TurnEvent] = []
    model = StreamingModel([("go", list(CALLS), 2.0, None)])
    result = await th.run_turn(
        model, slow_runtime(), th.Session(), max_steps=0, on_event=seen.append
    )
    assert result.stop == "step_limit"
    assert [type(e).__name__ for e in seen] == ["ModelRequested", "ModelReplied"]
    assert codes(model.results_seen[-1]) == [
        (call[0], "ABORTED_BEFORE_DISPATCH") for _, call in CALLS
    ]


async def test_a_model_returning_calls_it_never_handed_over_is_refused_with_every_call_answered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    class Sloppy(StreamingModel):
        async def _stream(self, tools: object, on_call: object) -> th.ModelStep:
            reply = await super()._stream(tools, lambda call: None)  # hands nothing over
            return reply

    model = Sloppy([("go", list(CALLS[:2]), 1.0, None)])
    session = th.Session()
    with pytest.raises(TypeError, match="other than those it handed to on_call"):
        await th.run_turn(model, slow_runtime(), session)
    assert codes(model.results_seen[-1]) == [
        ("c1", "ABORTED_BEFORE_DISPATCH"),
        ("c2", "ABORTED_BEFORE_DISPATCH"),
    ]
    assert_log_answers_every_call(session)


async def test_one_cause_seen_by_the_stream_and_the_pool_is_raised_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Disk full under the log both write to: the same OSError twice is one failure, raised
    # bare (so `except OSError` works), not an ExceptionGroup of two.
    import errno

    runtime = slow_runtime()
    scheduler = runtime.scheduler

    class Full:
        def __getattr__(self, name: str) -> object:
            return getattr(scheduler, name)

        async def dispatch(self, exec: th.ToolExecution) -> object:
            await scheduler.dispatch(exec)
            raise OSError(errno.EFBIG, "File too large")

    runtime.scheduler = Full()  # type: ignore[assignment]
    calls = [(0.5, ("c1", "wait", '{"seconds": 10}'))]
    model = StreamingModel([("", calls, 2.0, OSError(errno.EFBIG, "File too large"))])
    session = th.Session()
    with pytest.raises(OSError, match="File too large") as caught:
        await th.run_turn(model, runtime, session)
    assert not isinstance(caught.value, BaseExceptionGroup)
    assert caught.value.__notes__ == [
        "the model's stream failed with it too: OSError(27, 'File too large')"
    ]
    assert codes(model.results_seen[-1]) == [("c1", "ABORTED")]
    assert_log_answers_every_call(session)
