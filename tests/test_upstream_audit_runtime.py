"""Upstream catalogue §4–§6: cases whose existing counterpart was missing or only partial.

Found by the coverage audit (``docs/_fragments/upstream-coverage-runtime-pool.md``); each test
asserts the exact strings of ``spec/upstream-tests.md``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import pytest
import trio

from tests.test_runtime_helpers import call, content_tool, echo_tool, first_text, text_blocks
from trio_harness import (
    UNSET,
    Block,
    PostToolDecision,
    PreToolDecision,
    ToolExecution,
    ToolExecutionResult,
    ToolRuntime,
)

PreNext = Callable[[], Awaitable[PreToolDecision]]
PostNext = Callable[[], Awaitable[PostToolDecision]]
WrapNext = Callable[[], Awaitable[ToolExecutionResult]]

BEFORE_DISPATCH = {
    "content": text_blocks("Error: tool call aborted before dispatch"),
    "isError": True,
    "error": {
        "message": "tool call aborted before dispatch",
        "info": {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"},
    },
}


async def test_result_without_a_projector_is_exactly_content_error_flag_and_value() -> None:
    # upstream #57: the whole result, not only the absence of `meta`
    runtime = ToolRuntime()
    runtime.register(echo_tool())
    result = await runtime.execute(call("echo", {"text": "ok"}))
    assert result.to_json() == {"content": text_blocks("ok"), "isError": False, "value": "ok"}
    assert result.meta is UNSET


async def test_post_execute_block_gives_the_corrective_feedback_text() -> None:
    # upstream #92: exact corrective text of a block
    runtime = ToolRuntime()
    runtime.register(echo_tool())

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        return Block(text_blocks("output rejected: try again"))

    runtime.add_post_execute(post)
    result = await runtime.execute(call("echo", {"text": "hi"}))
    assert result.is_error is True
    assert first_text(result) == "output rejected: try again"
    assert result.value is UNSET


async def test_registry_round_trip_executes_a_defined_tool_with_an_optional_argument() -> None:
    # upstream #142: execute {req:'hello'} → text `hello:none`, schema projected as declared
    async def body(args: Any, ctx: Any) -> Any:
        return f"{args['req']}:{args.get('opt', 'none')}"

    runtime = ToolRuntime()
    runtime.register(
        echo_tool(
            "round-trip",
            parameters={
                "req": {"type": "string", "required": True},
                "opt": {"type": "number", "description": "Optional number"},
            },
            execute=body,
        )
    )
    assert runtime.schemas()[0]["parameters"] == {
        "type": "object",
        "properties": {
            "req": {"type": "string"},
            "opt": {"type": "number", "description": "Optional number"},
        },
        "required": ["req"],
    }
    result = await runtime.execute(call("round-trip", {"req": "hello"}))
    assert first_text(result) == "hello:none"
    assert result.is_error is False


class _CountingArguments:
    """A duck-typed input whose ``arguments`` read is counted (the analogue of a JS getter)."""

    def __init__(self, arguments: Any, abort: trio.Event) -> None:
        self._arguments = arguments
        self.reads = 0
        self.call_id = "c1"
        self.name = "t"
        self.abort = abort
        self.parent = None
        self.agent = None
        self.root_call_id = None

    @property
    def arguments(self) -> Any:
        self.reads += 1
        return self._arguments


async def test_pre_aborted_call_reads_arguments_once_and_publishes_one_frozen_result() -> None:
    # upstream #115: arguments read exactly once; no phase entered; one notification of the very
    # result returned; exec carries the caller's abort, a unique token and a detached deep copy.
    phases: list[str] = []

    async def body(args: Any, ctx: Any) -> Any:
        phases.append("body")
        return text_blocks("never")

    async def pre(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        phases.append("pre")
        return await next()

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        phases.append("around")
        return await next()

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        phases.append("post")
        return await next()

    runtime = ToolRuntime()
    runtime.register(content_tool("t", body))
    runtime.add_pre_execute(pre)
    runtime.add_execute_wrapper(wrapper)
    runtime.add_post_execute(post)
    observed: list[tuple[ToolExecution, ToolExecutionResult]] = []
    runtime.add_result_observer(lambda exec, result: observed.append((exec, result)))
    abort = trio.Event()
    abort.set()
    arguments = {"nested": {"list": [1, {"deep": True}]}}
    source = _CountingArguments(arguments, abort)
    result = await runtime.execute(source)  # type: ignore[arg-type]
    assert result.to_json() == BEFORE_DISPATCH
    assert source.reads == 1
    assert phases == []
    assert len(observed) == 1
    exec, seen = observed[0]
    assert seen is result
    assert exec.abort is abort
    assert exec.token is not None
    assert exec.arguments == arguments
    assert exec.arguments is not arguments
    assert exec.arguments["nested"]["list"] is not arguments["nested"]["list"]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        result.is_error = False  # type: ignore[misc]
    # The caller's object is untouched.
    assert arguments == {"nested": {"list": [1, {"deep": True}]}}


async def test_each_call_gets_a_distinct_token() -> None:
    # upstream #115/#190: the token identifies one execution (a JS symbol; a unique object here)
    tokens: list[object] = []
    runtime = ToolRuntime()
    runtime.register(echo_tool())
    runtime.add_result_observer(lambda exec, result: tokens.append(exec.token))
    await runtime.execute(call("echo"))
    await runtime.execute(call("echo"))
    assert len(tokens) == 2
    assert tokens[0] is not tokens[1]
