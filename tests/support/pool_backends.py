"""One pool scenario, two runtimes: ``FakeRuntime`` (``tests/pool_fakes.py``) and the real
``ToolRuntime`` with ``define_tool`` tools.

A ``PoolBackend`` registers tools and hooks in the dialect of its runtime, so a §7/§8 test is written
once and parametrized over both (the ``pool_backend`` fixture of ``tests/test_pool.py``): the fake
pins the pool's own contract, the real runtime that no divergence of the fake hides a pool bug. The
session helpers read the wire JSON, which both runtimes produce through the same ``Session``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio

from tests.support.pool_fakes import FakeExec, FakeRuntime, FakeTool, Gates, gated_body
from tests.support.runtime_helpers import PostNext, PreNext, text_blocks
from tests.support.runtime_tools import content_tool
from trio_harness import (
    Accept,
    Deny,
    ErrorInfo,
    PostToolDecision,
    PreToolDecision,
    Session,
    StepOutcome,
    ToolCallBlock,
    ToolExecution,
    ToolExecutionResult,
    ToolRuntime,
    execute_tool_calls,
)

# A body in the backend-neutral dialect: returns the text of its single text block.
Body = Callable[[Any, Any], Awaitable[str]]
# A pre-execute hook in the backend-neutral dialect: a reason denies, a raise is a hook failure.
PreHook = Callable[[str], Awaitable[str | None]]

BEFORE_DISPATCH = {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}
ABORTED = {"name": "AbortError", "code": "ABORTED"}
ABORTED_BEFORE_INFO = ErrorInfo("AbortError", "ABORTED_BEFORE_DISPATCH")
ABORTED_INFO = ErrorInfo("AbortError", "ABORTED")
BACKENDS = ["fake", "real"]


def block(call_id: str, name: str, **args: Any) -> ToolCallBlock:
    return ToolCallBlock(call_id, name, json.dumps(args))


def xs(n: int, name: str = "x") -> list[ToolCallBlock]:
    return [block(f"c{i}", name, id=str(i)) for i in range(1, n + 1)]


async def _ok(args: Any, ctx: Any) -> str:
    return "ok"


class PoolBackend:
    """Registers tools and hooks on a fake or a real runtime (``kind``) in one dialect."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.runtime: Any = FakeRuntime() if kind == "fake" else ToolRuntime()

    @property
    def fake(self) -> bool:
        return self.kind == "fake"

    def add_tool(
        self, name: str, body: Body = _ok, *, parallel: bool = False, meta: Any = None
    ) -> None:
        """Registers (or replaces) ``name``; the body's string becomes one text block."""
        if self.fake:
            self.runtime.register(FakeTool(name, body, parallel=parallel, meta=meta))
            return

        async def execute(args: Any, ctx: Any) -> Any:
            return text_blocks(await body(args, ctx))

        self.runtime.unregister(name)
        self.runtime.register(
            content_tool(
                name,
                execute,
                parameters={"id": {"type": "string"}, "text": {"type": "string"}},
                is_concurrency_safe=(lambda args: True) if parallel else None,
                presentation_meta=None if meta is None else (lambda args, value: meta),
            )
        )

    def add_gated(
        self, name: str, gates: Gates, started: list[str], *, parallel: bool = True
    ) -> None:
        """Upstream ``gatedTool``: records ``id``, waits for its release, returns ``done-<id>``."""
        self.add_tool(name, gated_body(gates, started), parallel=parallel)

    def gated(self, parallel: bool = True) -> tuple[Gates, list[str]]:
        """Registers the gated tool ``x``; returns its gates and the started ids."""
        gates = Gates()
        started: list[str] = []
        self.add_gated("x", gates, started, parallel=parallel)
        return gates, started

    def on_pre(self, hook: PreHook) -> None:
        if self.fake:
            self.runtime.pre_hooks.append(lambda exec: hook(exec.call_id))
            return

        async def pre(exec: ToolExecution, next: PreNext) -> PreToolDecision:
            reason = await hook(exec.call_id)
            return Deny(reason) if reason is not None else await next()

        self.runtime.add_pre_execute(pre)

    def on_post(
        self, log: list[str] | None = None, *, add_context: bool = False, content: str = ""
    ) -> None:
        """A post-execute hook: logs the call id, adds ``ctx-<id>``, or replaces the content."""

        async def fake_post(exec: FakeExec, result: ToolExecutionResult) -> ToolExecutionResult:
            if log is not None:
                log.append(exec.call_id)
            if content:
                return ToolExecutionResult(is_error=False, content=tuple(text_blocks(content)))
            if add_context:
                contexts = (*result.additional_contexts, "ctx-" + exec.call_id)
                return attrs.evolve(result, additional_contexts=contexts)
            return result

        async def real_post(
            exec: ToolExecution, result: ToolExecutionResult, next: PostNext
        ) -> PostToolDecision:
            if log is not None:
                log.append(exec.call_id)
            if content:
                return Accept(content=text_blocks(content))
            decision = await next()
            if not add_context:
                return decision
            assert isinstance(decision, Accept)
            context = {
                "content": "ctx-" + exec.call_id,
                "source": {"kind": "plugin", "plugin": "p"},
            }
            return Accept(additional_contexts=[*decision.additional_contexts, context])

        if self.fake:
            self.runtime.post_hooks.append(fake_post)
        else:
            self.runtime.add_post_execute(real_post)

    def on_result(self, observer: Callable[[str], None]) -> None:
        if self.fake:
            self.runtime.observers.append(lambda exec, result: observer(exec.call_id))
        else:
            self.runtime.add_result_observer(lambda exec, result: observer(exec.call_id))

    def defer(self, ctx: Any, label: str) -> None:
        if self.fake:
            ctx.defer_context(label)
        else:
            ctx.defer_context(label, source={"kind": "plugin", "plugin": label})

    def context_text(self, context: Any) -> str:
        return context if self.fake else str(context["content"][0]["text"])


