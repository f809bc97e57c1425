"""The pool's tracer: exact phase instants on virtual time, aborts and cancellation visible."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

import trio_harness as th
from tests.support.demo_steps import call, demo_calls, runtime
from tests.timeline.steps import DEMO_LANES, demo_trace, first_form
from trio_harness.lowlevel import js_json


def test_the_demo_step_phases() -> None:
    trace = demo_trace()
    assert trace.calls == [(f"c{n}", "write" if n == 4 else "read") for n in range(1, 7)]
    assert trace.cap == 2
    assert (trace.start, trace.end) == (0.0, 6.0)
    lanes = trace.lanes()
    for lane in lanes:
        body_start, body_end, committed = DEMO_LANES[lane.call_id]
        assert (lane.started, lane.prepared, lane.body_started) == (body_start,) * 3
        assert (lane.settled, lane.committed) == (body_end, committed)
        assert lane.outcome == "ok"
        assert not lane.aborted
        assert lane.mode == ("exclusive" if lane.call_id == "c4" else "parallel")
    assert trace.barriers() == [(3.0, 4.0, 3)]
    assert trace.window() == [(0.0, 2.5, 2), (2.5, 4.0, 1), (4.0, 5.0, 2), (5.0, 6.0, 1)]
    names = [name for _, name, _, _ in trace.phases]
    assert names[0] == "begin"
    assert names[-1] == "done"
    assert names.count("group-open") == names.count("group-close") == 3
    assert [d for _, n, _, d in trace.phases if n == "group-open"] == [True, False, True]
    segments = lanes[1].segments(trace.start, trace.end)
    assert segments == [("body", 0.0, 1.0), ("hold", 1.0, 3.0)]
    assert lanes[4].segments(trace.start, trace.end) == [("queued", 0.0, 4.0), ("body", 4.0, 6.0)]


def test_the_trace_survives_json() -> None:
    trace = demo_trace()
    text = js_json(trace.to_json())
    again = th.timeline.StepTrace.from_json(json.loads(text))
    assert again.phases == trace.phases
    assert again.calls == trace.calls
    assert again.cap == 2
    assert again.lanes() == trace.lanes()


def test_the_json_form_is_packed_into_columns() -> None:
    trace = demo_trace()
    raw = trace.to_json()
    assert raw["format"] == "trio_harness/step-trace/2"
    assert raw["start"] == 0.0
    names = raw["phases"].split(" ")
    assert names == [name for _, name, _, _ in trace.phases]
    assert raw["ns"].split(" ")[:3] == ["0", "0", "0"]
    assert [int(ns) / 1e9 for ns in raw["ns"].split(" ")] == [at for at, _, _, _ in trace.phases]
    assert raw["index"].split(" ") == [str(index) for _, _, index, _ in trace.phases]
    assert raw["details"] == [detail for _, _, _, detail in trace.phases]
    # The first form, as earlier logs hold it, reads back to the same trace.
    old = th.timeline.StepTrace.from_json(first_form(trace))
    assert (old.phases, old.calls, old.cap) == (trace.phases, trace.calls, trace.cap)


def test_times_on_a_real_clock_survive_json_to_the_nanosecond() -> None:
    async def step() -> th.timeline.StepTrace:
        trace = th.timeline.StepTrace(turn=1, step=2)
        await th.execute_tool_calls(runtime(), th.Session(), demo_calls()[:2], tracer=trace)
        return trace

    trace = trio.run(step)
    start = trace.start
    assert start > 0
    assert not start.is_integer()
    again = th.timeline.StepTrace.from_json(json.loads(js_json(trace.to_json())))
    assert again.start == start
    assert [(n, i, d) for _, n, i, d in again.phases] == [(n, i, d) for _, n, i, d in trace.phases]
    for (at, *_), (was, *_) in zip(again.phases, trace.phases, strict=True):
        assert abs(at - was) <= 1e-9 + 1e-12 * abs(was)
    assert (again.turn, again.step) == (1, 2)


def packed(**changes: object) -> dict[str, object]:
    raw = demo_trace().to_json()
    raw.update(changes)
    return raw


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (packed(format="trio_harness/step-trace/3"), "not a step trace (field 'format'"),
        (packed(start="0"), "field 'start' must be a number"),
        (packed(start=True), "field 'start' must be a number"),
        (packed(start=1e13), "field 'start' must be a finite number within"),
        (packed(ns=[0]), "field 'ns' must be a string of integers"),
        (packed(ns="0  1"), "field 'ns' must be a string of integers"),
        (packed(ns="+1"), "field 'ns' must be a string of integers"),
        (packed(ns="\u0661"), "field 'ns' must be a string of integers"),
        (packed(ns="1" * 26), "field 'ns' must be a string of integers"),
        (packed(index="0 x"), "field 'index' must be a string of integers"),
        (packed(phases=["begin"]), "field 'phases' must be a string of phase names"),
        (packed(details={}), "field 'details' must be an array"),
        (packed(ns="0"), "must be as long as each other: 1, 46, 46 and 46 entries"),
        (packed(details=[]), "must be as long as each other: 46, 46, 46 and 0 entries"),
        (packed(ns="0 -1" + " 0" * 44), "field 'phases[1]' must be a time, a phase, an index"),
        (packed(phases="begin " * 45 + "begin"), "phases[1]' must be a time, a phase, an index"),
        (packed(index="0 " * 45 + "0"), "field 'phases[0]' must be a time, a phase, an index"),
        (packed(start=5e-324), "field 'phases[0]' must be a time, a phase, an index and a detail"),
    ],
)
def test_a_malformed_packed_trace_names_the_field(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        th.timeline.StepTrace.from_json(raw)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda raw: raw.pop("format"), "not a step trace (field 'format'"),
        (lambda raw: raw.update(cap="2"), "step trace field 'cap' must be an integer"),
        (lambda raw: raw.update(calls={}), "step trace field 'calls' must be an array"),
        (lambda raw: raw["calls"].append({"callId": 1}), "step trace field 'calls[6]' needs"),
        (lambda raw: raw["phases"].append([1, "nap", 0, None]), "field 'phases[46]' must be"),
        (lambda raw: raw["phases"].append([1, "settled", 6, None]), "field 'phases[46]' must be"),
    ],
)
def test_a_malformed_trace_names_the_field(mutate: object, message: str) -> None:
    raw = first_form(demo_trace())
    assert len(raw["phases"]) == 46
    mutate(raw)  # type: ignore[operator]
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        th.timeline.StepTrace.from_json(raw)


async def test_an_aborted_step_shows_its_synthetic_results(
    autojump_clock: trio.testing.MockClock,
) -> None:
    trace = th.timeline.StepTrace(turn=2, step=5)
    abort = trio.Event()
    async with trio.open_nursery() as nursery:

        async def step() -> None:
            await th.execute_tool_calls(
                runtime(),
                th.Session(),
                demo_calls(),
                abort=abort,
                max_parallel_tool_calls=2,
                tracer=trace,
            )

        nursery.start_soon(step)
        await trio.sleep(0.5)
        abort.set()
    lanes = trace.lanes()
    assert [(lane.call_id, lane.outcome, lane.aborted, lane.committed) for lane in lanes] == [
        ("c1", "ABORTED", False, 0.5),
        ("c2", "ABORTED", False, 0.5),
        ("c3", "ABORTED_BEFORE_DISPATCH", True, 0.5),
        ("c4", "ABORTED_BEFORE_DISPATCH", True, 0.5),
        ("c5", "ABORTED_BEFORE_DISPATCH", True, 0.5),
        ("c6", "ABORTED_BEFORE_DISPATCH", True, 0.5),
    ]
    assert trace.phases[-1] == (0.5, "done", -1, True)


async def test_outside_cancellation_shows_the_sealed_log(
    autojump_clock: trio.testing.MockClock,
) -> None:
    trace = th.timeline.StepTrace()
    session = th.Session()
    with trio.move_on_after(0.5):
        await th.execute_tool_calls(
            runtime(), session, demo_calls(), max_parallel_tool_calls=2, tracer=trace
        )
    lanes = trace.lanes()
    assert [(lane.outcome, lane.aborted) for lane in lanes] == [("ABORTED", True)] * 2 + [
        ("ABORTED_BEFORE_DISPATCH", True)
    ] * 4
    assert "done" not in [name for _, name, _, _ in trace.phases]
    assert th.log.check_replay(session).valid


async def test_failures_and_prepare_results_are_traced(
    autojump_clock: trio.testing.MockClock,
) -> None:
    trace = th.timeline.StepTrace()
    rt = runtime()
    calls = [
        call("c1", "read", "a", 1),
        th.ToolCallBlock("c2", "nope", "{}"),
        call("c3", "read", "b", 1),
    ]
    await th.execute_tool_calls(rt, th.Session(), calls, tracer=trace)
    lanes = trace.lanes()
    assert [lane.outcome for lane in lanes] == ["ok", "UNKNOWN_TOOL", "ok"]
    # An unknown tool is exclusive (fail-closed): it ran alone between the two reads.
    assert trace.barriers() == [(1.0, 1.0, 1)]
    assert lanes[2].body_started == 1.0

    class Broken(Exception):
        pass

    original = rt.scheduler

    class Failing:
        async def dispatch(self, exec: object) -> object:
            raise Broken

        def __getattr__(self, name: str) -> object:
            return getattr(original, name)

    rt.scheduler = Failing()  # type: ignore[assignment]
    trace = th.timeline.StepTrace()
    with pytest.raises(Broken):
        await th.execute_tool_calls(rt, th.Session(), calls[:1], tracer=trace)
    assert [d for _, n, _, d in trace.phases if n == "settled"] == ["Broken"]


async def test_a_tracer_only_observes(autojump_clock: trio.testing.MockClock) -> None:
    plain, traced = th.Session(), th.Session()
    start = trio.current_time()
    first = await th.execute_tool_calls(runtime(), plain, demo_calls(), max_parallel_tool_calls=2)
    middle = trio.current_time()
    second = await th.execute_tool_calls(
        runtime(), traced, demo_calls(), max_parallel_tool_calls=2, tracer=th.timeline.StepTrace()
    )
    assert first == second
    assert plain.to_jsonl() == traced.to_jsonl()
    assert middle - start == trio.current_time() - middle == 6.0
