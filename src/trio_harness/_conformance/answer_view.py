"""A scenario and the reference's answer to it, indexed for the behaviour predicates.

:class:`AnswerView` holds the facts :mod:`.behaviours` reads: each call's times and result
(error code, text), the classification the registry gives a call as the step starts, the
largest number of bodies running at one instant, the synthetic pairs.
"""

from __future__ import annotations

import json
from typing import Any

from .scenario_format import CallSpec, Scenario

__all__ = ["AnswerView"]


class AnswerView:
    """A scenario and its answer, indexed for the predicates."""

    def __init__(self, scenario: Scenario, answer: dict[str, Any]) -> None:
        self.s = scenario
        self.a = answer
        self.outcome: dict[str, Any] = answer["outcome"]
        self.times = {entry["id"]: entry for entry in answer["calls"]}
        self.results: dict[str, dict[str, Any]] = {}
        for event in answer["events"]:
            if event["type"] == "tool/result":
                data = event["data"]
                block = data["message"]["content"][0]
                self.results[block["toolCallId"]] = {
                    "isError": block["isError"],
                    "code": (data.get("error") or {}).get("code"),
                    "text": " ".join(
                        part.get("text", "") for part in block["content"] if isinstance(part, dict)
                    ),
                }
        self.tools = {tool.name: tool for tool in scenario.tools}

    # -- helpers ------------------------------------------------------------------------------

    def codes(self) -> set[Any]:
        return {result["code"] for result in self.results.values()}

    def has_code(self, code: str) -> bool:
        return code in self.codes()

    @staticmethod
    def arguments(call: CallSpec) -> Any:
        """The call's parsed argument text (``{}`` for ``""``), ``None`` when it is not JSON."""
        try:
            return json.loads(call.arguments) if call.arguments else {}
        except ValueError:
            return None

    def static_parallel(self, index: int) -> bool:
        """The classification a call gets from the registry as the scenario starts."""
        call = self.s.calls[index]
        tool = self.tools.get(call.name)
        args = self.arguments(call)
        if tool is None or type(args) is not dict:
            return False
        if tool.parallel == "always":
            return True
        return tool.parallel.startswith("argument:") and args.get(tool.parallel[9:]) is True

    def overlap(self) -> int:
        """The largest number of bodies running at one instant (half-open intervals)."""
        marks: list[tuple[int, int]] = []
        for entry in self.times.values():
            start, end = entry["bodyStarted"], entry["settled"]
            if start is not None and end is not None and end > start:
                marks += [(start, 1), (end, -1)]
        best = running = 0
        for _, delta in sorted(marks, key=lambda mark: (mark[0], mark[1])):
            running += delta
            best = max(best, running)
        return best

    def raised(self) -> bool:
        return "raised" in self.outcome

    def aborted(self) -> bool:
        return self.outcome.get("aborted") is True

    def skipped_ids(self) -> list[str]:
        return [
            entry["id"]
            for entry in self.times.values()
            if entry["called"] is not None
            and entry["prepared"] is None
            and entry["committed"] == entry["called"]
            and self.results.get(entry["id"], {}).get("code") == "ABORTED_BEFORE_DISPATCH"
        ]

    def pre(self, decision: str, approval: str | None = None) -> bool:
        return any(
            call.pre is not None
            and call.pre.decision == decision
            and (approval is None or call.pre.approval == approval)
            and self.times[call.id]["committed"] is not None
            for call in self.s.calls
        )

    def committed(self, call_id: str) -> bool:
        return self.times[call_id]["committed"] is not None
