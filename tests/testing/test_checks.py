"""``check_session`` and ``PoolMonitor``: they accept what the reference does and catch breaks."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings

import trio_harness as th
from tests.support.vector_cases import expected_answer
from trio_harness import testing


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
    output = th.ToolOutput(schema={"type": "string"}, render=lambda value: value)
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
    assert problems
    assert all(p.startswith("exclusive body of w1 overlaps the body of r") for p in problems)
    with pytest.raises(AssertionError, match="w1"):
        monitor.assert_ok()
    # Asking the lying classifier itself finds nothing: the pool obeyed it.
    trusting = testing.PoolMonitor(make_runtime(writer_claims_parallel=True))
    await trusting.execute_tool_calls(th.Session(), STEP)
    assert trusting.violations() == []


async def test_the_monitor_checks_abort_pairs_and_the_cap(autojump_clock: Any) -> None:
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
    assert set(monitor.records) == {"r1"}  # the others never started: synthetic pairs
    # Seen against a smaller cap, the same step breaks it; a forged pair is caught.
    assert "1 bodies in flight" not in " ".join(monitor.check(session, STEP, cap=1))
    monitor.records.pop("r1")
    assert any("never started" in p for p in monitor.check(session, STEP))


async def test_the_monitor_catches_too_many_bodies(autojump_clock: Any) -> None:
    monitor = testing.PoolMonitor(make_runtime())
    session = th.Session()
    reads = calls(*[(f"r{i}", "read", {"path": "a", "ms": 2}) for i in range(3)])
    await monitor.execute_tool_calls(session, reads, max_parallel_tool_calls=3)
    assert monitor.violations() == []
    assert monitor.check(session, reads, cap=2) == ["3 bodies in flight at once, cap 2"]
