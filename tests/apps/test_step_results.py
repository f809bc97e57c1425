"""Step results: ``execute_tool_calls`` and ``execute_sub_calls`` give back committed results."""

from __future__ import annotations

import trio
import trio.testing

import trio_harness as th

from .tools import runtime_with


async def test_step_results_are_the_committed_results_in_model_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    files = {"a.txt": "alpha"}
    runtime = runtime_with(files, write_delay=1)
    session = th.Session()
    calls = [
        th.ToolCallBlock("c1", "read", '{"path":"a.txt"}'),
        th.ToolCallBlock("c2", "write", '{"path":"b.txt","text":"bb"}'),
        th.ToolCallBlock("c3", "nope", "{}"),
    ]
    outcome = await th.execute_tool_calls(runtime, session, calls)
    assert [(r.call_id, r.name) for r in outcome.results] == [
        ("c1", "read"),
        ("c2", "write"),
        ("c3", "nope"),
    ]
    assert [r.result.value for r in outcome.results[:2]] == ["alpha", 2]
    assert outcome.results[2].result.content == (
        {"type": "text", "text": 'Error: unknown tool "nope"'},
    )
    # Exactly the results the session recorded.
    recorded = [e.data.message.content[0] for e in session.events if e.type == "tool/result"]
    assert [(b.tool_call_id, b.content) for b in recorded] == [
        (r.call_id, tuple(r.result.content)) for r in outcome.results
    ]
    # Results are not part of equality: the two flags compare as before.
    assert outcome == th.StepOutcome(concluded=False, aborted=False)


async def test_an_aborted_step_returns_its_synthetic_results(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runtime = runtime_with({}, write_delay=10)
    abort = trio.Event()
    calls = [
        th.ToolCallBlock("w1", "write", '{"path":"x","text":"1"}'),
        th.ToolCallBlock("w2", "write", '{"path":"y","text":"2"}'),
    ]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_set_after, abort, 3)
        outcome = await th.execute_tool_calls(runtime, th.Session(), calls, abort=abort)
    assert outcome.aborted
    assert trio.current_time() == 3
    assert [(r.call_id, r.result.error.info.code) for r in outcome.results] == [  # type: ignore[union-attr]
        ("w1", "ABORTED"),
        ("w2", "ABORTED_BEFORE_DISPATCH"),
    ]


async def _set_after(event: trio.Event, seconds: float) -> None:
    await trio.sleep(seconds)
    event.set()


async def test_sub_call_results_carry_ids_and_names() -> None:
    runtime = runtime_with({"a": "A", "b": "B"})
    seen: list[th.SubCallResults] = []

    @th.tool
    async def both(ctx: th.ToolExecution) -> list[str]:
        """Read a and b."""
        results = await th.execute_sub_calls(
            ctx,
            [
                th.SubCall("s1", "read", {"path": "a"}),
                th.ToolCallBlock("s2", "read", '{"path":"b"}'),
            ],
        )
        seen.append(results)
        return [r.value for r in results]

    runtime.register(both)
    result = await runtime.execute(th.ToolExecutionInput("c1", "both", {}))
    assert result.value == ["A", "B"]
    [results] = seen
    assert results == [r.result for r in results.steps]  # still a plain list of results
    assert isinstance(results, list)
    assert [(s.call_id, s.name, s.result.value) for s in results.steps] == [
        ("s1", "read", "A"),
        ("s2", "read", "B"),
    ]
