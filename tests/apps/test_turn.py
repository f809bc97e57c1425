"""``run_turn``: the loop's stop conditions, abort, progress events (scripted model, virtual time)."""

from __future__ import annotations

import pytest
import trio
import trio.testing

import trio_harness as th
from trio_harness.lowlevel import check_log

from .scripted_model import ScriptedModel
from .tools import runtime_with


async def _set_after(event: trio.Event, seconds: float) -> None:
    await trio.sleep(seconds)
    event.set()


async def test_the_turn_ends_when_the_model_stops_calling_tools(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runtime = runtime_with({"a": "A"})
    model = ScriptedModel(
        [
            ("", [("c1", "read", '{"path":"a"}'), ("c2", "list", "")]),
            ("", [("c3", "read", '{"path":"zz"}')]),
            ("done", []),
        ]
    )
    events: list[th.turn.TurnEvent] = []
    session = th.Session()
    result = await th.run_turn(model, runtime, session, turn=4, on_event=events.append)
    assert result.stop == "done"
    assert result.steps == 2
    assert result.text == "done"
    assert [r.call_id for r in result.results] == ["c3"]
    assert [[(r.call_id, r.result.is_error) for r in step] for step in model.results_seen] == [
        [("c1", False), ("c2", False)],
        [("c3", True)],
    ]
    assert model.tools_seen[0] == ["read", "list", "write"]
    assert [type(e).__name__ for e in events] == [
        "ModelRequested",
        "ModelReplied",
        "StepStarted",
        "ToolStarted",
        "ToolStarted",
        "ToolCommitted",
        "ToolCommitted",
        "StepFinished",
        "ModelRequested",
        "ModelReplied",
        "StepStarted",
        "ToolStarted",
        "ToolCommitted",
        "StepFinished",
        "ModelRequested",
        "ModelReplied",
    ]
    assert all(getattr(e, "turn", 4) == 4 for e in events)
    assert {e.data.turn for e in session.events} == {4}
    assert [e.data.step for e in session.events if e.type == "tool/call"] == [0, 0, 1]
    # The loop removed its progress hooks: a call outside the turn reports nothing.
    count = len(events)
    await runtime.execute(th.ToolExecutionInput("x", "read", {"path": "a"}))
    assert len(events) == count


async def test_a_tool_can_conclude_the_turn(autojump_clock: trio.testing.MockClock) -> None:
    runtime = runtime_with({})

    @th.tool
    async def finish(summary: str, ctx: th.ToolExecution) -> str:
        """End the turn."""
        ctx.conclude_turn()
        return summary

    runtime.register(finish)
    model = ScriptedModel([("", [("c1", "finish", '{"summary":"ok"}')]), ("never", [])])
    result = await th.run_turn(model, runtime, th.Session())
    assert result.stop == "concluded"
    assert result.steps == 1
    assert model.replies == [("never", [])]
    assert model.results_seen[0][0].result.concludes_turn


async def test_the_step_limit_answers_the_pending_calls(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runtime = runtime_with({"a": "A"})
    model = ScriptedModel([("", [("c1", "read", '{"path":"a"}')])] * 3)
    session = th.Session()
    result = await th.run_turn(model, runtime, session, max_steps=2)
    assert result.stop == "step_limit"
    assert result.steps == 2
    # The third reply's call was not run but answered, so the conversation stays valid: in the
    # log too, as the pool's synthetic pair of a call that never started.
    last = model.results_seen[-1]
    assert [(r.call_id, r.result.is_error) for r in last] == [("c1", True)]
    assert last[0].result.content == (
        {"type": "text", "text": "Error: tool call aborted before dispatch"},
    )
    tail = [event.to_json() for event in session.events[-2:]]
    assert [(e["type"], e["data"]["step"]) for e in tail] == [("tool/call", 2), ("tool/result", 2)]
    assert tail[1]["data"]["error"] == {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}
    assert th.log.check_replay(session).valid
    assert check_log([event.to_json() for event in session.events]) == []
    with pytest.raises(ValueError, match="max_steps must be a non-negative integer"):
        await th.run_turn(model, runtime, th.Session(), max_steps=-1)


async def test_abort_cancels_a_pending_model_request(
    autojump_clock: trio.testing.MockClock,
) -> None:
    model = ScriptedModel([("slow", [])], delay=10)
    abort = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_set_after, abort, 2)
        result = await th.run_turn(model, runtime_with({}), th.Session(), abort=abort)
    assert result == th.TurnResult(stop="aborted", steps=0)
    assert trio.current_time() == 2
    # An abort set before the turn starts stops it before any request.
    assert await th.run_turn(model, runtime_with({}), th.Session(), abort=abort) == result
    assert len(model.tools_seen) == 1


async def test_abort_during_a_step_commits_results_and_ends_the_turn(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runtime = runtime_with({"a": "A"}, write_delay=5)
    model = ScriptedModel(
        [
            (
                "",
                [
                    ("c1", "read", '{"path":"a"}'),
                    ("c2", "write", '{"path":"b","text":"x"}'),
                    ("c3", "list", ""),
                ],
            )
        ]
    )
    abort = trio.Event()
    session = th.Session()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_set_after, abort, 1)
        result = await th.run_turn(model, runtime, session, abort=abort)
    assert result.stop == "aborted"
    assert result.steps == 1
    assert trio.current_time() == 1
    codes = [
        None if r.result.error is None or r.result.error.info is None else r.result.error.info.code
        for r in model.results_seen[0]
    ]
    assert codes == [None, "ABORTED", "ABORTED_BEFORE_DISPATCH"]
    assert session.to_jsonl().count('"tool/result"') == 3


async def test_model_errors_reach_the_caller_bare(autojump_clock: trio.testing.MockClock) -> None:
    class Broken(ScriptedModel):
        async def step(self, tools: object) -> th.ModelStep:
            raise ConnectionError("no route")

    with pytest.raises(ConnectionError, match="no route"):
        await th.run_turn(Broken([]), runtime_with({}), th.Session(), abort=trio.Event())


async def test_two_turns_on_one_runtime_report_only_their_own_calls(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runtime = runtime_with({"a": "A"}, write_delay=1)
    seen: dict[str, list[str]] = {"x": [], "y": []}

    async def turn(label: str) -> None:
        model = ScriptedModel(
            [
                (
                    "",
                    [
                        (f"{label}1", "read", '{"path":"a"}'),
                        (f"{label}2", "write", '{"path":"b","text":"t"}'),
                    ],
                ),
                ("", []),
            ]
        )

        def record(event: th.turn.TurnEvent) -> None:
            if isinstance(event, th.turn.ToolStarted | th.turn.ToolCommitted):
                seen[label].append(f"{type(event).__name__}:{event.call_id}")

        await th.run_turn(model, runtime, th.Session(), on_event=record)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(turn, "x")
        nursery.start_soon(turn, "y")
    for label in ("x", "y"):
        assert seen[label] == [
            f"ToolStarted:{label}1",
            f"ToolCommitted:{label}1",
            f"ToolStarted:{label}2",
            f"ToolCommitted:{label}2",
        ]
