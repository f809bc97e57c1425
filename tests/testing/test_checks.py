"""``check_session`` and ``PoolMonitor``: they accept what the reference does and catch breaks."""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trio_harness as th
from tests.support.vector_cases import expected_answer
from trio_harness import testing
from trio_harness._conformance.scenario import AGENT, _ScriptedRuntime, parse_scenario


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(testing.scheduling_scenarios(max_calls=5))
def test_check_session_accepts_every_log_the_reference_writes(scenario: dict[str, Any]) -> None:
    answer = expected_answer(scenario)
    raised = "raised" in answer["outcome"]
    assert testing.check_session(answer["events"], allow_unpaired=raised) == []


def reference_log() -> list[dict[str, Any]]:
    """c0 (20 ms) and c1 (10 ms) in parallel, then c2; aborted at 30 ms before c3 starts."""
    scenario = {
        "cap": 2,
        "tools": [{"name": "read"}, {"name": "write", "parallel": "never"}],
        "abortAtMs": 25,
        "calls": [
            {"id": "c0", "name": "read", "body": {"ms": 20}},
            {"id": "c1", "name": "read", "body": {"ms": 10}},
            {"id": "c2", "name": "write", "body": {"hangs": True}},
            {"id": "c3", "name": "read"},
        ],
    }
    events = expected_answer(scenario)["events"]
    assert testing.check_session(events) == []
    return events


def kinds(events: list[dict[str, Any]], **options: Any) -> set[str]:
    return {violation.rule for violation in testing.check_session(events, **options)}


def test_reference_log_shape() -> None:
    log = reference_log()
    summary = [(e["type"], json.dumps(e["data"]).count('"c3"') > 0) for e in log]
    assert len(log) == 8
    assert summary[-2:] == [("tool/call", True), ("tool/result", True)]


def test_check_session_catches_each_kind_of_broken_log() -> None:
    log = reference_log()
    # seq: a gap
    broken = copy.deepcopy(log)
    broken[3]["seq"] = 7
    assert "seq" in kinds(broken)
    # cites-call: a result citing nothing
    broken = copy.deepcopy(log)
    result = next(e for e in broken if e["type"] == "tool/result")
    result["sourceEventSeqs"] = []
    assert "cites-call" in kinds(broken)
    # one-result: a result appended twice
    broken = copy.deepcopy(log)
    result = next(e for e in broken if e["type"] == "tool/result")
    broken.append({**copy.deepcopy(result), "seq": len(broken)})
    assert "one-result" in kinds(broken)
    # model-order: the first two results swapped
    broken = copy.deepcopy(log)
    positions = [i for i, e in enumerate(broken) if e["type"] == "tool/result"][:2]
    a, b = positions
    broken[a], broken[b] = broken[b], broken[a]
    broken[a]["seq"], broken[b]["seq"] = a, b
    assert "model-order" in kinds(broken)
    # abort-shape: the synthetic abort result is not an AbortError
    broken = copy.deepcopy(log)
    broken[-1]["data"]["error"]["name"] = "Error"
    assert "abort-shape" in kinds(broken)
    # unpaired: the last result dropped
    assert kinds(log[:-1]) == {"unpaired"}
    assert kinds(log[:-1], allow_unpaired=True) == set()


def test_check_session_takes_a_session() -> None:
    session = th.Session()
    session.append(
        "tool/call", th.log.ToolCallData(turn=0, step=0, call_id="c0", name="x", arguments="{}")
    )
    assert [v.rule for v in testing.check_session(session)] == ["unpaired"]


# ---------------------------------------------------------------------------------------------
# PoolMonitor on a real runtime
# ---------------------------------------------------------------------------------------------


def make_runtime(*, writer_claims_parallel: bool = False) -> th.ToolRuntime:
    files: dict[str, str] = {}

    async def read(args: Any, ctx: Any) -> str:
        await trio.sleep(args.get("ms", 1) / 1000)
        return files.get(args["path"], "")

    async def write(args: Any, ctx: Any) -> str:
        await trio.sleep(args.get("ms", 1) / 1000)
        files[args["path"]] = args["text"]
        return "ok"

    runtime = th.ToolRuntime()
    output = th.ToolOutput(
        schema={"type": "string"}, render=lambda args, value: [{"type": "text", "text": value}]
    )
    parameters = {"path": {"type": "string", "required": True}, "ms": {"type": "integer"}}
    runtime.register(
        th.define_tool(
            name="read",
            description="read",
            parameters=parameters,
            output=output,
            execute=read,
            is_concurrency_safe=lambda args: True,
        )
    )
    runtime.register(
        th.define_tool(
            name="write",
            description="write",
            parameters={**parameters, "text": {"type": "string", "required": True}},
            output=output,
            execute=write,
            is_concurrency_safe=(lambda args: True) if writer_claims_parallel else None,
        )
    )
    return runtime


