"""``examples/agent.py`` as a subprocess against the scripted server: a multi-step conversation
with a bad call the model repairs, the saved session resumed, ``--replay``, and Ctrl-C."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from .process import spawn
from .server import Json, ScriptedServer, Sse, chat_chunks, chat_completion

AGENT = str(Path(__file__).resolve().parents[2] / "examples" / "agent.py")


def agent_args(server: ScriptedServer, tmp_path: Path, *extra: str) -> list[str]:
    return [
        AGENT,
        "--base-url",
        server.url + "/v1",
        "--model",
        "test-model",
        "--sandbox",
        str(tmp_path / "sandbox"),
        "--session",
        str(tmp_path / "session.jsonl"),
        "--write-delay",
        "0",
        "--max-retries",
        "0",
        *extra,
    ]


ENV = {"OPENAI_API_KEY": "sk-test"}


@pytest.mark.slow
async def test_a_multi_step_conversation_with_a_repaired_call(tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (sandbox / "notes.txt").write_text("buy milk\ncall bob\n")
    (sandbox / "todo.txt").write_text("fix bike\n")
    script = [
        # Step 1: three parallel reads, then a write with a wrong argument type.
        Json(
            chat_completion(
                tool_calls=[
                    ("c1", "list_dir", "{}"),
                    ("c2", "read_file", '{"path": "notes.txt"}'),
                    ("c3", "search", '{"text": "bike"}'),
                    ("c4", "write_file", '{"path": "all.txt", "text": ["buy milk"]}'),
                ]
            )
        ),
        # Step 2: the model repairs the write.
        Json(
            chat_completion(
                content="Fixing the write.",
                tool_calls=[
                    (
                        "c5",
                        "write_file",
                        '{"path": "all.txt", "text": "buy milk\\ncall bob\\nfix bike\\n"}',
                    )
                ],
            )
        ),
        # Step 3: a streamed final answer is not used here; plain text ends the turn.
        Json(chat_completion(content="Merged everything into all.txt.")),
    ]
    with ScriptedServer(script) as server:
        async with spawn(
            agent_args(server, tmp_path, "--prompt", "merge my lists"), env=ENV
        ) as child:
            code, out, err = await child.finish()
    assert code == 0, err
    assert (sandbox / "all.txt").read_text() == "buy milk\ncall bob\nfix bike\n"
    lines = out.splitlines()
    assert lines[0] == "you> merge my lists"
    assert lines[1] == (
        'step 1: [list_dir({}) || read_file({"path": "notes.txt"}) || search({"text": "bike"})]'
        '  ->  [write_file({"path": "all.txt", "text": ["buy milk"]})]'
    )
    assert "error write_file (c4" in out
    assert '"text" must be a string' in out
    assert "assistant> Fixing the write." in lines
    assert "ok write_file (c5" in out
    assert lines[-1] == "assistant> Merged everything into all.txt."
    # What the model was sent: the key, the tools, and the failed result it repaired from.
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    second = server.requests[1].body
    assert [t["function"]["name"] for t in second["tools"]] == [
        "read_file",
        "list_dir",
        "search",
        "write_file",
    ]
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["c1", "c2", "c3", "c4"]
    assert json.loads(tool_messages[0]["content"]) == ["notes.txt", "todo.txt"]
    assert tool_messages[1]["content"] == "buy milk\ncall bob\n"
    assert tool_messages[2]["content"] == '["todo.txt:1: fix bike"]'
    assert tool_messages[3]["content"] == ('Error: invalid arguments: "text" must be a string')

    # The session resumes: a second run sends the whole conversation first.
    script = [Json(chat_completion(content="You had three lists."))]
    with ScriptedServer(script) as server:
        async with spawn(
            agent_args(server, tmp_path, "--prompt", "what did we do?"), env=ENV
        ) as child:
            code, out, err = await child.finish()
    assert code == 0, err
    assert out.splitlines()[0].startswith("(resumed 10 messages")
    sent = server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert sent[-1] == {"role": "user", "content": "what did we do?"}

    # --replay prints the saved session without a server.
    async with spawn([AGENT, "--replay", str(tmp_path / "session.jsonl")]) as child:
        code, out, err = await child.finish()
    assert code == 0, err
    replayed = out.splitlines()
    assert replayed[0] == "you> merge my lists"
    assert "  call write_file (c4) " + '{"path": "all.txt", "text": ["buy milk"]}' in replayed
    assert '  error (c4): Error: invalid arguments: "text" must be a string' in replayed
    assert "-- turn 0 ended: done" in replayed
    assert replayed[-2:] == ["assistant> You had three lists.", "-- turn 1 ended: done"]


async def test_ctrl_c_aborts_a_slow_write_and_keeps_the_session(tmp_path: Path) -> None:
    script = [
        Sse(
            chat_chunks(
                content=["Writing."],
                tool_calls=[
                    ("c1", "write_file", ['{"path": "a.txt", ', '"text": "A"}']),
                    ("c2", "read_file", ['{"path": "a.txt"}']),
                ],
            )
        ),
        Sse(chat_chunks(content=["Stopped as asked."])),
    ]
    with ScriptedServer(script) as server:
        args = agent_args(server, tmp_path, "--stream", "--prompt", "write a", "--prompt", "ok?")
        args[args.index("--write-delay") + 1] = "60"
        async with spawn(args, env=ENV) as child:
            await child.wait_for("started write_file (c1)")
            child.process.send_signal(signal.SIGINT)
            code, out, err = await child.finish()
    assert code == 0, err
    assert "aborting the turn... (Ctrl-C again to quit)" in out
    assert "  aborted write_file (c1)" in out
    assert "  aborted_before_dispatch read_file (c2)" in out
    assert "(turn ended: aborted after 1 steps)" in out
    # The next prompt runs a normal turn, with both calls answered in the conversation.
    assert out.splitlines()[-1] == "assistant> Stopped as asked."
    tool_messages = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert tool_messages == [
        {"role": "tool", "tool_call_id": "c1", "content": "Error: tool call aborted"},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": "Error: tool call aborted before dispatch",
        },
    ]
    assert not (tmp_path / "sandbox" / "a.txt").exists()
    saved = (tmp_path / "session.jsonl").read_text()
    assert '"code":"ABORTED"' in saved


async def test_a_failed_request_is_reported_and_a_missing_key_refused(tmp_path: Path) -> None:
    script = [
        Json({"error": {"message": "model overloaded", "type": "server_error"}}, status=500),
        Json(chat_completion(content="Back again.")),
    ]
    with ScriptedServer(script) as server:
        args = agent_args(server, tmp_path, "--prompt", "hi", "--prompt", "again")
        async with spawn(args, env=ENV) as child:
            code, out, err = await child.finish()
        async with spawn(args, env={"OPENAI_API_KEY": ""}) as child:
            missing = await child.finish()
    assert code == 0, err
    assert "(model request failed: Error code: 500" in out
    assert out.splitlines()[-1] == "assistant> Back again."
    assert missing[0] == 2
    assert missing[2] == "set OPENAI_API_KEY to your API key (or use --api-key-env)\n"
