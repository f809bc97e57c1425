"""``check-log`` judges the approval records: a real log of each mode passes, and each rule
catches the tampering it exists for (a call run before its decision, a rejected call that
succeeded, a second decision, a decision for no pending call, a malformed record, an inline
call run without approval)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import trio

import trio_harness as th
from trio_harness.lowlevel import check_log

from .strict_server import StrictServer
from .test_approval import ONE_WRITE, Notes, reopen, run_agent


def wire(log: Path) -> list[dict[str, Any]]:
    return [event.to_json() for event in th.log.load_session_log(log).events]


def renumbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # seqs follow file order again; cited call seqs follow their events.
    old_to_new = {event["seq"]: index for index, event in enumerate(events)}
    out = []
    for index, event in enumerate(events):
        event = {**event, "seq": index}
        if "sourceEventSeqs" in event:
            event["sourceEventSeqs"] = [old_to_new[s] for s in event["sourceEventSeqs"]]
        out.append(event)
    return out


def rules(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(v.rule, v.message) for v in check_log(events)]


async def deferred_log(tmp_path: Path, *, approve: bool) -> list[dict[str, Any]]:
    log = tmp_path / "agent.jsonl"
    notes = Notes()
    with StrictServer(ONE_WRITE) as server:
        result, _ = await run_agent(server, log, notes, "go")
        client, opening = await reopen(log, notes, server)
        async with client, opening as agent:
            if approve:
                agent.approve(result.pending[0])
            else:
                agent.reject(result.pending[0])
            await agent.run()
    return wire(log)


async def test_real_logs_pass_and_the_cli_says_so(tmp_path: Path) -> None:
    events = await deferred_log(tmp_path, approve=True)
    assert rules(events) == []
    done = await trio.run_process(
        [sys.executable, "-m", "trio_harness", "check-log", str(tmp_path / "agent.jsonl")],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.decode().endswith(": ok\n")


async def test_a_call_started_before_its_decision_is_caught(tmp_path: Path) -> None:
    events = await deferred_log(tmp_path, approve=True)
    decision = next(i for i, e in enumerate(events) if e["type"] == "approval/decision")
    moved = events.pop(decision)
    write = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "tool/result" and "saved b" in str(e["data"])
    )
    events.insert(write + 1, moved)
    assert ("approved-before-run", "call_2_1 started before its decision") in rules(
        renumbered(events)
    )


async def test_a_rejected_call_that_succeeded_is_caught(tmp_path: Path) -> None:
    events = await deferred_log(tmp_path, approve=True)
    for event in events:
        if event["type"] == "approval/decision":
            event["data"]["approved"] = False
    assert rules(events) == [("approved-before-run", "rejected call_2_1 succeeded")]


async def test_second_decisions_and_decisions_for_nothing_are_caught(tmp_path: Path) -> None:
    events = await deferred_log(tmp_path, approve=False)
    decision = next(e for e in events if e["type"] == "approval/decision")
    stray = {**decision, "data": {**decision["data"], "id": "call_9_9"}}
    bad = {**decision, "data": {**decision["data"], "approved": "yes"}}
    at = events.index(decision) + 1
    tampered = renumbered([*events[:at], decision, stray, bad, *events[at:]])
    assert [rule for rule, _ in rules(tampered)] == [
        "one-decision",
        "approval-cites-pending",
        "approval-shape",
    ]


async def test_an_inline_call_that_ran_without_approval_is_caught(tmp_path: Path) -> None:
    async def approve(call: th.agent.PendingCall) -> th.agent.ApprovalDecision:
        return th.agent.ApprovalDecision.approve()

    log = tmp_path / "agent.jsonl"
    with StrictServer(ONE_WRITE) as server:
        await run_agent(server, log, Notes(), "go", approval=approve)
    events = wire(log)
    assert rules(events) == []
    without = renumbered([e for e in events if e["type"] != "approval/decision"])
    assert rules(without) == [("approved-before-run", "call_2_1 ran without approval")]
