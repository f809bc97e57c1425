"""The smallest steps on which PoolMonitor reports a violation I believe is false.

Each test asserts the *correct* verdict (no violation); each failed while the false alarm was
there (it was found by a tester writing their own pools from the docs alone), and passes since the day
the checker stops raising it. Every step is also run through the real pool, which gets the
same phases at the same virtual times and no violation.

Run: ``python -m pytest tests/testing/own_pools/test_former_false_alarms.py``
"""

import functools

import pytest
import trio

import trio_harness as th
from trio_harness import testing

from . import pool_child_prepare, pool_start
from .common import AGENT, build_app, default_make_runtime, truth

B = th.ToolCallBlock


async def _checked(pool, blocks, cap, *, pre_abort=False):
    runtime, _ = build_app(default_make_runtime, None)
    monitor = testing.PoolMonitor(runtime, exclusive=truth)
    session = th.Session()
    abort = trio.Event()
    if pre_abort:
        abort.set()
    monitor.reset()
    outcome = await pool(
        runtime,
        session,
        blocks,
        max_parallel_tool_calls=cap,
        agent=AGENT,
        abort=abort,
        tracer=monitor,
    )
    assert testing.check_session(session) == []
    return monitor.check(session, blocks, cap=cap, outcome=outcome)


@pytest.mark.parametrize("pool", [th.execute_tool_calls, pool_start.execute_tool_calls])
async def test_an_empty_step_aborted_before_it_began(autojump_clock, pool):
    assert await _checked(pool, [], 1, pre_abort=True) == []


SLOW_ASK = '{"h": {"delay": 0.5, "answer": "allowed-once"}}'


async def test_the_slow_ask_step_is_clean_on_the_inline_pools(autojump_clock):
    blocks = [B("a", "par", SLOW_ASK), B("b", "par", "{}")]
    assert await _checked(th.execute_tool_calls, blocks, 2) == []
    assert await _checked(pool_start.execute_tool_calls, blocks, 2) == []


async def test_a_slow_prepare_in_a_child_task(autojump_clock):
    blocks = [B("a", "par", SLOW_ASK), B("b", "par", "{}")]
    assert await _checked(pool_child_prepare.execute_tool_calls, blocks, 2) == []


async def test_an_exclusive_call_classified_again_only_after_commits(autojump_clock):
    # b settles at 0.5 but cannot commit (a runs until 1); c is exclusive either way
    blocks = [B("a", "par", '{"d": 1}'), B("b", "par", '{"d": 0.5}'), B("c", "ex", "{}")]
    assert await _checked(th.execute_tool_calls, blocks, 2) == []
    # pool_start classifying the next call again only after a start or a commit.
    only_after_commits = functools.partial(
        pool_start.execute_tool_calls, reclassify_after_settle=False
    )
    assert await _checked(only_after_commits, blocks, 2) == []
