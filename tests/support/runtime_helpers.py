"""Shared helpers of the runtime tests (no tests here): inputs, hook-chain aliases, the synthetic
abort results, abort timing helpers and small fakes (tool definitions: ``tests/runtime_tools.py``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from trio_harness import (
    ApprovalRequest,
    PostToolDecision,
    PreToolDecision,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolRuntime,
)

PreNext = Callable[[], Awaitable[PreToolDecision]]
PostNext = Callable[[], Awaitable[PostToolDecision]]
WrapNext = Callable[[], Awaitable[ToolExecutionResult]]


def text_blocks(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def _abort_json(message: str, code: str) -> dict[str, Any]:
    return {
        "content": text_blocks("Error: " + message),
        "isError": True,
        "error": {"message": message, "info": {"name": "AbortError", "code": code}},
    }


# ``ToolExecutionResult.to_json()`` of the two synthetic abort results.
ABORTED_RESULT = _abort_json("tool call aborted", "ABORTED")
BEFORE_DISPATCH_RESULT = _abort_json("tool call aborted before dispatch", "ABORTED_BEFORE_DISPATCH")


def observe_results(runtime: Any) -> list[tuple[Any, ToolExecutionResult]]:
    """Adds a result observer; returns the list of ``(exec, result)`` it records."""
    seen: list[tuple[Any, ToolExecutionResult]] = []
    runtime.add_result_observer(lambda exec, result: seen.append((exec, result)))
    return seen


def set_at(event: trio.Event, when: float) -> Callable[[], Awaitable[None]]:
    """A task that sets ``event`` at the virtual time ``when``."""

    async def setter() -> None:
        await trio.sleep_until(when)
        event.set()

    return setter


async def execute_setting_at(
    runtime: ToolRuntime, input: ToolExecutionInput, event: trio.Event, when: float
) -> ToolExecutionResult:
    """Runs ``runtime.execute(input)`` while a sibling task sets ``event`` at ``when``."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(set_at(event, when))
        return await runtime.execute(input)


def sleeper(seconds: float, log: list[str] | None = None) -> Any:
    """A content-tool body that logs ``body``, sleeps ``seconds`` and returns ``slept``."""

    async def body(args: Any, ctx: Any) -> Any:
        if log is not None:
            log.append("body")
        await trio.sleep(seconds)
        return text_blocks("slept")

    return body


def abort_swapping_wrapper(
    replacement: Callable[[], trio.Event], *, delay: float = 0, seen: dict[str, Any] | None = None
) -> Any:
    """An execute wrapper that swaps ``exec.abort`` for ``replacement()`` around ``next()``
    (after sleeping ``delay``) and restores it; records the abort it saw as ``seen['wrapper']``."""

    async def wrapper(exec: Any, next: WrapNext) -> ToolExecutionResult:
        if seen is not None:
            seen["wrapper"] = exec.abort
        previous, exec.abort = exec.abort, replacement()
        try:
            if delay:
                await trio.sleep(delay)
            return await next()
        finally:
            exec.abort = previous

    return wrapper


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


def split_contexts(result: ToolExecutionResult) -> tuple[dict[str, Any], list[Any]]:
    """``result.to_json()`` without its ``additionalContexts``, and those contexts (``[]`` if none)."""
    data = result.to_json()
    return data, data.pop("additionalContexts", [])


def context_sources(result: ToolExecutionResult) -> list[Any]:
    """The ``plugin`` names of the sources of ``result``'s additional contexts, in order."""
    return [context["source"]["plugin"] for context in result.additional_contexts]
