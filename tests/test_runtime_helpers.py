"""Shared fixtures of the runtime tests (no tests here): the upstream ``echo`` tool, the content
fixture, raw definitions, and small fakes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from trio_harness import (
    ApprovalRequest,
    ToolDefinition,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolOutput,
    define_tool,
)


def text_blocks(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def echo_tool(name: str = "echo", **options: Any) -> ToolDefinition:
    """Upstream ``echoTool``: returns ``args.text ?? ''`` rendered as one text block."""
    presentation_meta = options.pop("presentation_meta", None)
    render = options.pop("render", lambda args, value: text_blocks(value))
    execute = options.pop("execute", None)

    async def body(args: Any, ctx: Any) -> Any:
        return args.get("text", "")

    return define_tool(
        name=name,
        description="echo arguments back",
        parameters=options.pop("parameters", {"text": {"type": "string"}}),
        output=ToolOutput(
            schema=options.pop("output_schema", {"type": "string"}),
            render=render,
            presentation_meta=presentation_meta,
        ),
        execute=execute or body,
        **options,
    )


def content_tool(
    name: str,
    execute: Callable[[Any, Any], Awaitable[Any]] | None = None,
    *,
    parameters: Any = None,
    presentation_meta: Any = None,
    **options: Any,
) -> ToolDefinition:
    """Upstream ``defineContentToolFixture``: value = content blocks, rendered as themselves."""

    async def body(args: Any, ctx: Any) -> Any:
        return text_blocks("ok")

    return define_tool(
        name=name,
        description=f"{name} fixture",
        parameters={} if parameters is None else parameters,
        output=ToolOutput(
            schema={"type": "array", "items": {"type": "json"}},
            render=lambda args, value: value,
            presentation_meta=presentation_meta,
        ),
        execute=execute or body,
        **options,
    )


def raw_tool(name: str = "t", reply: str | None = None, **options: Any) -> ToolDefinition:
    """Upstream scoped.spec ``tool(name, reply)``: raw schema, string output."""
    calls = options.pop("calls", None)

    async def body(args: Any, ctx: Any) -> Any:
        if calls is not None:
            calls.append(args)
        return reply if reply is not None else f"ran:{name}"

    return ToolDefinition(
        name=name,
        description=f"raw {name}",
        parameters=options.pop("parameters", {"type": "object", "properties": {}}),
        output=ToolOutput(schema={"type": "string"}, render=lambda args, value: text_blocks(value)),
        execute=options.pop("execute", body),
        **options,
    )


def call(
    name: str = "echo",
    arguments: Any = None,
    abort: trio.Event | None = None,
    call_id: str = "c1",
    **options: Any,
) -> ToolExecutionInput:
    return ToolExecutionInput(
        call_id, name, {} if arguments is None else arguments, abort, **options
    )


def first_text(result: ToolExecutionResult) -> str:
    return str(result.content[0]["text"])


class FakeApproval:
    """An approval service answering a fixed outcome, optionally after an event."""

    def __init__(self, outcome: object = "allowed-once", gate: trio.Event | None = None) -> None:
        self.outcome = outcome
        self.gate = gate
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        if self.gate is not None:
            await self.gate.wait()
        return self.outcome
