"""A fake runtime for driving the pool: scripted tools, hooks and scheduler failures.

``FakeRuntime`` implements the interface the pool uses (``execution_mode`` and a ``scheduler`` with
``prepare``/``dispatch``/``finalize``/``finish``) with the upstream phase semantics that the pool
tests observe: an already-aborted call or a call aborted during pre-execute gets
``ABORTED_BEFORE_DISPATCH``; a denial is a ``post-result``; a pre-execute throw a ``final-result``;
a body runs inside ``cancel_on_abort`` and becomes ``ABORTED`` when its scope was cancelled; a body
exception becomes an error result. It also keeps the timeline the tests assert on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio
import trio.testing

from trio_harness import (
    EXCLUSIVE,
    PARALLEL,
    ExecutionMode,
    ToolError,
    ToolExecutionInput,
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
    error_result,
)
from trio_harness._runtime.abort import cancel_on_abort
from trio_harness.lowlevel import (
    DispatchOutcome,
    Preparation,
)

Body = Callable[[Any, "FakeExec"], Awaitable[Any]]


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


def success(value: str, **kwargs: Any) -> ToolExecutionResult:
    return ToolExecutionResult(is_error=False, content=tuple(text(value)), value=value, **kwargs)


@attrs.define(eq=False)
class FakeTool:
    name: str
    body: Body
    # ``True``/``False`` or a classifier of the arguments; only an exact ``True`` is parallel.
    parallel: bool | Callable[[Any], object] = False
    meta: Any = None


@attrs.define(eq=False)
class FakeExec:
    """The run context of one fake execution."""

    input: ToolExecutionInput
    runtime: FakeRuntime
    deferred: list[Any] = attrs.field(factory=list)
    concluded: bool = False

    @property
    def exec(self) -> FakeExec:
        return self

    @property
    def call_id(self) -> str:
        return self.input.call_id

    @property
    def name(self) -> str:
        return self.input.name

    @property
    def arguments(self) -> Any:
        return self.input.arguments

    @property
    def abort(self) -> trio.Event | None:
        return self.input.abort

    @property
    def agent(self) -> object | None:
        return self.input.agent

    @property
    def parent(self) -> Any:
        return self.input.parent

    @property
    def root_call_id(self) -> str:
        return self.input.root_call_id or self.input.call_id

    def defer_context(self, content: Any) -> None:
        self.deferred.append(content)

    def conclude_turn(self) -> None:
        self.concluded = True


class FakeScheduler:
    def __init__(self, runtime: FakeRuntime) -> None:
        self.runtime = runtime

    async def prepare(self, input: ToolExecutionInput) -> Preparation:
        rt = self.runtime
        exec = FakeExec(input, rt)
        rt.log.append(("prepare", input.call_id, trio.current_time()))
        if _aborted(input.abort):
            return Preparation("final-result", exec, aborted_before_dispatch_result())
        try:
            for hook in rt.pre_hooks:
                reason = await hook(exec)
                if reason is not None:
                    denied = ToolExecutionResult(
                        is_error=True,
                        content=tuple(text("Error: " + reason)),
                        error=ToolError(reason),
                    )
                    return Preparation("post-result", exec, denied)
        except Exception as exc:
            return Preparation("final-result", exec, error_result(exc))
        if _aborted(input.abort):
            return Preparation("post-result", exec, aborted_before_dispatch_result())
        return Preparation("dispatch", exec)

    async def dispatch(self, exec: FakeExec) -> DispatchOutcome:
        rt = self.runtime
        tool = rt.tools.get(exec.name)
        if tool is None:
            return DispatchOutcome(
                "post-result", error_result(LookupError(f'unknown tool "{exec.name}"'))
            )
        call_id = exec.call_id
        rt.running.add(call_id)
        rt.max_running = max(rt.max_running, len(rt.running))
        # Judged by the classification the pool saw, not by the (possibly changed) registry.
        exclusive = not rt.modes.get(call_id, False)
        rt.exclusive_overlap |= len(rt.running) > 1 and (
            exclusive or any(not rt.modes.get(other, False) for other in rt.running)
        )
        rt.started.append(call_id)
        rt.log.append(("body-start", call_id, trio.current_time()))
        result: ToolExecutionResult
        try:
            async with cancel_on_abort(exec.abort) as scope:
                value = await tool.body(exec.arguments, exec)
                result = success(value, meta=tool.meta) if tool.meta is not None else success(value)
            if scope.cancelled_caught or (_aborted(exec.abort) and not result.is_error):
                # Upstream: a success that settles after cancellation becomes ABORTED.
                result = aborted_result()
        except Exception as exc:
            result = error_result(exc)
        finally:
            rt.running.discard(call_id)
            rt.log.append(("body-end", call_id, trio.current_time()))
        contexts = tuple(exec.deferred) + tuple(result.additional_contexts)
        result = attrs.evolve(result, additional_contexts=contexts, concludes_turn=exec.concluded)
        return DispatchOutcome("post-result", result)

    async def finalize(self, exec: FakeExec, result: ToolExecutionResult) -> ToolExecutionResult:
        rt = self.runtime
        rt.log.append(("post", exec.call_id, trio.current_time()))
        for hook in rt.post_hooks:
            result = await hook(exec, result)
        return self.finish(exec, result)

    def finish(self, exec: FakeExec, result: ToolExecutionResult) -> ToolExecutionResult:
        rt = self.runtime
        rt.log.append(("finish", exec.call_id, trio.current_time()))
        for observer in rt.observers:
            observer(exec, result)
        return result


def _aborted(event: trio.Event | None) -> bool:
    return event is not None and event.is_set()


class FakeRuntime:
    """Registry + scheduler + timeline."""

    def __init__(self, *tools: FakeTool) -> None:
        self.tools: dict[str, FakeTool] = {tool.name: tool for tool in tools}
        self.scheduler: Any = FakeScheduler(self)
        self.pre_hooks: list[Callable[[FakeExec], Awaitable[str | None]]] = []
        self.post_hooks: list[
            Callable[[FakeExec, ToolExecutionResult], Awaitable[ToolExecutionResult]]
        ] = []
        self.observers: list[Callable[[FakeExec, ToolExecutionResult], None]] = []
        self.log: list[tuple[str, str, float]] = []
        self.started: list[str] = []
        self.running: set[str] = set()
        self.max_running = 0
        self.exclusive_overlap = False
        self.classified: list[str] = []
        self.modes: dict[str, bool] = {}

    def register(self, tool: FakeTool) -> None:
        self.tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        self.tools.pop(name, None)

    def is_parallel(self, input: ToolExecutionInput) -> bool:
        tool = self.tools.get(input.name)
        if tool is None:
            return False
        classifier = tool.parallel
        try:
            verdict = classifier(input.arguments) if callable(classifier) else classifier
        except Exception:
            return False
        return verdict is True

    def execution_mode(self, input: ToolExecutionInput) -> ExecutionMode:
        self.classified.append(input.call_id)
        parallel = self.modes[input.call_id] = self.is_parallel(input)
        return PARALLEL if parallel else EXCLUSIVE

    def events(self, kind: str) -> list[str]:
        return [call_id for k, call_id, _ in self.log if k == kind]


class Gates:
    """Per-id release events for gated bodies."""

    def __init__(self) -> None:
        self._events: dict[str, trio.Event] = {}

    def __getitem__(self, key: str) -> trio.Event:
        return self._events.setdefault(key, trio.Event())

    def release(self, *keys: str) -> None:
        for key in keys:
            self[key].set()

    async def release_and_settle(self, *keys: str) -> None:
        """Releases ``keys``, then waits until every task is blocked again."""
        self.release(*keys)
        await trio.testing.wait_all_tasks_blocked()


def gated_body(gates: Gates, started: list[str] | None = None) -> Body:
    """Records ``args['id']`` as started, waits for its gate, returns ``done-<id>``."""

    async def body(args: Any, ctx: FakeExec) -> str:
        if started is not None:
            started.append(args["id"])
        await gates[args["id"]].wait()
        return "done-" + args["id"]

    return body


def sleep_body(seconds: float) -> Body:
    async def body(args: Any, ctx: FakeExec) -> str:
        await trio.sleep(seconds)
        return "slept"

    return body


async def noop_body(args: Any, ctx: FakeExec) -> str:
    return "ok"
