"""``check-log`` on hostile and unusual logs: one message and exit 2 for what is not a log, every
log the library writes readable, and linear work however the skipped pairs fall."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import trio

import trio_harness as th
from trio_harness._testing import checklog
from trio_harness._testing.checklog import LogFormatError, check_log, check_log_text


def run_check_log(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trio_harness", "check-log", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def call(seq: int, call_id: str, turn: Any = 0, step: Any = 0) -> dict[str, Any]:
    return {
        "seq": seq,
        "type": "tool/call",
        "data": {"turn": turn, "step": step, "callId": call_id, "name": "t", "arguments": "{}"},
    }


def result(seq: int, call_id: str, cites: int, code: str | None = None) -> dict[str, Any]:
    text = {
        None: "done",
        "ABORTED": "Error: tool call aborted",
        "ABORTED_BEFORE_DISPATCH": "Error: tool call aborted before dispatch",
    }[code]
    data: dict[str, Any] = {
        "turn": 0,
        "step": 0,
        "message": {
            "role": "user",
            "source": {"kind": "tool", "callId": call_id},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "content": [{"type": "text", "text": text}],
                    "isError": code is not None,
                }
            ],
        },
    }
    if code is not None:
        data["error"] = {"name": "AbortError", "code": code}
    return {"seq": seq, "type": "tool/result", "data": data, "sourceEventSeqs": [cites]}


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (call(0, "a", turn=[1]), "line 1: tool/call data.turn must be an integer"),
        (call(0, "a", step={"x": 1}), "line 1: tool/call data.step must be an integer"),
        (call(0, "a", turn=True), "line 1: tool/call data.turn must be an integer"),
    ],
)
def test_an_unhashable_turn_is_one_message_and_exit_2(
    tmp_path: Path, event: dict[str, Any], message: str
) -> None:
    with pytest.raises(LogFormatError, match=re.escape(message)):
        check_log_text(json.dumps(event) + "\n")
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(event) + "\n", encoding="utf-8")
    done = run_check_log(path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"python -m trio_harness check-log: {path}: {message}\n"


def test_a_result_with_an_unhashable_turn_or_error_code_is_no_crash() -> None:
    bad_turn = result(1, "a", 0)
    bad_turn["data"]["turn"] = [0]
    with pytest.raises(LogFormatError, match=r"tool/result data\.turn must be an integer"):
        check_log([call(0, "a"), bad_turn])
    odd_code = result(1, "a", 0, "ABORTED")
    odd_code["data"]["error"]["code"] = ["ABORTED"]
    assert check_log([call(0, "a"), odd_code]) == []
    elsewhere = result(1, "a", 0, "ABORTED_BEFORE_DISPATCH")
    elsewhere["data"]["step"] = 7  # a skipped pair whose result names another step
    assert [v.rule for v in check_log([call(0, "a"), elsewhere])] == ["cites-call"]


async def test_every_log_the_library_writes_is_readable(tmp_path: Path) -> None:
    # Deep data (an app event and a tool result), as a durable log and as Session.to_jsonl.
    deep: Any = "leaf"
    for _ in range(5000):
        deep = [deep]

    async def body(args: Any, ctx: Any) -> Any:
        return deep

    runtime = th.ToolRuntime()
    runtime.register(
        th.define_tool(
            name="deep",
            description="returns a deep value",
            parameters={},
            output=th.ToolOutput(
                schema={"type": "json"},
                render=lambda args, value: [{"type": "text", "text": "x", "v": value}],
            ),
            execute=body,
        )
    )
    path = tmp_path / "durable.jsonl"
    with th.log.DurableSession.open(path) as session:
        session.append("app/note", {"deep": deep})
        await th.execute_tool_calls(runtime, session, [th.ToolCallBlock("c1", "deep", "{}")])
        text = session.to_jsonl()
    plain = tmp_path / "plain.jsonl"
    plain.write_text(text, encoding="utf-8")
    for log in (path, plain):
        done = await trio.to_thread.run_sync(run_check_log, log)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr[-500:]
        assert done.stdout == f"{log}: ok\n"


def skipped_pairs_after_an_unanswered_call(pairs: int) -> list[dict[str, Any]]:
    # Call "open" is never answered, so no skipped pair may start skipping: each one used to
    # rescan every earlier call of the step.
    events = [call(0, "open")]
    for number in range(pairs):
        seq = len(events)
        events.append(call(seq, f"c{number}"))
        events.append(result(seq + 1, f"c{number}", seq, "ABORTED_BEFORE_DISPATCH"))
    return events


def lines_run(function: Callable[[], object]) -> int:
    """How many lines of checklog.py ``function`` runs (a deterministic measure of work)."""
    count = 0
    target = checklog.__file__

    def local(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code.co_filename == target else None

    sys.settrace(trace)
    try:
        function()
    finally:
        sys.settrace(None)
    return count


def test_check_log_is_linear_in_skipped_pairs_after_an_unanswered_call() -> None:
    small = skipped_pairs_after_an_unanswered_call(400)
    large = skipped_pairs_after_an_unanswered_call(800)
    violations = check_log(large)
    assert [v.rule for v in violations] == ["unpaired"]
    ratio = lines_run(lambda: check_log(large)) / lines_run(lambda: check_log(small))
    assert ratio < 2.2, ratio
    # The size from the report (20,000 pairs), for the record: one violation, the open call.
    assert len(check_log(skipped_pairs_after_an_unanswered_call(20_000))) == 1
