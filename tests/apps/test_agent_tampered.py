"""A tampered ``conversation/messages`` event in an agent's log (issue 32): ``open_agent_log``
and ``open_agent`` refuse it with a ``SessionLogError`` naming the line, the byte and the field
(as for a line the wire reader refuses), and ``salvage=True`` keeps the valid prefix."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import trio_harness as th

from .scripted_model import ScriptedModel
from .tools import file_tools


class Model(ScriptedModel):
    """A scripted model that keeps a conversation list, as ``open_agent`` needs."""

    def __init__(self, replies: list[Any]) -> None:
        super().__init__(replies)
        self.messages: list[Any] = []

    def add_user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    async def step(self, tools: Any) -> th.ModelStep:
        reply = await super().step(tools)
        self.messages.append({"role": "assistant", "content": reply.text})
        return reply

    def add_tool_results(self, results: Any) -> None:
        super().add_tool_results(results)
        self.messages.extend({"role": "tool", "id": r.call_id} for r in results)


CALLS = [("c1", "read", '{"path":"a"}'), ("c2", "write", '{"path":"b","text":"B"}')]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "agent.jsonl"

    async def main() -> None:
        async with th.open_agent(path, Model([("", CALLS), ("done", [])]), file_tools({})) as agent:
            await agent.run("go")

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return path


def reply_line(path: Path) -> tuple[list[str], int]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for index, line in enumerate(lines):
        event = json.loads(line)
        if event["type"] == th.agent.CONVERSATION_EVENT and event["data"].get("toolCalls"):
            return lines, index
    raise AssertionError("no reply with calls")


def tamper(data: dict[str, Any], how: str) -> None:
    calls = data["toolCalls"]
    if how == "no arguments":
        del calls[0]["arguments"]
    elif how == "calls object":
        data["toolCalls"] = {"0": calls[0]}
    elif how == "calls string":
        data["toolCalls"] = "c1"
    elif how == "no step":
        del data["step"]
    elif how == "string step":
        data["step"] = "0"
    elif how == "numeric id":
        calls[0]["id"] = 7
    elif how == "string turn":
        data["turn"] = "0"
    elif how == "messages object":
        data["messages"] = {}
    elif how == "message number":
        data["messages"] = [*data["messages"], 5]
    elif how == "unknown kind":
        data["kind"] = "thoughts"


def write_tampered(path: Path, how: str) -> tuple[list[str], int]:
    """Tamper with the reply's event in the file; return the original lines and its index."""
    lines, index = reply_line(path)
    event = json.loads(lines[index])
    tamper(event["data"], how)
    lines[index] = json.dumps(event, separators=(",", ":")) + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    return lines, index


def salvaged(path: Path) -> str:
    return Path(f"{path}.salvaged").read_text(encoding="utf-8")


CASES = {
    "no arguments": ("data.toolCalls[0].arguments", "is missing"),
    "calls object": ("data.toolCalls", "must be an array, got object"),
    "calls string": ("data.toolCalls", "must be an array, got string"),
    "no step": ("data.step", "is missing"),
    "string step": ("data.step", "must be an integer, got string"),
    "numeric id": ("data.toolCalls[0].id", "must be a string, got number"),
    "string turn": ("data.turn", "must be an integer, got string"),
    "messages object": ("data.messages", "must be an array, got object"),
    "message number": ("data.messages[1]", "must be an object, got number"),
    "unknown kind": ("data.kind", 'must be "input", "reply" or "results", got "thoughts"'),
}


@pytest.mark.parametrize("how", sorted(CASES))
def test_a_tampered_reply_is_refused_naming_the_line_and_field(log: Path, how: str) -> None:
    lines, index = write_tampered(log, how)
    field, problem = CASES[how]
    offset = sum(len(line.encode()) for line in lines[:index])
    with pytest.raises(th.log.SessionLogError) as refused:
        th.agent.open_agent_log(log)
    assert str(refused.value) == f"{log}: line {index + 1} (byte {offset}): {field} {problem}"
    assert (refused.value.line, refused.value.offset, refused.value.field) == (
        index + 1,
        offset,
        field,
    )
    with pytest.raises(ValueError, match=re.escape(f"event {index}: {field} {problem}")):
        th.agent.read_conversation(th.log.load_session_log(log).events)


@pytest.mark.parametrize("how", ["no arguments", "numeric id"])
async def test_salvage_keeps_the_conversation_before_the_tampered_line(
    log: Path, how: str, autojump_clock: trio.testing.MockClock
) -> None:
    lines, index = write_tampered(log, how)
    with pytest.raises(th.log.SessionLogError):
        async with th.open_agent(log, Model([]), file_tools({})):
            pass
    files: dict[str, str] = {}
    model = Model([("again", [])])
    async with th.open_agent(log, model, file_tools(files), salvage=True) as agent:
        assert [m["content"] for m in model.messages] == ["go"]
        assert agent.log.session.recovered.salvaged is not None
        result = await agent.run()
        assert result.text == "again"
    assert salvaged(log) == "".join(lines[index:])
    events = th.log.load_session_log(log).events
    assert th.log.check_replay(events).valid