def calls(*specs: tuple[str, str, dict[str, Any]]) -> list[th.ToolCallBlock]:
    return [th.ToolCallBlock(i, n, json.dumps(a)) for i, n, a in specs]


STEP = calls(
    ("r1", "read", {"path": "a", "ms": 5}),
    ("w1", "write", {"path": "a", "text": "x", "ms": 3}),
    ("r2", "read", {"path": "a", "ms": 2}),
    ("r3", "read", {"path": "a", "ms": 4}),
)


async def test_the_monitor_sees_a_correct_step_keep_every_guarantee(autojump_clock: Any) -> None:
    monitor = testing.PoolMonitor(make_runtime())
    outcome = await monitor.execute_tool_calls(th.Session(), STEP, max_parallel_tool_calls=2)
    assert monitor.violations() == []
    assert not outcome.aborted
    times = {r.call_id: (r.body_started, r.body_ended) for r in monitor.records.values()}
    assert times == {
        "r1": (0.0, 0.005),
        "w1": (0.005, 0.008),
        "r2": (0.008, 0.010),
        "r3": (0.008, 0.012),
    }
    assert monitor.max_in_flight == 2


async def test_the_monitor_catches_a_classifier_that_lies(autojump_clock: Any) -> None:
    runtime = make_runtime(writer_claims_parallel=True)
    # The truth about the tools: a writer must run alone.
    monitor = testing.PoolMonitor(runtime, exclusive=lambda name, args: name == "write")
    await monitor.execute_tool_calls(th.Session(), STEP)
    problems = monitor.violations()
    assert {p.rule for p in problems} == {"exclusive", "barrier"}
    assert str(problems[0]) == (
        "[barrier] w1 must run alone but started before the result of r1 was committed"
    )
    assert problems[0].call_id == "w1"
    with pytest.raises(AssertionError, match="w1"):
        monitor.assert_ok()
    # Asking the lying classifier itself finds nothing: the pool obeyed it.
    trusting = testing.PoolMonitor(make_runtime(writer_claims_parallel=True))
    await trusting.execute_tool_calls(th.Session(), STEP)
    assert trusting.violations() == []


async def test_the_monitor_checks_abort_pairs(autojump_clock: Any) -> None:
    monitor = testing.PoolMonitor(make_runtime())
    abort = trio.Event()
    session = th.Session()
    async with trio.open_nursery() as nursery:

        async def abort_soon() -> None:
            await trio.sleep(0.004)
            abort.set()

        nursery.start_soon(abort_soon)
        outcome = await monitor.execute_tool_calls(session, STEP, abort=abort)
    assert outcome.aborted
    assert monitor.violations() == []
    assert {r.call_id for r in monitor.records.values()} == {
        "r1"
    }  # the others never started: synthetic pairs
    codes = [r.result.error.info.code for r in outcome.results if r.result.error is not None]
    assert codes == ["ABORTED", *["ABORTED_BEFORE_DISPATCH"] * 3]


async def test_the_monitor_checks_the_window_it_was_asked_for(autojump_clock: Any) -> None:
    monitor = testing.PoolMonitor(make_runtime())
    session = th.Session()
    reads = calls(*[(f"r{i}", "read", {"path": "a", "ms": 2}) for i in range(3)])
    outcome = await monitor.execute_tool_calls(session, reads, max_parallel_tool_calls=3)
    assert monitor.violations() == []
    assert [str(v) for v in monitor.check(session, reads, cap=2, outcome=outcome)] == [
        "[window] the pool ran with a window of 3, asked 2",
        "[window] 3 bodies in flight at once, cap 2",
    ]


async def test_a_none_cap_is_the_default_window(autojump_clock: Any) -> None:
    # None is no cap given: the pool runs with the default window, and that is no violation.
    reads = calls(*((f"r{n}", "read", {"path": "a", "ms": 2}) for n in range(12)))
    monitor = testing.PoolMonitor(make_runtime())
    await monitor.execute_tool_calls(th.Session(), reads, max_parallel_tool_calls=None)
    assert monitor.violations() == []
    assert monitor.max_in_flight == th.DEFAULT_MAX_PARALLEL_TOOL_CALLS == 10


# None is not here: it means the default cap, as upstream has it.
@pytest.mark.parametrize("cap", [0, -1, True, 2.5, "2"])
async def test_an_invalid_cap_must_be_refused_up_front(cap: Any, autojump_clock: Any) -> None:
    monitor = testing.PoolMonitor(make_runtime())
    session = th.Session()
    with pytest.raises(ValueError, match="positive integer"):
        await monitor.execute_tool_calls(session, STEP, max_parallel_tool_calls=cap)
    assert monitor.violations() == []
    assert session.events == []


