"""A scripted :class:`trio_harness.TurnModel`: replies from a list, records what it was given."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import trio

import trio_harness as th


@attrs.define(eq=False)
class ScriptedModel:
    """Answers each ``step`` with the next scripted reply (after ``delay`` virtual seconds).

    Attributes:
        replies: ``(text, [(id, name, arguments), ...])`` per step.
        tools_seen: The tool list of every request.
        results_seen: The results handed back after every step.
    """

    replies: list[tuple[str, list[tuple[str, str, str]]]]
    delay: float = 0
    tools_seen: list[list[str]] = attrs.field(factory=list)
    results_seen: list[list[th.StepResult]] = attrs.field(factory=list)

    async def step(self, tools: Sequence[dict[str, Any]]) -> th.ModelStep:
        self.tools_seen.append([tool["name"] for tool in tools])
        await trio.sleep(self.delay)
        text, calls = self.replies.pop(0)
        return th.ModelStep(text=text, tool_calls=tuple(th.ToolCallBlock(*call) for call in calls))

    def add_tool_results(self, results: Sequence[th.StepResult]) -> None:
        self.results_seen.append(list(results))


#: One streamed reply: its text, each call with the time (from the request) it is complete, the
#: time the reply ends, and an exception the stream raises then instead of ending (or ``None``).
StreamedReply = tuple[str, list[tuple[float, tuple[str, str, str]]], float, Exception | None]


@attrs.define(eq=False)
class StreamingModel:
    """A :class:`trio_harness.turn.StreamingTurnModel` on virtual time, keeping its contract.

    ``step_streaming`` hands each call to ``on_call`` at its time; ``step`` (``streams=False``,
    or the step limit) answers the whole reply at its end. :attr:`conversation` records what the
    model appended: ``("reply", ids)``, ``("partial", ids)`` (the stream broke off after handing
    those calls over) and ``("results", ids)``.
    """

    replies: list[StreamedReply]
    streams: bool = True
    conversation: list[tuple[str, list[str]]] = attrs.field(factory=list)
    results_seen: list[list[th.StepResult]] = attrs.field(factory=list)

    @property
    def step_streaming(self) -> Any:
        return self._stream if self.streams else None

    async def step(self, tools: Sequence[dict[str, Any]]) -> th.ModelStep:
        text, calls, end, error = self.replies.pop(0)
        await trio.sleep(end)
        if error is not None:
            raise error
        self.conversation.append(("reply", [call[0] for _, call in calls]))
        return th.ModelStep(text=text, tool_calls=tuple(th.ToolCallBlock(*c) for _, c in calls))

    async def _stream(self, tools: Sequence[dict[str, Any]], on_call: Any) -> th.ModelStep:
        text, calls, end, error = self.replies.pop(0)
        start = trio.current_time()
        sent: list[th.ToolCallBlock] = []
        try:
            for at, call in calls:
                await trio.sleep_until(start + at)
                block = th.ToolCallBlock(*call)
                on_call(block)
                sent.append(block)
            await trio.sleep_until(start + end)
            if error is not None:
                raise error
        except BaseException:
            if sent:
                self.conversation.append(("partial", [call.id for call in sent]))
            raise
        self.conversation.append(("reply", [call.id for call in sent]))
        return th.ModelStep(text=text, tool_calls=tuple(sent))

    def add_tool_results(self, results: Sequence[th.StepResult]) -> None:
        self.conversation.append(("results", [result.call_id for result in results]))
        self.results_seen.append(list(results))
