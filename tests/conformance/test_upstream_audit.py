"""Upstream catalogue §4–§6: cases whose existing counterpart was missing or only partial.

Found by the coverage audit (``docs/_fragments/upstream-coverage-runtime-pool.md``); each test
asserts the exact strings of ``spec/upstream-tests.md``.
"""

from __future__ import annotations

from tests.support.runtime_helpers import PostNext, call, first_text, text_blocks
from tests.support.runtime_tools import echo_tool, runtime_with
from trio_harness import (
    UNSET,
    Block,
    PostToolDecision,
    ToolExecution,
    ToolExecutionResult,
)


async def test_result_without_a_projector_is_exactly_content_error_flag_and_value() -> None:
    # upstream #57: the whole result, not only the absence of `meta`
    runtime = runtime_with(echo_tool())
    result = await runtime.execute(call("echo", {"text": "ok"}))
    assert result.to_json() == {"content": text_blocks("ok"), "isError": False, "value": "ok"}
    assert result.meta is UNSET


async def test_post_execute_block_gives_the_corrective_feedback_text() -> None:
    # upstream #92: exact corrective text of a block
    runtime = runtime_with(echo_tool())

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        return Block(text_blocks("output rejected: try again"))

    runtime.add_post_execute(post)
    result = await runtime.execute(call("echo", {"text": "hi"}))
    assert result.is_error is True
    assert first_text(result) == "output rejected: try again"
    assert result.value is UNSET


async def test_each_call_gets_a_distinct_token() -> None:
    # upstream #115/#190: the token identifies one execution (a JS symbol; a unique object here)
    tokens: list[object] = []
    runtime = runtime_with(echo_tool())
    runtime.add_result_observer(lambda exec, result: tokens.append(exec.token))
    await runtime.execute(call("echo"))
    await runtime.execute(call("echo"))
    assert len(tokens) == 2
    assert tokens[0] is not tokens[1]
