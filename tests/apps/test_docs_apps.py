"""The functions the agent tutorial and the provider how-to define, run through the real SDKs
against the scripted server (``tests/test_docs.py`` only executes the pages' blocks, which
define these functions without calling a real API)."""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
import trio

import trio_harness as th
from trio_harness.lowlevel import check_log

from ..mcp.connect import SERVER as MCP_SERVER
from .server import (
    Json,
    ScriptedServer,
    Sse,
    anthropic_message,
    chat_chunks,
    chat_completion,
    response,
)
from .strict_server import Policy, StrictServer

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def load(page: str) -> dict[str, Any]:
    """Execute a page's python blocks in order, as tests/test_docs.py does; return the namespace."""
    namespace: dict[str, Any] = {"__name__": f"docs_{page}"}
    for index, block in enumerate(FENCE.findall((DOCS / page).read_text(encoding="utf-8"))):
        exec(compile(block, f"{page}[python block {index}]", "exec"), namespace)
    return namespace


def openai_client(server: ScriptedServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)


READ_THEN_ANSWER = [
    Json(
        chat_completion(
            tool_calls=[("c1", "read", '{"path":"a.txt"}'), ("c2", "read", '{"path":"b.txt"}')]
        )
    ),
    Json(chat_completion(content="a is alpha, b is bravo")),
]


def test_howto_chat_turn_and_the_hand_written_loop() -> None:
    page = load("howto-providers.md")
    for function in (page["chat_turn"], page["chat_loop_by_hand"]):

        async def run(function: Any = function) -> str:
            async with openai_client(server) as client:
                text: str = await function(client, "read both")
                return text

        with ScriptedServer(READ_THEN_ANSWER) as server:
            assert trio.run(run) == "a is alpha, b is bravo"
        tool_messages = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
        assert tool_messages == [
            {"role": "tool", "tool_call_id": "c1", "content": "alpha"},
            {"role": "tool", "tool_call_id": "c2", "content": "bravo"},
        ]
        assert server.requests[0].body["tools"][0]["function"]["strict"] is True


def test_howto_chat_stream() -> None:
    page = load("howto-providers.md")
    printed: list[str] = []
    events = chat_chunks(
        content=["Reading ", "a."], tool_calls=[("c1", "read", ['{"path"', ':"a.txt"}'])]
    )

    async def run() -> Any:
        async with openai_client(server) as client:
            return await page["chat_stream"](client, "read a", on_text=printed.append)

    with ScriptedServer([Sse(events)]) as server:
        message, calls = trio.run(run)
    assert printed == ["Reading ", "a."]
    assert message["content"] == "Reading a."
    assert [(c.id, c.name, c.arguments) for c in calls] == [("c1", "read", '{"path":"a.txt"}')]


def test_howto_responses_turn() -> None:
    page = load("howto-providers.md")
    script = [
        Json(response(tool_calls=[("c1", "write", '{"path":"c.txt","text":"charlie"}')])),
        Json(response(text="written")),
    ]

    async def run() -> str:
        async with openai_client(server) as client:
            text: str = await page["responses_turn"](client, "write c")
            return text

    with ScriptedServer(script) as server:
        assert trio.run(run) == "written"
    assert page["FILES"]["c.txt"] == "charlie"
    assert server.requests[1].body["input"][-1] == {
        "type": "function_call_output",
        "call_id": "c1",
        "output": "wrote c.txt",
    }


def test_howto_anthropic_turn() -> None:
    page = load("howto-providers.md")
    script = [
        Json(anthropic_message(tool_uses=[("t1", "read", {"path": "b.txt"})])),
        Json(anthropic_message(text="bravo")),
    ]

    async def run() -> str:
        async with anthropic.AsyncAnthropic(
            base_url=server.url, api_key="test", max_retries=0
        ) as client:
            text: str = await page["anthropic_turn"](client, "read b")
            return text

    with ScriptedServer(script) as server:
        assert trio.run(run) == "bravo"
    assert server.requests[0].body["system"] == "Be brief."
    assert server.requests[1].body["messages"][-1]["content"][0]["content"] == [
        {"type": "text", "text": "bravo"}
    ]


def test_howto_deepseek_client(monkeypatch: pytest.MonkeyPatch) -> None:
    page = load("howto-providers.md")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek")

    async def run() -> tuple[str, str]:
        async with page["deepseek_client"]() as client:
            return str(client.base_url), client.api_key

    assert trio.run(run) == ("https://api.deepseek.com", "sk-deepseek")


