"""Three independently written correct pools under ``PoolMonitor``, over random steps (issue 28).

The pools and the property test were written by a tester from the public docs alone (never the
monitor's source): the project's own pool through ``monitor.execute_tool_calls``, a pool that
starts each body with ``await nursery.start`` (``pool_start``), and one that prepares each call in
a child task (``pool_child_prepare``). Random steps of up to six calls over parallel, exclusive
and argument-dependent tools, pre-execute hooks answering Allow/Deny/Ask (an approval service
taking virtual time), post-execute hooks adding contexts, windows of one to four, an abort at a
random instant, a planted scheduler failure, repeated call ids. No violation is a false alarm.
The fast lane runs a few hundred steps per pool; the slow lane thousands.
"""

from __future__ import annotations

import pytest

import trio_harness as th

from . import pool_child_prepare, pool_start
from .property_run import run_property

POOLS = {
    "project": None,
    "nursery-start": pool_start.execute_tool_calls,
    "child-prepare": pool_child_prepare.execute_tool_calls,
}


@pytest.mark.parametrize("name", list(POOLS))
def test_a_correct_pool_raises_no_alarm(name: str) -> None:
    assert run_property(150, seed=0, pool=POOLS[name]) == []


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 100])
@pytest.mark.parametrize("name", list(POOLS))
def test_a_correct_pool_raises_no_alarm_in_thousands_of_steps(name: str, seed: int) -> None:
    assert run_property(2000, seed=seed, pool=POOLS[name]) == []


def test_the_property_catches_a_classifier_that_says_everything_is_parallel() -> None:
    class AllParallel(th.ToolRuntime):
        def execution_mode(self, input: th.ToolExecutionInput) -> th.ExecutionMode:
            return th.PARALLEL

    found = run_property(300, seed=1, make_runtime=lambda approval: AllParallel(approval=approval))
    assert any("[exclusive]" in line or "[barrier]" in line for line in found), found
