"""``kill -9`` of the real example agent at many instants, then resume, against a strict
OpenAI-compatible server on 127.0.0.1 (400 for missing, duplicate or out-of-order tool
responses), through the real ``openai`` SDK.

The agent is killed once the log has grown to each length a full run passes through (the
instants where a step waits for the model, a slow exclusive write, calls queued behind it, the
results being committed, ...). Every resumed conversation must be accepted, and every log must
be replay-valid and pass ``check-log``. The in-process test
``tests/apps/test_agent.py::test_resuming_after_a_crash_at_any_instant_gives_an_accepted_conversation``
covers every line boundary and mid-line cut exhaustively; this one is the real thing.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import trio

import trio_harness as th
from trio_harness.lowlevel import check_log

from .process import spawn
from .strict_server import Policy, StrictServer, conversation_problems

AGENT = str(Path(__file__).resolve().parents[2] / "examples" / "agent.py")
ENV = {"OPENAI_API_KEY": "sk-test"}

POLICY = Policy(
    first=[
        ("list_dir", "{}"),
        ("read_file", '{"path": "notes.txt"}'),
        ("search", '{"text": "milk"}'),
        ("write_file", '{"path": "a.txt", "text": "A"}'),  # exclusive, slow: a barrier
        ("read_file", '{"path": "a.txt"}'),
        ("read_file", '{"path": "missing.txt"}'),  # fails
        ("search", '{"text": "A"}'),
    ],
    second=[("write_file", '{"path": "b.txt", "text": "B"}')],
    answer="Wrote a.txt and b.txt.",
)


def args(server: StrictServer, root: Path, prompt: str, *, stream: bool = False) -> list[str]:
    return [
        AGENT,
        *(["--stream"] if stream else []),
        "--base-url",
        server.url,
        "--model",
        "m",
        "--sandbox",
        str(root / "sandbox"),
        "--log",
        str(root / "agent.jsonl"),
        "--write-delay",
        "0.15",
        "--max-retries",
        "0",
        "--approval",
        "off",
        "--prompt",
        prompt,
    ]


def lines_of(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.slow
@pytest.mark.parametrize("stream", [False, True])
async def test_kill_9_at_many_instants_then_resume_is_always_accepted(
    tmp_path: Path, stream: bool
) -> None:
    # Streamed, the calls run while the reply streams (a chunk every 10 ms): the kills also
    # land between a step's first tool events and its reply's record.
    with StrictServer(POLICY, delay=0.05, chunk_delay=0.01 if stream else 0.0) as server:
        # A full run: how many lines one turn writes.
        full = tmp_path / "full"
        (full / "sandbox").mkdir(parents=True)
        (full / "sandbox" / "notes.txt").write_text("milk\n")
        async with spawn(args(server, full, "go", stream=stream), env=ENV) as child:
            code, out, err = await child.finish()
        assert code == 0, err
        assert "assistant> Wrote a.txt and b.txt." in out
        total = lines_of(full / "agent.jsonl")
        assert total > 20
        if stream:
            # The first calls ran before their reply was recorded.
            kinds = [(e.type, e.data) for e in th.log.load_session_log(full / "agent.jsonl").events]
            first_call = next(i for i, (kind, _) in enumerate(kinds) if kind == "tool/call")
            first_reply = next(
                i
                for i, (kind, data) in enumerate(kinds)
                if kind == th.agent.CONVERSATION_EVENT and data["kind"] == "reply"
            )
            assert first_call < first_reply

        states: list[tuple[int, bool]] = []
        for target in range(1, total):
            root = tmp_path / f"kill-{target}"
            (root / "sandbox").mkdir(parents=True)
            (root / "sandbox" / "notes.txt").write_text("milk\n")
            log = root / "agent.jsonl"
            async with spawn(args(server, root, "go", stream=stream), env=ENV) as child:
                with trio.fail_after(30):
                    # Polls a file another process writes (no event to wait on), in real time.
                    while lines_of(log) < target and child.process.poll() is None:  # noqa: ASYNC110
                        await trio.sleep(0.001)
                child.process.send_signal(signal.SIGKILL)
                await child.process.wait()
            data = log.read_bytes()
            states.append((data.count(b"\n"), not data.endswith(b"\n")))
            # Resume: the same agent, a new request. The strict server rejects (400) any
            # conversation with a tool call left without its response.
            async with spawn(args(server, root, "again", stream=stream), env=ENV) as child:
                code, out, err = await child.finish()
            assert code == 0, (target, out, err)
            assert "(model request failed" not in out, (target, out)
            events = th.log.load_session_log(log).events
            assert th.log.check_replay(events).valid, target
            assert check_log([event.to_json() for event in events]) == [], target
            messages = list(th.agent.read_conversation(events).messages)
            assert conversation_problems(messages) == [], target
    assert server.rejections == []
    kills = len(states)
    distinct = len({lines for lines, _ in states})
    cut = sum(1 for _, partial in states if partial)
    print(f"\nkill -9 instants: {kills}; distinct log states: {distinct}; mid-line cuts: {cut}")
    print(f"requests: {len(server.requests)}; rejected: {len(server.rejections)}")
    assert kills == total - 1
