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
