"""``examples/agent.py`` as a program (subprocess) against the scripted server: a multi-step
conversation with a bad call the model repairs, the durable log resumed, ``--replay``, Ctrl-C
(once: the turn; twice, or between turns: the program, with one line), an MCP server; and its
tools directly: the sandbox holds through symlinks, only regular files are read, bounded."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import trio

import trio_harness as th
from trio_harness.lowlevel import check_log

from ..mcp.connect import SERVER as MCP_SERVER
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
        "--log",
        str(tmp_path / "agent.jsonl"),
        "--write-delay",
        "0",
        "--max-retries",
        "0",
        "--approval",
        "off",  # writes run unasked here; tests/apps/test_approval_example.py asks
        *extra,
    ]


ENV = {"OPENAI_API_KEY": "sk-test"}


def assert_valid_log(path: Path) -> None:
    events = th.log.load_session_log(path).events
    assert th.log.check_replay(events).valid
    assert check_log([event.to_json() for event in events]) == []


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
    assert lines[0] == f"({tmp_path / 'agent.jsonl'}: new conversation)"
    assert lines[1] == "you> merge my lists"
    assert lines[2] == (
        'step 1: [list_dir({}) || read_file({"path": "notes.txt"}) || search({"text": "bike"})]'
        '  ->  [write_file({"path": "all.txt", "text": ["buy milk"]})]'
    )
    assert "error write_file (c4" in out
    assert '"text" must be a string' in out
    assert "assistant> Fixing the write." in lines
    assert "ok write_file (c5" in out
    assert lines[-1] == "assistant> Merged everything into all.txt."
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
    assert_valid_log(tmp_path / "agent.jsonl")

    # The log resumes: a second run sends the whole conversation first.
    script = [Json(chat_completion(content="You had three lists."))]
    with ScriptedServer(script) as server:
        async with spawn(
            agent_args(server, tmp_path, "--prompt", "what did we do?"), env=ENV
        ) as child:
            code, out, err = await child.finish()
    assert code == 0, err
    assert out.splitlines()[0] == f"({tmp_path / 'agent.jsonl'}: resumed 10 messages)"
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

    # --replay prints the saved log without a server.
    async with spawn([AGENT, "--replay", str(tmp_path / "agent.jsonl")]) as child:
        code, out, err = await child.finish()
    assert code == 0, err
    replayed = out.splitlines()
    assert replayed[0] == "you> merge my lists"
    assert "  call write_file (c4) " + '{"path": "all.txt", "text": ["buy milk"]}' in replayed
    assert '  error (c4): Error: invalid arguments: "text" must be a string' in replayed
    assert "-- turn 0 ended: done" in replayed
    assert replayed[-2:] == ["assistant> You had three lists.", "-- turn 1 ended: done"]


async def test_ctrl_c_aborts_a_slow_write_and_keeps_the_log(tmp_path: Path) -> None:
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
    assert "(turn ended: aborted after 1 step)" in out
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
    assert_valid_log(tmp_path / "agent.jsonl")


async def test_sigterm_aborts_a_slow_write_stops_the_agent_and_keeps_the_log(
    tmp_path: Path,
) -> None:
    # What `docker stop` and systemd send: the turn is aborted as by Ctrl-C (every call
    # answered in the log), then the program stops with one line and status 143.
    script = [
        Json(chat_completion(tool_calls=[("c1", "write_file", '{"path": "a", "text": "A"}')])),
        Json(chat_completion(content="not asked")),
    ]
    log = tmp_path / "agent.jsonl"
    with ScriptedServer(script) as server:
        args = agent_args(server, tmp_path, "--prompt", "write a", "--prompt", "more")
        args[args.index("--write-delay") + 1] = "60"
        async with spawn(args, env=ENV) as child:
            await child.wait_for("started write_file (c1)")
            child.process.send_signal(signal.SIGTERM)
            code, out, err = await child.finish()
        assert len(server.requests) == 1
    assert (code, err) == (143, "\nterminated\n")
    assert "aborting the turn... (Ctrl-C again to quit)" in out
    assert "  aborted write_file (c1)" in out
    assert not (tmp_path / "sandbox" / "a").exists()
    assert_valid_log(log)
    ends = [
        e.data for e in th.log.load_session_log(log).events if e.type == th.agent.TURN_END_EVENT
    ]
    assert [end["stop"] for end in ends] == ["aborted"]


async def test_ctrl_c_between_turns_quits_with_one_line_and_the_log_resumes(
    tmp_path: Path,
) -> None:
    script = [
        Json(chat_completion(tool_calls=[("c1", "write_file", '{"path": "a", "text": "A"}')])),
        Json(chat_completion(content="Resumed fine.")),
    ]
    log = tmp_path / "agent.jsonl"
    with ScriptedServer(script) as server:
        args = agent_args(server, tmp_path)  # no --prompt: requests come from stdin
        args[args.index("--write-delay") + 1] = "60"
        async with spawn(args, env=ENV, stdin=True) as child:
            await child.wait_for_prompt("you> ")
            assert child.process.stdin is not None
            await child.process.stdin.send_all(b"write a\n")
            await child.wait_for("started write_file (c1)")
            child.interrupt()  # aborts the turn
            await child.wait_for("(turn ended: aborted after 1 step)")
            await child.wait_for_prompt("you> ")  # back at the prompt
            child.interrupt()  # quits
            code, out, err = await child.finish()
        assert (code, err) == (130, "\ninterrupted; the log is saved\n")
        assert "Traceback" not in out
        assert_valid_log(log)
        async with spawn(agent_args(server, tmp_path, "--prompt", "again"), env=ENV) as child:
            code, out, err = await child.finish()
    assert code == 0, err
    assert out.splitlines()[-1] == "assistant> Resumed fine."
    sent = server.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
    assert sent[3]["content"] == "Error: tool call aborted"
    ends = [
        e.data for e in th.log.load_session_log(log).events if e.type == th.agent.TURN_END_EVENT
    ]
    assert [end["stop"] for end in ends] == ["aborted", "done"]


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
    assert_valid_log(tmp_path / "agent.jsonl")


async def test_an_mcp_server_adds_its_tools(tmp_path: Path) -> None:
    script = [
        Json(chat_completion(tool_calls=[("c1", "kv_search", '{"query": "milk"}')])),
        Json(chat_completion(content="Found it.")),
    ]
    mcp_log = tmp_path / "mcp.log"
    with ScriptedServer(script) as server:
        # The SDK passes servers a small safe environment only: the variable goes through env.
        command = f"env TEST_SERVER_STDERR='kv server up' {sys.executable} {MCP_SERVER} stdio"
        args = agent_args(
            server, tmp_path, "--mcp", f"kv={command}", "--mcp-log", str(mcp_log), "--prompt", "?"
        )
        async with spawn(args, env=ENV) as child:
            code, out, err = await child.finish()
    assert code == 0, err
    assert "kv server up" not in out + err
    assert "kv server up" in mcp_log.read_text()
    assert "ok kv_search (c1" in out
    names = [t["function"]["name"] for t in server.requests[0].body["tools"]]
    assert "kv_search" in names
    assert "read_file" in names


# ---------------------------------------------------------------------------------------------
# The example's tools, called directly
# ---------------------------------------------------------------------------------------------


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_agent", AGENT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def call(sandbox: Path, name: str, arguments: dict[str, Any], **options: Any) -> str:
    runtime = th.ToolRuntime()
    settings = {"write_delay": 0, "max_read": 1000, **options}
    tools = example().make_tools(
        sandbox, settings["write_delay"], settings["max_read"], approve_writes=False
    )
    for tool in tools:
        runtime.register(tool)
    outcome = await th.execute_tool_calls(
        runtime, th.Session(), [th.ToolCallBlock("c1", name, json.dumps(arguments))]
    )
    return th.providers.result_text(outcome.results[0])  # type: ignore[attr-defined]


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    root = tmp_path / "sandbox"
    root.mkdir()
    (root / "inside.txt").write_text("public needle\n")
    (tmp_path / "secret.txt").write_text("secret needle\n")
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    (root / "outdir").symlink_to(tmp_path)
    return root


async def test_search_never_reads_outside_the_sandbox_through_symlinks(sandbox: Path) -> None:
    with trio.fail_after(10):
        hits = json.loads(await call(sandbox, "search", {"text": "needle"}))
        assert hits == ["inside.txt:1: public needle"]
        assert await call(sandbox, "read_file", {"path": "escape.txt"}) == (
            "Error: escape.txt is outside the sandbox"
        )
        assert (await call(sandbox, "search", {"text": "needle", "path": "outdir"})).startswith(
            "Error: outdir is outside the sandbox"
        )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")
async def test_read_file_refuses_a_fifo_at_once_and_search_passes_it_over(sandbox: Path) -> None:
    os.mkfifo(sandbox / "pipe")
    with trio.fail_after(10):  # a blocking open would never return: no writer ever comes
        assert await call(sandbox, "read_file", {"path": "pipe"}) == (
            "Error: pipe is not a regular file"
        )
        assert json.loads(await call(sandbox, "search", {"text": "needle"})) == [
            "inside.txt:1: public needle"
        ]
        assert await call(sandbox, "write_file", {"path": "pipe", "text": "x"}) == (
            "Error: pipe is not a regular file"
        )


async def test_a_big_file_is_cut_with_a_note(sandbox: Path) -> None:
    (sandbox / "big.txt").write_text("x" * 5000)
    with trio.fail_after(10):
        text = await call(sandbox, "read_file", {"path": "big.txt"}, max_read=100)
    assert text == "x" * 100 + "\n[truncated: the first 100 of 5000 bytes]"
    assert await call(sandbox, "read_file", {"path": "inside.txt"}) == "public needle\n"
    assert await call(sandbox, "read_file", {"path": "."}) == "Error: sandbox is not a regular file"


async def test_an_abort_abandons_a_read_stuck_in_its_thread(sandbox: Path) -> None:
    # A read that never returns (a hung network file system, say): the abort does not wait
    # for the thread.
    module = example()
    released = threading.Event()
    entered = trio.Event()

    def stuck(path: Path, limit: int) -> tuple[bytes, int]:
        trio.from_thread.run_sync(entered.set)
        released.wait(30)
        return b"", 0

    module.read_regular = stuck
    runtime = th.ToolRuntime()
    for tool in module.make_tools(sandbox, 0, 1000):
        runtime.register(tool)
    abort = trio.Event()
    try:
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:

                async def abort_once_stuck() -> None:
                    await entered.wait()
                    abort.set()

                nursery.start_soon(abort_once_stuck)
                outcome = await th.execute_tool_calls(
                    runtime,
                    th.Session(),
                    [th.ToolCallBlock("c1", "read_file", '{"path": "inside.txt"}')],
                    abort=abort,
                )
    finally:
        released.set()
    assert outcome.aborted
    assert outcome.results[0].result.error is not None
    assert outcome.results[0].result.error.info is not None
    assert outcome.results[0].result.error.info.code == "ABORTED"
