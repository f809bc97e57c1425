"""Human approval in an agent, end to end: the real ``openai`` SDK against the strict
OpenAI-compatible server on 127.0.0.1 (400 for a tool call left unanswered, answered twice or
out of order), real tools, a durable log reopened as another process would.

Deferred: the turn pauses before the call that needs a decision (the calls before it run and
commit; it and the calls after it wait unstarted), the log is reopened, the decision is
recorded and the turn resumes. Inline: an async callback decides while the step waits.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import openai
import pytest
import trio

import trio_harness as th
from trio_harness.lowlevel import check_log
from trio_harness.mcp import open_stdio
from trio_harness.providers import openai as oai

from ..mcp.connect import BOUND_S, SERVER
from .strict_server import Policy, StrictServer, conversation_problems

READ_A = ("read_note", '{"name": "a"}')
WRITE_B = ("write_note", '{"name": "b", "text": "B"}')
READ_C = ("read_note", '{"name": "c"}')
ONE_WRITE = Policy(first=[READ_A, WRITE_B, READ_C], answer="Noted.")


class Notes:
    """The tools: ``read_note`` (parallel) and ``write_note`` (needs approval); every body run
    is recorded in ``runs``."""

    def __init__(self, when: th.agent.ApprovalRule = True) -> None:
        self.notes = {"a": "A", "c": "C"}
        self.runs: list[tuple[str, Any]] = []

        @th.tool(parallel=True)
        async def read_note(name: str) -> str:
            """Read a note."""
            self.runs.append(("read_note", name))
            return self.notes.get(name, "(none)")

        @th.tool(needs_approval=when)
        async def write_note(name: str, text: str) -> str:
            """Write a note."""
            self.runs.append(("write_note", (name, text)))
            self.notes[name] = text
            return f"saved {name}"

        self.tools = [read_note, write_note]


def sdk(server: StrictServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.url, api_key="sk-test", max_retries=0)


async def run_agent(
    server: StrictServer, log: Path, notes: Notes, prompt: str | None, **options: Any
) -> tuple[th.TurnResult, th.agent.Agent]:
    async with sdk(server) as client:
        model = oai.ChatCompletionsModel(client, "m", system="Keep notes.")
        async with th.open_agent(log, model, notes.tools, **options) as agent:
            result = await agent.run(prompt)
    return result, agent


def check(log: Path, server: StrictServer) -> list[th.log.SessionEvent]:
    events = th.log.load_session_log(log).events
    assert server.rejections == []
    assert check_log([event.to_json() for event in events]) == []
    assert th.log.check_replay(events).valid
    assert conversation_problems(list(th.agent.read_conversation(events).messages)) == []
    return list(events)


def tool_messages(server: StrictServer) -> list[tuple[str, str]]:
    last = server.requests[-1]["messages"]
    return [(m["tool_call_id"], m["content"]) for m in last if m["role"] == "tool"]


async def reopen(log: Path, notes: Notes, server: StrictServer) -> Any:
    """The agent of ``log`` opened again (as a new process would), inside its blocks."""
    client = sdk(server)
    model = oai.ChatCompletionsModel(client, "m", system="Keep notes.")
    return client, th.open_agent(log, model, notes.tools)


async def test_a_paused_turn_resumes_after_reopening_and_approval(tmp_path: Path) -> None:
    log = tmp_path / "agent.jsonl"
    notes = Notes()
    with StrictServer(ONE_WRITE) as server:
        result, _ = await run_agent(server, log, notes, "go")
        assert result.stop == "paused"
        (waiting,) = result.pending
        assert (waiting.name, waiting.index, waiting.decision) == ("write_note", 1, None)
        assert waiting.reason == 'tool "write_note" needs approval'
        # The call before it ran and committed; it and the call after it never started.
        assert notes.runs == [("read_note", "a")]
        assert len(server.requests) == 1

        client, opening = await reopen(log, notes, server)
        async with client, opening as agent:
            assert agent.pending == (waiting,)
            assert "paused: 1 call(s) waiting for approval: write_note" in str(agent.recovery)
            with pytest.raises(th.agent.PendingApprovalError, match="decide write_note"):
                await agent.run()
            with pytest.raises(th.agent.PendingApprovalError):
                await agent.run("something else")
            decided = agent.approve(waiting.call_id)
            assert decided.decision == th.agent.ApprovalDecision(approved=True)
            with pytest.raises(ValueError, match="decided already"):
                agent.reject(waiting.call_id)
            assert agent.approve(waiting.call_id) == decided  # a retry: recorded once
            result = await agent.run()
        assert (result.stop, result.text) == ("done", "Noted.")
        assert notes.runs == [("read_note", "a"), ("write_note", ("b", "B")), ("read_note", "c")]
        ids = [call_id for call_id, _ in tool_messages(server)]
        assert [content for _, content in tool_messages(server)] == ["A", "saved b", "C"]
        assert ids[1] == waiting.call_id
        events = check(log, server)
    kinds = [e.type for e in events if e.type.startswith("approval/")]
    assert kinds == ["approval/pending", "approval/decision"]
    ends = [e.data["stop"] for e in events if e.type == th.agent.TURN_END_EVENT]
    assert ends == ["paused", "done"]


async def test_a_rejection_reaches_the_model_with_its_message(tmp_path: Path) -> None:
    log = tmp_path / "agent.jsonl"
    notes = Notes()
    with StrictServer(ONE_WRITE) as server:
        result, _ = await run_agent(server, log, notes, "go")
        client, opening = await reopen(log, notes, server)
        async with client, opening as agent:
            agent.reject(result.pending[0], message="not today")
            result = await agent.run()
        assert result.stop == "done"
        assert [content for _, content in tool_messages(server)] == [
            "A",
            'Error: the user rejected tool "write_note": not today',
            "C",
        ]
        check(log, server)
    assert ("write_note", ("b", "B")) not in notes.runs
    assert notes.notes == {"a": "A", "c": "C"}


async def test_edited_arguments_are_validated_and_run(tmp_path: Path) -> None:
    log = tmp_path / "agent.jsonl"
    notes = Notes()
    with StrictServer(ONE_WRITE) as server:
        result, _ = await run_agent(server, log, notes, "go")
        client, opening = await reopen(log, notes, server)
        async with client, opening as agent:
            with pytest.raises(ValueError, match='edited arguments of tool "write_note"'):
                agent.approve(result.pending[0], arguments={"name": "b"})
            assert agent.pending[0].decision is None  # nothing recorded
            agent.approve(result.pending[0], arguments={"name": "b", "text": "edited"})
            result = await agent.run()
        assert result.stop == "done"
        events = check(log, server)
    assert notes.notes["b"] == "edited"
    assert ("write_note", ("b", "edited")) in notes.runs
    calls = [e.data for e in events if e.type == "tool/call" and e.data.name == "write_note"]
    assert [call.arguments for call in calls] == ['{"name":"b","text":"edited"}']


async def test_a_predicate_over_validated_arguments_selects_the_calls(tmp_path: Path) -> None:
    # Only writes to "b" need approval: the other write runs at once, in model order.
    policy = Policy(
        first=[("write_note", '{"name": "x", "text": "X"}'), WRITE_B, READ_C], answer="ok"
    )
    log = tmp_path / "agent.jsonl"
    notes = Notes(when=lambda args: args["name"] == "b" and "b is precious")
    with StrictServer(policy) as server:
        result, _ = await run_agent(server, log, notes, "go")
        assert [(p.index, p.reason) for p in result.pending] == [(1, "b is precious")]
        assert notes.runs == [("write_note", ("x", "X"))]
        client, opening = await reopen(log, notes, server)
        async with client, opening as agent:
            agent.approve(agent.pending[0])
            result = await agent.run()
        assert result.stop == "done"
        check(log, server)
    assert notes.runs[1:] == [("write_note", ("b", "B")), ("read_note", "c")]


async def test_inline_decisions_are_asked_in_model_order(tmp_path: Path) -> None:
    policy = Policy(
        first=[WRITE_B, READ_A, ("write_note", '{"name": "d", "text": "D"}')], answer="ok"
    )
    asked: list[th.agent.PendingCall] = []

    async def decide(call: th.agent.PendingCall) -> th.agent.ApprovalDecision:
        asked.append(call)
        await trio.lowlevel.checkpoint()
        if call.arguments == '{"name":"b","text":"B"}':
            return th.agent.ApprovalDecision.approve()
        return th.agent.ApprovalDecision.reject("d stays empty")

    log = tmp_path / "agent.jsonl"
    notes = Notes()
    with StrictServer(policy) as server:
        result, _ = await run_agent(server, log, notes, "go", approval=decide)
        assert result.stop == "done"
        assert [(c.name, c.arguments, c.reason) for c in asked] == [
            ("write_note", '{"name":"b","text":"B"}', 'tool "write_note" needs approval'),
            ("write_note", '{"name":"d","text":"D"}', 'tool "write_note" needs approval'),
        ]
        assert [content for _, content in tool_messages(server)] == [
            "saved b",
            "A",
            'Error: the user rejected tool "write_note": d stays empty',
        ]
        events = check(log, server)
    assert notes.runs == [("write_note", ("b", "B")), ("read_note", "a")]
    records = [(e.type, e.data.get("approved")) for e in events if e.type.startswith("approval/")]
    assert records == [
        ("approval/pending", None),
        ("approval/decision", True),
        ("approval/pending", None),
        ("approval/decision", False),
    ]


async def test_an_abort_while_the_decision_waits_answers_the_call_unstarted(
    tmp_path: Path,
) -> None:
    # The abort comes while the callback waits (Ctrl-C under abort_on_sigint sets it): the
    # wait is cancelled, the call is answered ABORTED_BEFORE_DISPATCH, nothing is recorded as
    # decided, and the next turn's conversation is accepted.
    abort = trio.Event()

    async def decide(call: th.agent.PendingCall) -> th.agent.ApprovalDecision:
        if not abort.is_set():
            abort.set()
            await trio.sleep_forever()
        return th.agent.ApprovalDecision.approve()

    log = tmp_path / "agent.jsonl"
    notes = Notes()
    with StrictServer(ONE_WRITE) as server:
        async with sdk(server) as client:
            model = oai.ChatCompletionsModel(client, "m", system="Keep notes.")
            async with th.open_agent(log, model, notes.tools, approval=decide) as agent:
                result = await agent.run("go", abort=abort)
                assert result.stop == "aborted"
                codes = [r.result.error.info.code for r in result.results if r.result.error]
                assert codes == ["ABORTED_BEFORE_DISPATCH", "ABORTED_BEFORE_DISPATCH"]
                again = await agent.run("again", abort=trio.Event())
        assert again.stop == "done"
        events = check(log, server)
    # Only the second turn's write ran (approved); the first was never decided.
    assert notes.runs.count(("write_note", ("b", "B"))) == 1
    records = [(e.type, e.data.get("approved")) for e in events if e.type.startswith("approval/")]
    assert records == [
        ("approval/pending", None),
        ("approval/pending", None),
        ("approval/decision", True),
    ]


async def test_an_mcp_server_marked_all_but_read_only_pauses_at_its_write(
    tmp_path: Path,
) -> None:
    # A real MCP server (tests/mcp/server_app.py): `search` says readOnlyHint, `write` does not.
    policy = Policy(
        first=[("srv_search", '{"query": "milk"}'), ("srv_write", '{"tag": "t1"}')], answer="ok"
    )
    log = tmp_path / "agent.jsonl"
    with StrictServer(policy) as server, trio.fail_after(BOUND_S):
        async with sdk(server) as client:
            model = oai.ChatCompletionsModel(client, "m")
            async with (
                th.open_agent(log, model, []) as agent,
                open_stdio(
                    agent.runtime, sys.executable, str(SERVER), "stdio", prefix="srv_"
                ) as files,
            ):
                remove = agent.require_approval(files, unless_read_only=True)
                result = await agent.run("go")
                assert [p.name for p in result.pending] == ["srv_write"]
                agent.reject(result.pending[0], message="read only today")
                result = await agent.run()
                assert result.stop == "done"
                remove()
        contents = [content for _, content in tool_messages(server)]
        assert contents[0].startswith("found milk")
        assert contents[1] == 'Error: the user rejected tool "srv_write": read only today'
        check(log, server)
