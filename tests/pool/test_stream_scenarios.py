"""Streamed steps against listed steps, over the kit's random scheduling scenarios.

Each scenario is run twice through the oracle's own runner (``lowlevel.run_scenario``: the real
runtime and pool under ``MockClock``): once with the calls as a list, once with the same calls
fed through a Trio memory channel at random virtual times. ``execute_tool_calls`` is swapped, in
the runner's module only, for a wrapper that does the feeding.

* Every call arriving before the list step first needed it (random times in ``[0, need)``): the
  whole answer is identical (every event, the virtual time of every event and phase, contexts,
  outcome). This is the "as for a list" contract: arriving early changes nothing. (Durations are
  first moved apart by tiny amounts, so no two timers tie: see ``_untied``.)
* Calls arriving at any time: the step keeps every guarantee (``PoolMonitor``), nothing about a
  call happens before it arrived, and where results cannot depend on time (no abort, timeouts,
  failures or registry changes) each call's ``tool/call`` and ``tool/result`` are the list run's.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from unittest import mock

import trio
import trio.lowlevel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trio_harness._conformance.scenario as runner
from trio_harness import ToolCallBlock, execute_tool_calls
from trio_harness.lowlevel import ScenarioAnswer, run_scenario
from trio_harness.testing import PoolMonitor, check_session, scheduling_scenarios


class _NeedProbe:
    """A runtime view and a tracer that note when the step first touched each call."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.start = trio.current_time()
        self.need: dict[int, float] = {}
        self.ids: dict[str, int] = {}

    @property
    def scheduler(self) -> Any:
        return self.runtime.scheduler

    def execution_mode(self, input: Any) -> Any:
        self._touch(self.ids[input.call_id])
        return self.runtime.execution_mode(input)

    def begin(self, calls: Sequence[Any], cap: int) -> None:
        self.ids = {call.call_id: index for index, call in enumerate(calls)}

    def phase(self, name: str, index: int, detail: object) -> None:
        if index >= 0:
            self._touch(index)

    def _touch(self, index: int) -> None:
        self.need.setdefault(index, trio.current_time() - self.start)


_DURATIONS = frozenset({"ms", "approvalMs", "beforeMs", "afterMs", "timeoutMs", "abortAtMs"})


def _untied(scenario: dict[str, Any]) -> dict[str, Any]:
    """The scenario with every positive duration moved by its own tiny random amount (under
    0.05 ms, seeded by the scenario), so no two timers ever expire at one instant.

    Two timers of one instant fire in an order Trio derives from object addresses, which any other
    code path changes: the kit marks such answers as one allowed outcome among others, and does
    not see every tie (a body timer the abort or a timeout cancels at its own instant). Both runs
    of a test get the same moved scenario.
    """
    rng = random.Random(json.dumps(scenario, sort_keys=True))

    def move(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                key: (
                    item + rng.uniform(0.0001, 0.05)
                    if key in _DURATIONS and type(item) in (int, float) and item > 0
                    else move(item)
                )
                for key, item in value.items()
            }
        if isinstance(value, list):
            return [move(item) for item in value]
        return value

    moved: dict[str, Any] = move(scenario)
    return moved


def _list_run(scenario: dict[str, Any]) -> tuple[ScenarioAnswer, list[float]]:
    """The list run's answer, and when it first needed each call (seconds from the start)."""
    probes: list[_NeedProbe] = []

    async def listed(runtime: Any, session: Any, blocks: Any, **options: Any) -> Any:
        probe = _NeedProbe(runtime)
        probes.append(probe)
        return await execute_tool_calls(probe, session, blocks, tracer=probe, **options)

    with mock.patch.object(runner, "execute_tool_calls", listed):
        answer = run_scenario(scenario)
    (probe,) = probes
    count = len(scenario["calls"])
    # A call never touched (a step that raised first) is needed no earlier than the end.
    end = max(probe.need.values(), default=0.0)
    return answer, [probe.need.get(index, end) for index in range(count)]


@contextmanager
def _streamed(arrivals: Sequence[float], seen: dict[str, Any]) -> Iterator[None]:
    """Within the block, the runner's steps get their calls through a channel: call ``i`` is
    sent ``arrivals[i]`` seconds after the step starts (at once, before it starts, for 0)."""

    async def streamed(
        runtime: Any, session: Any, blocks: list[ToolCallBlock], **options: Any
    ) -> Any:
        send, receive = trio.open_memory_channel[ToolCallBlock](math.inf)
        start = trio.current_time()
        seen["arrived"] = arrived = {}
        pending = list(zip(blocks, arrivals, strict=True))
        while pending and pending[0][1] == 0:
            block, _ = pending.pop(0)
            arrived[block.id] = 0.0
            send.send_nowait(block)
        if not pending:
            send.close()

        async def feed() -> None:
            for block, at in pending:
                await trio.sleep_until(start + at)
                arrived[block.id] = trio.current_time() - start
                send.send_nowait(block)
            send.close()

        if pending:
            # A system task: no nursery, so the step's exceptions reach the runner bare.
            trio.lowlevel.spawn_system_task(feed)
        monitor = seen.get("monitor")
        if monitor is not None:
            monitor = PoolMonitor(runtime)
            seen["monitor"] = monitor
            seen["blocks"] = blocks
            seen["cap"] = options.get("max_parallel_tool_calls")
            seen["session"] = session
            options["tracer"] = monitor  # the monitor watches every phase of the step
        try:
            return await execute_tool_calls(runtime, session, receive, **options)
        except BaseException:
            seen["raised"] = True
            raise

    with mock.patch.object(runner, "execute_tool_calls", streamed):
        yield