def wire(session: Session) -> list[dict[str, Any]]:
    return [event.to_json() for event in session.events]


def result_wire(session: Session) -> list[dict[str, Any]]:
    return [e["data"] for e in wire(session) if e["type"] == "tool/result"]


def result_ids(session: Session) -> list[str]:
    return [d["message"]["source"]["callId"] for d in result_wire(session)]


def call_ids(session: Session) -> list[str]:
    return [e["data"]["callId"] for e in wire(session) if e["type"] == "tool/call"]


def texts(session: Session) -> list[str]:
    return [d["message"]["content"][0]["content"][0]["text"] for d in result_wire(session)]


def errors(session: Session) -> list[Any]:
    return [d.get("error") for d in result_wire(session)]


def timeline(session: Session) -> list[str]:
    out = []
    for e in wire(session):
        if e["type"] == "tool/call":
            out.append("tool/call:" + e["data"]["callId"])
        else:
            out.append("tool/result:" + e["data"]["message"]["source"]["callId"])
    return out


def assert_paired(session: Session) -> None:
    """Every tool/result cites its own tool/call; every call has exactly one result."""
    calls = {e.seq: e.data.call_id for e in session.events if e.type == "tool/call"}
    cited = []
    for event in session.events:
        if event.type == "tool/result":
            assert event.source_event_seqs is not None
            (seq,) = event.source_event_seqs
            assert calls[seq] == event.data.message.source.call_id
            cited.append(seq)
    assert sorted(cited) == sorted(calls)


async def start(nursery: trio.Nursery, *args: Any, **kwargs: Any) -> list[StepOutcome]:
    """Runs ``execute_tool_calls`` in ``nursery``; the outcome lands in the returned box."""
    box: list[StepOutcome] = []

    async def runner() -> None:
        box.append(await execute_tool_calls(*args, **kwargs))

    nursery.start_soon(runner)
    return box


def results(session: Session) -> list[Any]:
    """The ``tool/result`` payloads as objects (``ErrorInfo`` errors, not wire dicts)."""
    return [event.data for event in session.events if event.type == "tool/result"]