def test_tutorial_real_model_section(monkeypatch: pytest.MonkeyPatch) -> None:
    page = load("agent-tutorial.md")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    script = [
        Json(chat_completion(tool_calls=[("c1", "read_note", '{"name":"shopping"}')])),
        Json(chat_completion(content="Milk and eggs.")),
    ]
    with ScriptedServer(script) as server:
        text = trio.run(
            lambda: page["chat_with_notes"]("shopping?", base_url=server.url + "/v1", model="m")
        )
    assert text == "Milk and eggs."
    assert server.requests[0].body["messages"][0] == {
        "role": "system",
        "content": "You keep the user's notes.",
    }
    assert server.requests[1].body["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "milk, eggs",
    }


# ---------------------------------------------------------------------------------------------
# docs/agent.md: the whole agent
# ---------------------------------------------------------------------------------------------

AGENT_POLICY = Policy(
    first=[
        ("search", '{"query": "milk"}'),
        ("files_search", '{"query": "milk"}'),
        ("plan", '{"day": "monday", "tasks": [{"title": "shop", "minutes": 30}]}'),
        ("weather", '{"city": "Paris"}'),
        ("write_note", '{"name": "monday", "text": "shop"}'),
        ("kv_write", '{"tag": "monday"}'),
        ("search", '{"query": "shop"}'),
    ],
    second=[("plan", '{"day": "tuesday", "tasks": "none"}')],
    answer="Planned monday.",
)


def agent_block() -> str:
    return FENCE.findall((DOCS / "agent.md").read_text(encoding="utf-8"))[2]


def glue_lines(block: str) -> list[str]:
    """The agent's lines beyond UI printing: not blank, not a comment, not a ``print`` call,
    not a loop whose body only prints."""
    lines = block.splitlines()
    counted = []
    for number, line in enumerate(lines):
        text = line.strip()
        if not text or text.startswith("#") or text.startswith("print("):
            continue
        if text.startswith("for ") and text.endswith(":"):
            indent = len(line) - len(line.lstrip())
            body = []
            for later in lines[number + 1 :]:
                if later.strip() and len(later) - len(later.lstrip()) <= indent:
                    break
                if later.strip():
                    body.append(later.strip())
            if body and all(item.startswith("print(") for item in body):
                continue
        counted.append(line)
    return counted


def test_the_agent_page_is_at_most_20_lines_of_glue() -> None:
    counted = glue_lines(agent_block())
    assert len(counted) <= 20, "\n".join(counted)
    page = (DOCS / "agent.md").read_text(encoding="utf-8")
    assert f"the agent is the third block: {len(counted)} lines" in page


def test_the_agent_page_runs_against_a_strict_server_with_two_mcp_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    page = load("agent.md")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    log = tmp_path / "agent.jsonl"
    server_command = [sys.executable, str(MCP_SERVER), "stdio"]
    options = {
        "model": "m",
        "log": str(log),
        "files_server": server_command,
        "kv_server": server_command,
    }
    with StrictServer(AGENT_POLICY) as server:
        trio.run(functools.partial(page["main"], ["plan monday"], base_url=server.url, **options))
        first = capsys.readouterr().out
        trio.run(functools.partial(page["main"], ["and again"], base_url=server.url, **options))
        second = capsys.readouterr().out
    assert server.rejections == []
    assert first.splitlines()[0] == f"{log}: new conversation"
    assert "   error weather" in first
    assert "   ok files_search" in first
    assert "   ok kv_write" in first
    assert "   error plan" in first  # the second step's bad nested arguments, reported
    assert "assistant> Planned monday." in first
    assert "(done after 2 steps)" in first
    assert second.splitlines()[0].startswith(f"{log}: resumed ")
    loaded = th.log.load_session_log(log)
    assert th.log.check_replay(loaded.events).valid
    assert check_log([event.to_json() for event in loaded.events]) == []
    assert page["NOTES"]["monday"] == "shop"
    # The second run sent the whole first conversation back.
    assert len(server.requests[3]["messages"]) > len(server.requests[2]["messages"])


def test_the_agent_page_streamed_prints_text_as_it_arrives_and_the_calls_known_so_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The same program with stream=True (issue 29): the reply's text comes as TextDelta events
    # (printed once, as it arrives) and StepStarted knows the first call only.
    page = load("agent.md")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server_command = [sys.executable, str(MCP_SERVER), "stdio"]
    options = {
        "model": "m",
        "log": str(tmp_path / "agent.jsonl"),
        "files_server": server_command,
        "kv_server": server_command,
        "stream": True,
    }
    with StrictServer(AGENT_POLICY) as server:
        trio.run(functools.partial(page["main"], ["plan monday"], base_url=server.url, **options))
        out = capsys.readouterr().out
    assert server.rejections == []
    assert all(request["stream"] is True for request in server.requests)
    lines = out.splitlines()
    assert "step 0 : search …" in lines
    assert "step 1 : plan …" in lines
    assert lines.count("assistant> Planned monday.") == 1
    assert "   ok files_search" in lines
    assert "(done after 2 steps)" in lines