async def test_options_refused_up_front_are_not_violations(autojump_clock: Any) -> None:
    monitor = testing.PoolMonitor(make_runtime())
    with pytest.raises(TypeError, match="turn must be an int"):
        await monitor.execute_tool_calls(th.Session(), STEP, turn="1")
    assert monitor.violations() == []


async def test_a_step_may_reuse_a_call_id(autojump_clock: Any) -> None:
    monitor = testing.PoolMonitor(make_runtime())
    abort = trio.Event()
    step = calls(*[("x", "read", {"path": "a", "ms": ms}) for ms in (3, 1, 2, 1)])
    async with trio.open_nursery() as nursery:

        async def abort_soon() -> None:
            await trio.sleep(0.0025)
            abort.set()

        nursery.start_soon(abort_soon)
        await monitor.execute_tool_calls(th.Session(), step, max_parallel_tool_calls=2, abort=abort)
    assert monitor.violations() == []


async def test_the_monitor_as_tracer_of_your_own_step(autojump_clock: Any) -> None:
    runtime = make_runtime()
    monitor = testing.PoolMonitor(runtime)
    session = th.Session()
    trace = th.timeline.StepTrace()
    outcome = await monitor.execute_tool_calls(session, STEP, tracer=trace)
    assert monitor.violations() == []
    assert trace.calls == [(block.id, block.name) for block in STEP]  # the tracer was told too
    # Run by hand: pass the monitor as tracer, then check.
    monitor.reset()
    first = len(session.events)
    outcome = await th.execute_tool_calls(runtime, session, STEP, tracer=monitor)
    assert monitor.check(session, STEP, first_seq=first, outcome=outcome) == []
    # Without the tracer the monitor cannot see the phases, and says so.
    monitor.reset()
    first = len(session.events)
    await th.execute_tool_calls(runtime, session, STEP)
    assert [v.rule for v in monitor.check(session, STEP, first_seq=first)] == ["trace"]


async def test_nested_sub_calls_are_not_the_steps_calls(autojump_clock: Any) -> None:
    runtime = make_runtime()

    async def fan_out(args: Any, ctx: Any) -> str:
        sub = [th.SubCall(f"s{i}", "read", {"path": "a", "ms": 1}) for i in range(3)]
        results = await th.execute_sub_calls(ctx, sub, max_parallel_sub_calls=2)
        return ",".join(str(r.is_error) for r in results)

    runtime.register(
        th.define_tool(
            name="fan",
            description="fan out",
            parameters={},
            output=th.ToolOutput(
                schema={"type": "string"},
                render=lambda args, value: [{"type": "text", "text": value}],
            ),
            execute=fan_out,
            is_concurrency_safe=lambda args: True,
        )
    )
    monitor = testing.PoolMonitor(runtime)
    step = calls(("f", "fan", {}), ("r", "read", {"path": "a", "ms": 1}))
    outcome = await monitor.execute_tool_calls(th.Session(), step)
    assert monitor.violations() == []
    assert outcome.results[0].result.content[0]["text"] == "False,False,False", outcome
    assert {r.call_id for r in monitor.records.values()} == {"f", "r"}


# ---------------------------------------------------------------------------------------------
# No false alarm: the real pool on the kit's scenarios (hooks, failures, aborts, registry
# changes, timeouts) keeps every guarantee the monitor checks
# ---------------------------------------------------------------------------------------------


def monitored_scenario(scenario: dict[str, Any]) -> list[testing.PoolViolation]:
    parsed = parse_scenario(scenario)
    run = _ScriptedRuntime(parsed)
    monitor = testing.PoolMonitor(run.runtime)
    blocks = [th.ToolCallBlock(call.id, call.name, call.arguments) for call in parsed.calls]

    async def main() -> None:
        run.start = trio.current_time()
        abort = trio.Event()
        with trio.move_on_after(10):
            async with trio.open_nursery() as nursery:
                if parsed.abort_at_ms is not None:

                    async def abort_later(ms: int) -> None:
                        await trio.sleep(ms / 1000)
                        abort.set()

                    nursery.start_soon(abort_later, parsed.abort_at_ms)
                with contextlib.suppress(ValueError, RuntimeError):
                    await monitor.execute_tool_calls(
                        th.Session(),
                        blocks,
                        abort=abort if parsed.abort_at_ms is not None else None,
                        max_parallel_tool_calls=parsed.cap,
                        accept_context=run.contexts.append,
                        agent=AGENT,
                    )
                nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return monitor.violations()


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    testing.scheduling_scenarios(
        max_calls=6, caps=st.sampled_from([None, 1, 2, 3, 4, 0, True, 2.5])
    )
)
def test_the_real_pool_keeps_every_guarantee_the_monitor_checks(scenario: dict[str, Any]) -> None:
    assert [str(v) for v in monitored_scenario(scenario)] == []
