"""``check-log``: every log the reference writes is accepted; each broken log is caught at its seq."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import trio

import trio_harness as th
from tests.conformance.support import cli, kit_cases
from trio_harness._conformance import LogFormatError, check_log_text
from trio_harness.lowlevel import check_log


def test_every_log_in_the_kit_is_valid() -> None:
    for case in kit_cases():
        expected = case["expected"]
        raised = "raised" in expected["outcome"]
        assert check_log(expected["events"], allow_unpaired=raised) == [], case["id"]


def _render(args: Any, value: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": str(value)}]


def _runtime() -> th.ToolRuntime:
    runtime = th.ToolRuntime()
    for name, parallel in (("read", True), ("write", False)):

        async def body(args: Any, ctx: Any) -> str:
            await trio.sleep(args["s"])
            return ctx.call_id

        runtime.register(
            th.define_tool(
                name=name,
                description=name,
                parameters={"s": {"type": "number", "required": True}},
                output=th.ToolOutput(schema={"type": "string"}, render=_render),
                execute=body,
                is_concurrency_safe=(lambda args: True) if parallel else None,
            )
        )
    return runtime


async def _random_session(rng: random.Random) -> th.Session:
    runtime = _runtime()
    session = th.Session()
    for step in range(rng.randint(1, 4)):
        calls = [
            th.ToolCallBlock(
                f"s{step}c{i}",
                rng.choice(["read", "read", "write", "nope"]),
                json.dumps({"s": rng.randint(1, 50) / 10}),
            )
            for i in range(rng.randint(1, 7))
        ]
        abort = trio.Event()
        async with trio.open_nursery() as nursery:
            if rng.random() < 0.4:

                async def fire(at: float, event: trio.Event = abort) -> None:
                    await trio.sleep(at)
                    event.set()

                nursery.start_soon(fire, rng.randint(0, 60) / 10)
            await th.execute_tool_calls(
                runtime,
                session,
                calls,
                step=step,
                turn=rng.randint(0, 1),
                abort=abort,
                max_parallel_tool_calls=rng.randint(1, 4),
            )
            nursery.cancel_scope.cancel()
    return session


async def test_random_sessions_written_by_the_reference_are_valid(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    rng = random.Random(2026)
    for index in range(40):
        text = (await _random_session(rng)).to_jsonl()
        assert check_log_text(text) == [], index
    path = tmp_path / "session.jsonl"
    path.write_text(text, encoding="utf-8")
    status = th_main(["check-log", str(path)])
    assert status == 0


def th_main(argv: list[str]) -> int:
    from trio_harness.__main__ import main

    return main(argv)


def _call(seq: int, call_id: str, step: int = 0) -> dict[str, Any]:
    return {
        "seq": seq,
        "type": "tool/call",
        "data": {"turn": 0, "step": step, "callId": call_id, "name": "read", "arguments": "{}"},
    }


def _result(
    seq: int,
    call_id: str,
    cites: int,
    text: str = "ok",
    error: dict[str, str] | None = None,
    step: int = 0,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "turn": 0,
        "step": step,
        "message": {
            "role": "user",
            "source": {"kind": "tool", "callId": call_id},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "content": [{"type": "text", "text": text}],
                    "isError": error is not None,
                }
            ],
        },
    }
    if error is not None:
        data["error"] = error
    return {"seq": seq, "type": "tool/result", "sourceEventSeqs": [cites], "data": data}


SKIPPED = {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}
SKIPPED_TEXT = "Error: tool call aborted before dispatch"


def test_a_hand_written_valid_log_with_skipped_pairs() -> None:
    log = [
        _call(0, "a"),
        _call(1, "b"),
        _result(2, "a", 0),
        _result(3, "b", 1, "Error: tool call aborted", {"name": "AbortError", "code": "ABORTED"}),
        _call(4, "c"),
        _result(5, "c", 4, SKIPPED_TEXT, SKIPPED),
        _call(6, "d"),
        _result(7, "d", 6, SKIPPED_TEXT, SKIPPED),
        {"seq": 8, "type": "user/message", "data": {"text": "next"}},
    ]
    assert check_log(log) == []


BROKEN: list[tuple[str, list[dict[str, Any]], int, str, str]] = [
    (
        "cites a later seq",
        [_result(0, "a", 1), _call(1, "a")],
        0,
        "cites-call",
        "cites seq 1, which is a later event",
    ),
    (
        "cites nothing",
        [_call(0, "a"), {**_result(1, "a", 0), "sourceEventSeqs": []}],
        1,
        "cites-call",
        "exactly one call seq",
    ),
    (
        "cites another call",
        [_call(0, "a"), _call(1, "b"), _result(2, "a", 0), _result(3, "b", 0)],
        3,
        "cites-call",
        "result of b cites the call of a (seq 0)",
    ),
    (
        "another step",
        [_call(0, "a"), _result(1, "a", 0, step=1)],
        1,
        "cites-call",
        "different steps",
    ),
    (
        "two results",
        [_call(0, "a"), _result(1, "a", 0), _result(2, "a", 0)],
        2,
        "one-result",
        "second result for call a (seq 0); the first is seq 1",
    ),
    (
        "completion order",
        [_call(0, "a"), _call(1, "b"), _result(2, "b", 1), _result(3, "a", 0)],
        3,
        "model-order",
        "result of a (call seq 0) committed after the result of a later call (call seq 1)",
    ),
    (
        "skipped pair with the wrong text",
        [
            _call(0, "a"),
            _result(1, "a", 0, SKIPPED_TEXT, SKIPPED),
            _call(2, "b"),
            _result(3, "b", 2, "Error: tool call aborted", SKIPPED),
        ],
        3,
        "abort-shape",
        "must show 'Error: tool call aborted before dispatch'",
    ),
    (
        "abort result without AbortError",
        [
            _call(0, "a"),
            _result(1, "a", 0, "Error: tool call aborted", {"name": "Error", "code": "ABORTED"}),
        ],
        1,
        "abort-shape",
        "must carry name AbortError",
    ),
    (
        "a call runs after skipping began",
        [
            _call(0, "a"),
            _result(1, "a", 0, SKIPPED_TEXT, SKIPPED),
            _call(2, "b"),
            _result(3, "b", 2),
        ],
        3,
        "abort-shape",
        "is not a skipped pair, but skipping began at seq 0",
    ),
    (
        "unpaired",
        [_call(0, "a"), _call(1, "b"), _result(2, "a", 0)],
        1,
        "unpaired",
        "call b has no result",
    ),
    ("seq gap", [_call(0, "a"), _result(2, "a", 0)], 2, "seq", "seq 2 where 1 was due"),
]


@pytest.mark.parametrize(
    ("log", "seq", "rule", "text"),
    [entry[1:] for entry in BROKEN],
    ids=[entry[0] for entry in BROKEN],
)
def test_each_broken_log_is_caught(
    log: list[dict[str, Any]], seq: int, rule: str, text: str
) -> None:
    violations = check_log(log)
    [primary] = [v for v in violations if (v.seq, v.rule) == (seq, rule)]
    assert text in primary.message
    # A broken citation also leaves its call without a result; nothing else is reported.
    assert all(v is primary or v.rule == "unpaired" for v in violations)


def test_unpaired_calls_may_be_allowed_after_a_scheduler_failure() -> None:
    log = [_call(0, "a"), _call(1, "b"), _result(2, "a", 0)]
    assert check_log(log, allow_unpaired=True) == []


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('{"seq":0,"type":"tool/call","data":{"callId":"a"}}\n\nnot json\n', 3, "line 3: not JSON"),
        ("[1]\n", 1, "line 1: an event must be a JSON object"),
        ('{"seq":0,"type":"tool/call"}\n', 1, 'line 1: event has no "data"'),
        ('{"seq":"0","type":"x","data":{}}\n', 1, 'line 1: "seq" must be an integer'),
        ('{"seq":0,"type":"tool/call","data":{"callId":1}}\n', 1, "line 1: tool/call data must be"),
        ('{"seq":0,"type":"tool/result","data":{}}\n', 1, "line 1: tool/result data must carry"),
    ],
)
def test_malformed_input_names_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(LogFormatError) as caught:
        check_log_text(text)
    assert caught.value.line == line
    assert str(caught.value).startswith(message)


def test_the_cli_reports_violations_and_malformed_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        "".join(
            json.dumps(event) + "\n"
            for event in [_call(0, "a"), _call(1, "b"), _result(2, "b", 1), _result(3, "a", 0)]
        ),
        encoding="utf-8",
    )
    status, out, _ = cli(capsys, "check-log", str(broken))
    assert status == 1
    assert f"{broken}: seq 3: [model-order]" in out
    assert "1 violation(s)" in out
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text('{"seq": 0}\n', encoding="utf-8")
    status, out, err = cli(capsys, "check-log", str(garbage))
    assert status == 2
    assert err == f'python -m trio_harness check-log: {garbage}: line 1: event has no "type"\n'
    status, _, err = cli(capsys, "check-log", str(tmp_path / "missing.jsonl"))
    assert status == 2
    assert "cannot read" in err
    assert "Traceback" not in err
