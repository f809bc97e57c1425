"""One call path: whatever wraps the runtime, the scheduler or the session, a call runs the same
code as with the built-in classes (issue 27). Counters on every method of the runtime's own
scheduler and registry show the same calls under ``PoolMonitor``, a pass-through wrapper and a
subclass as in a plain step."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import trio

import trio_harness as th
from trio_harness.lowlevel import ToolScheduler
from trio_harness.testing import PoolMonitor

# Every public method of the scheduler the driver may call, and the registry's classification.
_COUNTED = [(ToolScheduler, name) for name in ("prepare", "dispatch", "finalize", "finish")]


def _runtime(*, post_hook: bool) -> th.ToolRuntime:
    async def body(args: Any, ctx: Any) -> str:
        await trio.sleep(int(args["x"]))
        return "ok"

    runtime = th.ToolRuntime()
    for name, safe in (("read", True), ("write", False)):
        runtime.register(
            th.define_tool(
                name=name,
                description=name,
                parameters={"x": {"type": "integer"}},
                output=th.ToolOutput(
                    schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
                ),
                execute=body,
                is_concurrency_safe=(lambda a: True) if safe else None,
            )
        )
    if post_hook:

        async def post(exec: Any, result: Any, next: Callable[[], Any]) -> Any:
            return await next()

        runtime.add_post_execute(post)
    return runtime


@contextmanager
def _counting(mp: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    counts: Counter[str] = Counter()
    for cls, name in [*_COUNTED, (th.ToolRuntime, "execution_mode")]:
        original = getattr(cls, name)

        def counted(*args: Any, _original: Any = original, _name: str = name) -> Any:
            counts[_name] += 1
            return _original(*args)

        mp.setattr(cls, name, counted)
    yield counts


class _PassThrough:
    """A user's scheduler wrapper that forwards every phase unchanged."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def prepare(self, input: Any, /) -> Any:
        return await self.inner.prepare(input)

    async def dispatch(self, exec: Any, /) -> Any:
        return await self.inner.dispatch(exec)

    async def finalize(self, exec: Any, result: Any, /) -> Any:
        return await self.inner.finalize(exec, result)

    def finish(self, exec: Any, result: Any, /) -> Any:
        return self.inner.finish(exec, result)


class _SubSession(th.Session):
    pass


_CALLS = [
    th.ToolCallBlock("c0", "read", '{"x": 2}'),
    th.ToolCallBlock("c1", "read", '{"x": 1}'),
    th.ToolCallBlock("c2", "write", '{"x": 1}'),
    th.ToolCallBlock("c3", "read", '{"x": 1}'),
]


async def _run(way: str, post_hook: bool) -> list[Any]:
    runtime = _runtime(post_hook=post_hook)
    session: th.Session = th.Session()
    if way == "plain":
        await th.execute_tool_calls(runtime, session, _CALLS)
    elif way == "monitor":
        monitor = PoolMonitor(runtime)
        await monitor.execute_tool_calls(session, _CALLS)
        monitor.assert_ok()
    elif way == "wrapper":
        runtime.scheduler = _PassThrough(runtime.scheduler)  # type: ignore[assignment]
        await th.execute_tool_calls(runtime, session, _CALLS)
    elif way == "subclass":
        session = _SubSession()
        await th.execute_tool_calls(runtime, session, _CALLS)
    else:  # pragma: no cover - parametrization only
        raise AssertionError(way)
    return [event.to_json() for event in session.events]


@pytest.mark.parametrize("post_hook", [False, True], ids=["no-hooks", "post-hook"])
@pytest.mark.parametrize("way", ["monitor", "wrapper", "subclass"])
async def test_a_wrapped_scheduler_and_runtime_see_exactly_the_calls_production_makes(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch, way: str, post_hook: bool
) -> None:
    with _counting(monkeypatch) as plain_counts:
        plain_log = await _run("plain", post_hook)
        plain = dict(plain_counts)
    with _counting(monkeypatch) as counts:
        log = await _run(way, post_hook)
    # Four calls, each prepared, dispatched, finalized (a dispatch's result goes through
    # post-execute, hooks or not) and finished once. The monitor asks the runtime's classifier
    # for its ground truth too, so only its ``execution_mode`` count differs.
    assert plain["prepare"] == plain["dispatch"] == plain["finalize"] == plain["finish"] == 4
    for name in ("prepare", "dispatch", "finalize", "finish"):
        assert counts.get(name, 0) == plain.get(name, 0), name
    if way != "monitor":
        assert counts["execution_mode"] == plain["execution_mode"]
    assert log == plain_log


def test_the_scheduler_has_only_its_four_documented_phases() -> None:
    public = sorted(name for name in vars(ToolScheduler) if not name.startswith("_"))
    assert public == ["dispatch", "finalize", "finish", "prepare"]
