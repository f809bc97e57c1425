"""Replay check and repair of stored logs, and presenting them through today's tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import trio
import trio.testing

import trio_harness as th
from tests.support.counting import count_calls
from tests.support.demo_steps import PARAMS, Ticker, demo_calls, runtime, two_steps
from trio_harness import lowlevel


def crashed_log(tmp_path: Path) -> Path:
    """A real log cut by a 'crash' in the middle of step 0: c1-c3 answered, c4 called."""
    path = tmp_path / "crashed.jsonl"
    with th.log.DurableSession.open(path, clock=Ticker()) as session:
        trio.run(two_steps, session, clock=trio.testing.MockClock(autojump_threshold=0))
    lines = path.read_bytes().split(b"\n")
    # Keep c1..c3 calls and results and c4's call (seq 0-6), plus half of c4's result line.
    path.write_bytes(b"\n".join(lines[:7]) + b"\n" + lines[7][:40])
    return path


def test_a_pool_log_is_replay_valid(tmp_path: Path) -> None:
    session = th.Session()
    trio.run(two_steps, session, clock=trio.testing.MockClock(autojump_threshold=0))
    report = th.log.check_replay(session)
    assert report == th.log.ReplayReport()
    assert report.valid
    assert th.log.repair_replay(session) == []


def test_a_crashed_log_is_checked_and_repaired(tmp_path: Path) -> None:
    path = crashed_log(tmp_path)
    loaded = th.log.load_session_log(path)
    assert loaded.cut is not None
    assert loaded.cut.line == 8
    report = th.log.check_replay(loaded.events)
    assert not report.valid
    assert report.unanswered == (th.log.UnansweredCall(6, 0, 0, "c4", "write"),)
    assert report.problems == ()
    with th.log.DurableSession.open(path, clock=lambda: 99.0) as session:
        added = th.log.repair_replay(session)
        assert [(e.seq, e.type, e.source_event_seqs) for e in added] == [(7, "tool/result", (6,))]
        assert th.log.check_replay(session).valid
    # The synthetic result is the pool's own ABORTED result, written as an ordinary event.
    expected = th.log.ToolResultData.from_result(0, 0, "c4", th.aborted_result())
    reread = th.log.load_session_log(path)
    assert reread.events[7].data == expected
    assert reread.times[7] == 99.0
    assert reread.events[7].to_json()["data"]["error"] == {"name": "AbortError", "code": "ABORTED"}
    assert th.log.check_replay(reread.events).valid


def test_problems_repair_cannot_fix_are_reported() -> None:
    session = th.Session()
    call = session.append("tool/call", th.log.ToolCallData(0, 0, "a", "read", "{}"))
    session.append("tool/call", th.log.ToolCallData(0, 0, "a", "read", "{}"))
    ok = th.ToolExecutionResult(is_error=False, content=())
    session.append(
        "tool/result",
        th.log.ToolResultData.from_result(0, 0, "b", ok),
        source_event_seqs=[call.seq],
    )
    session.append(
        "tool/result",
        th.log.ToolResultData.from_result(0, 0, "a", ok),
        source_event_seqs=[call.seq],
    )
    session.append("tool/result", th.log.ToolResultData.from_result(0, 0, "a", ok))
    session.append("tool/call", th.log.ToolCallData(0, 1, "z", "read", "{}"))
    report = th.log.check_replay(session)
    assert [call.call_id for call in report.unanswered] == ["a", "z"]
    assert report.problems == (
        "call id 'a' is used twice in turn 0 step 0 (#1)",
        "result #2 answers call id(s) ['b'], but cites call 'a' (#0)",
        "call 'a' (#0) has a second result #3",
        "result #4 does not cite exactly one tool/call",
        "call 'a' (#1, turn 0 step 0) is unanswered when turn 0 step 1 begins (#5)",
    )
    th.log.repair_replay(session)
    after = th.log.check_replay(session)
    assert after.unanswered == ()
    assert not after.valid  # the other problems remain


def test_results_in_another_step_than_their_call() -> None:
    session = th.Session()
    session.append("tool/call", th.log.ToolCallData(0, 0, "a", "read", "{}"))
    ok = th.ToolExecutionResult(is_error=False, content=())
    session.append(
        "tool/result", th.log.ToolResultData.from_result(0, 3, "a", ok), source_event_seqs=[0]
    )
    assert th.log.check_replay(session.events).problems == (
        "result #1 is in turn 0 step 3, its call #0 in turn 0 step 0",
    )


async def test_a_stored_log_is_presented_through_current_tools(
    autojump_clock: trio.testing.MockClock,
) -> None:
    session = th.Session()
    await th.execute_tool_calls(runtime(), session, demo_calls()[:4], max_parallel_tool_calls=2)
    session.append(
        "tool/call", th.log.ToolCallData(0, 1, "x1", "read", '{"path": 7, "seconds": 1}')
    )
    session.append("tool/call", th.log.ToolCallData(0, 1, "x2", "gone", '{"q": 1}'))
    # Today's runtime: `write` changed its schema since the log was written.
    today = runtime()
    today.unregister("write")

    def card(args: object) -> str:
        return f"card {args}"

    async def body(args: object, ctx: object) -> str:
        return "x"

    today.register(
        th.define_tool(
            name="write",
            description="write",
            parameters={**PARAMS, "mode": {"type": "string", "required": True}},
            output=th.ToolOutput(schema={"type": "string"}, render=lambda a, v: []),
            execute=body,
            present_call=card,
        )
    )
    shown = th.log.present_log(today, session)
    assert [(p.seq, p.call_id, p.generic) for p in shown] == [
        (0, "c1", False),
        (1, "c2", False),
        (2, "c3", False),
        (6, "c4", True),
        (8, "x1", True),
        (9, "x2", True),
    ]
    c1 = shown[0]
    assert (c1.call_view, c1.result_view, c1.reason) == ("a.txt (3s)", "done: a.txt", None)
    c4 = shown[3]
    assert (
        c4.reason == 'stored arguments no longer fit the schema: missing required property "mode"'
    )
    assert c4.call_view == {"tool": "write", "arguments": {"path": "out.txt", "seconds": 1}}
    assert c4.result_view == {"isError": False, "text": "write out.txt"}
    assert shown[4].reason == 'stored arguments no longer fit the schema: "path" must be a string'
    assert shown[4].result_view is None
    assert shown[5].reason == "tool 'gone' is not registered"
    text = th.log.format_presented(shown)
    assert text.splitlines()[:3] == ["#0 c1 read", "  call:   a.txt (3s)", "  result: done: a.txt"]
    assert "#9 x2 gone (generic view: tool 'gone' is not registered)" in text
    assert '  call:   {"tool":"gone","arguments":{"q":1}}' in text
    assert "  result: (none)" in text


def test_presenting_falls_back_when_a_tool_has_no_presenter(tmp_path: Path) -> None:
    path = crashed_log(tmp_path)
    loaded = th.log.load_session_log(path)
    shown = th.log.present_log(runtime(presenters=False), loaded.events)
    assert {p.reason for p in shown} == {
        "tool 'read' has no call presenter",
        "tool 'write' has no call presenter",
    }
    assert shown[0].result_view == {"isError": False, "text": "read a.txt"}
    assert shown[3].result_view is None  # c4's result was lost in the crash


async def test_presenting_an_aborted_result(autojump_clock: trio.testing.MockClock) -> None:
    session = th.Session()
    abort = trio.Event()
    abort.set()
    await th.execute_tool_calls(runtime(), session, demo_calls()[:1], abort=abort)
    (shown,) = th.log.present_log(runtime(), session)
    assert shown.result_view == "failed: a.txt"
    assert not shown.generic


def test_a_call_cut_off_in_a_skipping_tail_is_repaired_as_never_dispatched() -> None:
    # Step 1 of the demo is aborted with d3..d6 skipped: each is a call directly answered
    # ABORTED_BEFORE_DISPATCH. A crash right after d4's call leaves it unanswered; its body never
    # started, so the repair must say so, and check-log must accept the repaired log.
    full = th.Session()
    trio.run(two_steps, full, clock=trio.testing.MockClock(autojump_threshold=0))
    d4 = next(e for e in full.events if e.type == "tool/call" and e.data.call_id == "d4")
    crashed = th.Session(events=full.events[: d4.seq + 1])
    report = th.log.check_replay(crashed)
    assert report.unanswered == (th.log.UnansweredCall(d4.seq, 0, 1, "d4", "write", skipped=True),)
    (added,) = th.log.repair_replay(crashed)
    assert added.data == th.log.ToolResultData.from_result(
        0, 1, "d4", th.aborted_before_dispatch_result()
    )
    assert th.log.check_replay(crashed).valid
    assert lowlevel.check_log([event.to_json() for event in crashed.events]) == []


def test_a_call_cut_off_before_the_tail_is_repaired_as_aborted() -> None:
    # d1 and d2 ran (ABORTED); a crash before d1's result: no skipped pair yet, so ABORTED.
    full = th.Session()
    trio.run(two_steps, full, clock=trio.testing.MockClock(autojump_threshold=0))
    d2 = next(e for e in full.events if e.type == "tool/call" and e.data.call_id == "d2")
    crashed = th.Session(events=full.events[: d2.seq + 1])
    assert [call.skipped for call in th.log.check_replay(crashed).unanswered] == [False, False]
    added = th.log.repair_replay(crashed)
    assert [event.data.error for event in added] == [th.aborted_result().error.info] * 2  # type: ignore[union-attr]
    assert lowlevel.check_log([event.to_json() for event in crashed.events]) == []


def test_a_call_left_open_is_one_problem_however_many_steps_follow() -> None:
    def unanswered_steps(count: int) -> th.Session:
        session = th.Session()
        for step in range(count):
            session.append("tool/call", th.log.ToolCallData(0, step, f"c{step}", "read", "{}"))
        return session

    report = th.log.check_replay(unanswered_steps(2_000))
    assert len(report.unanswered) == 2_000
    # One problem per call a later step found open (the last call has no later step).
    assert len(report.problems) == 1_999
    assert report.problems[0] == (
        "call 'c0' (#0, turn 0 step 0) is unanswered when turn 0 step 1 begins (#1)"
    )
    # Linear work: ten times the calls, ten times the function calls (a fixed cost aside).
    small = count_calls(lambda: th.log.check_replay(unanswered_steps(200)))
    large = count_calls(lambda: th.log.check_replay(unanswered_steps(2_000)))
    assert large <= 10.5 * small


def _raw_tool(**presenters: Any) -> th.ToolRuntime:
    async def body(args: object, ctx: object) -> str:
        return "x"

    runtime = th.ToolRuntime()
    runtime.register(
        th.ToolDefinition(
            name="raw",
            description="an MCP-style tool",
            parameters={"type": "object", "properties": {"q": {"type": "string"}}},
            output=th.ToolOutput(schema={}, render=lambda args, value: []),
            execute=body,
            **presenters,
        )
    )
    return runtime


def _answered_call(arguments: str = '{"q": "x"}') -> th.Session:
    session = th.Session()
    call = session.append("tool/call", th.log.ToolCallData(0, 0, "c1", "raw", arguments))
    data = th.log.ToolResultData.from_result(0, 0, "c1", th.error_result("it failed"))
    session.append("tool/result", data, source_event_seqs=[call.seq])
    return session


def test_a_presenter_that_raises_gets_the_generic_view() -> None:
    def broken(args: Any) -> Any:
        return args["missing"]

    def card(args: Any) -> str:
        return "card"

    def broken_result(args: Any, result: Any) -> Any:
        raise ValueError("no view")

    cases: list[tuple[dict[str, Any], str]] = [
        ({"present_call": broken}, "the call presenter raised KeyError: 'missing'"),
        (
            {"present_call": card, "present_result": broken_result},
            "the result presenter raised ValueError: no view",
        ),
    ]
    for presenters, reason in cases:
        (shown,) = th.log.present_log(_raw_tool(**presenters), _answered_call())
        assert (shown.generic, shown.reason) == (True, reason)
        assert shown.call_view == {"tool": "raw", "arguments": {"q": "x"}}
        assert shown.result_view == {"isError": True, "text": "Error: it failed"}


def test_a_schema_outside_the_subset_gets_the_generic_view() -> None:
    runtime = _raw_tool(present_call=lambda args: "card")
    tool = runtime.get("raw")
    assert tool is not None
    runtime.unregister("raw")
    runtime.register(
        attrs.evolve(
            tool, parameters={"type": "object", "properties": {"q": {"type": ["string", "null"]}}}
        )
    )
    (shown,) = th.log.present_log(runtime, _answered_call())
    assert shown.generic
    assert shown.reason is not None
    assert shown.reason.startswith("the stored arguments cannot be checked: ")
    assert shown.call_view == {"tool": "raw", "arguments": {"q": "x"}}
    assert "generic view: the stored arguments cannot be checked" in th.log.format_presented(
        [shown]
    )
