"""What an agent keeps in memory: the conversation its model is sent, not the log's events (those
are read back from the file when asked)."""

from __future__ import annotations

import gc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio
import trio.testing

import trio_harness as th
from trio_harness.lowlevel import check_log


@th.tool(parallel=True)
async def lookup(key: str, limit: int) -> str:
    """Look a key up."""
    return f"{key}:{limit}"


class ChatModel:
    """Two steps a turn (three calls, then an answer), keeping Chat Completions messages."""

    def __init__(self) -> None:
        self.messages: list[Any] = [{"role": "system", "content": "Look things up."}]
        self._asked = 0

    def add_user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    async def step(self, tools: Sequence[dict[str, Any]], /) -> th.ModelStep:
        self._asked += 1
        if self._asked % 2:
            calls = tuple(
                th.ToolCallBlock(f"c{self._asked}-{i}", "lookup", f'{{"key":"k{i}","limit":{i}}}')
                for i in range(3)
            )
            raw = {
                "role": "assistant",
                "tool_calls": [
                    {"id": c.id, "function": {"name": c.name, "arguments": c.arguments}}
                    for c in calls
                ],
            }
            self.messages.append(raw)
            return th.ModelStep(tool_calls=calls, raw=raw)
        self.messages.append({"role": "assistant", "content": "done"})
        return th.ModelStep(text="done")

    def add_tool_results(self, results: Sequence[th.StepResult], /) -> None:
        for result in results:
            text = "".join(block.get("text", "") for block in result.result.content)
            self.messages.append({"role": "tool", "tool_call_id": result.call_id, "content": text})


def _alive(kind: type) -> int:
    gc.collect()
    return sum(1 for item in gc.get_objects() if isinstance(item, kind))


async def test_an_agent_keeps_no_log_event_in_memory_however_long_the_conversation(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    path = tmp_path / "agent.jsonl"
    async with th.open_agent(path, ChatModel(), [lookup]) as agent:
        await agent.run("go")
        events_after_one = _alive(th.SessionEvent)
        for _ in range(20):
            await agent.run("go")
        # Twenty more turns (about 250 more events in the file), not one more event in memory.
        assert _alive(th.SessionEvent) == events_after_one
        logged = len(agent.session.events)
        assert logged > 250
        # The events are all there, read back from the file when asked.
        assert [e.seq for e in agent.session.events] == list(range(logged))
        assert len(agent.traces()) == 21
        assert agent.trace(20, 0) is not None
        messages = list(agent.model.messages)
    assert th.log.load_session_log(path).events == tuple(agent.session.events)
    # Reopened: the same conversation, and the next turn numbered after the last.
    again = ChatModel()
    async with th.open_agent(path, again, [lookup]) as resumed:
        assert again.messages == messages
        assert resumed.next_turn == 21
        assert resumed.recovery.repaired == ()
        result = await resumed.run("go")
        assert result.stop == "done"
    assert check_log([e.to_json() for e in th.log.load_session_log(path).events]) == []