def _fractions(count: int) -> st.SearchStrategy[list[float]]:
    return st.lists(
        st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999]), min_size=count, max_size=count
    )


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scheduling_scenarios(max_calls=6), data=st.data())
def test_calls_that_arrive_before_they_are_needed_change_nothing(
    scenario: dict[str, Any], data: st.DataObject
) -> None:
    scenario = _untied(scenario)
    listed, need = _list_run(scenario)
    fractions = data.draw(_fractions(len(need)), label="fractions")
    arrivals: list[float] = []
    for at, fraction in zip(need, fractions, strict=True):
        # Strictly before the list step needed the call, and in model order.
        arrival = at * fraction
        if arrivals:
            arrival = max(arrival, arrivals[-1])
        arrivals.append(arrival)
    seen: dict[str, Any] = {}
    with _streamed(arrivals, seen):
        streamed = run_scenario(scenario)
    assert streamed.answer == listed.answer
    assert streamed.ties == listed.ties  # the kit counts timers within one ms as tied


def _delays(count: int) -> st.SearchStrategy[list[float]]:
    # Seconds between consecutive arrivals; 0 is common (calls that complete together).
    return st.lists(
        st.sampled_from([0.0, 0.0, 0.001, 0.0025, 0.007, 0.015, 0.04]),
        min_size=count,
        max_size=count,
    )


def _cumulative(delays: list[float]) -> list[float]:
    total, out = 0.0, []
    for delay in delays:
        total += delay
        out.append(total)
    return out


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scheduling_scenarios(max_calls=6), data=st.data())
def test_calls_that_arrive_late_keep_every_guarantee(
    scenario: dict[str, Any], data: st.DataObject
) -> None:
    arrivals = _cumulative(data.draw(_delays(len(scenario["calls"])), label="delays"))
    seen: dict[str, Any] = {"monitor": True}
    with _streamed(arrivals, seen):
        answer = run_scenario(scenario).answer
    monitor: PoolMonitor = seen["monitor"]
    raised = "raised" in answer["outcome"] or seen.get("raised", False)
    session = seen["session"]
    blocks: list[ToolCallBlock] = seen["blocks"]
    if "stuck" in answer["outcome"]:
        return  # cut short by the runner's limit: the seal's answers are checked elsewhere
    known = [block for block in blocks if block.id in seen["arrived"]]
    cap = seen["cap"] if seen["cap"] is not None else 10
    assert monitor.check(session, known, cap=cap, raised=raised) == []
    arrived_ms = {call_id: round(at * 1000) for call_id, at in seen["arrived"].items()}
    for call in answer["calls"]:
        for key in ("called", "prepared", "bodyStarted", "settled", "committed"):
            at = call[key]
            assert at is None or at >= arrived_ms[call["id"]], (call, key)
    assert check_session(session, allow_unpaired=raised) == []


def _per_call(answer: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    calls = [event for event in answer["events"] if event["type"] == "tool/call"]
    results = [event for event in answer["events"] if event["type"] == "tool/result"]

    def strip(event: dict[str, Any]) -> Any:
        return {key: value for key, value in event.items() if key not in ("seq", "sourceEventSeqs")}

    return [strip(event) for event in calls], [strip(event) for event in results]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scenario=scheduling_scenarios(
        max_calls=6, abort=False, failures=False, registry_changes=False, timeouts=False
    ),
    data=st.data(),
)
def test_calls_that_arrive_late_get_the_results_of_the_list_step(
    scenario: dict[str, Any], data: st.DataObject
) -> None:
    listed = run_scenario(scenario).answer
    arrivals = _cumulative(data.draw(_delays(len(scenario["calls"])), label="delays"))
    seen: dict[str, Any] = {}
    with _streamed(arrivals, seen):
        streamed = run_scenario(scenario).answer
    assert _per_call(streamed) == _per_call(listed)
    assert streamed["contexts"] == listed["contexts"]
    for key in ("concluded", "aborted", "raised", "rejectedCap"):
        assert streamed["outcome"].get(key) == listed["outcome"].get(key)
