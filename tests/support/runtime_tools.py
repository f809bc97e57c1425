"""Tool definitions and runtimes of the runtime tests (no tests here): the upstream ``echo`` tool,
the content fixture, raw definitions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from tests.support.runtime_helpers import text_blocks
from trio_harness import (
    ToolDefinition,
    ToolOutput,
    ToolRuntime,
    define_tool,
)


def runtime_with(*tools: ToolDefinition, **options: Any) -> ToolRuntime:
    """A ``ToolRuntime(**options)`` with ``tools`` registered."""
    runtime = ToolRuntime(**options)
    for tool in tools:
        runtime.register(tool)
    return runtime


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


class Passthrough:
    """A scheduler wrapper that changes nothing (subclass it to watch or change one phase)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def prepare(self, input: Any) -> Any:
        return await self.inner.prepare(input)

    async def dispatch(self, exec: Any) -> Any:
        return await self.inner.dispatch(exec)

    async def finalize(self, exec: Any, result: Any) -> Any:
        return await self.inner.finalize(exec, result)

    def finish(self, exec: Any, result: Any) -> Any:
        return self.inner.finish(exec, result)
