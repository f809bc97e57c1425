"""One oracle for everything: validation ops and scheduling scenarios, one JSON line each.

``{"op": "schedule", "scenario": {...}}`` lines are answered by
:func:`~trio_harness._conformance.scenario.answer_scenario` (the real pool under ``MockClock``);
every other line goes to the validation oracle (:func:`trio_harness.answer_case`) unchanged, so
the answers of the validation ops are exactly what they were before scheduling was added.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Final

from .._oracle import answer_case, answer_line, answer_lines
from .scenario import answer_scenario

__all__ = ["SCHEDULE_OP", "answer_request", "answer_request_line", "answer_request_lines"]

#: The op of a scheduling scenario line.
SCHEDULE_OP: Final = "schedule"


def answer_request(case: object) -> dict[str, Any]:
    """Answer one decoded case line: a scheduling scenario or a validation op.

    Returns:
        The case with ``expected`` filled in, or ``{"error": "<what>"}``. Never raises.
    """
    if type(case) is dict and case.get("op") == SCHEDULE_OP:
        try:
            return answer_scenario(case)
        except Exception as error:  # pragma: no cover - answer_scenario contains its failures
            return {"error": f"cannot answer: {type(error).__name__}: {error}"}
    return answer_case(case)


def answer_request_line(line: str) -> str:
    """Answer one line: compact JavaScript-exact JSON, exactly one answer. Never raises."""
    return answer_line(line, answer_request)


def answer_request_lines(lines: Iterable[bytes | str]) -> Iterator[str]:
    """Answer a stream of lines (bytes are read as UTF-8), lazily: exactly one answer per line,
    blank or malformed lines included (see :func:`trio_harness._oracle.answer_lines`)."""
    return answer_lines(lines, answer_request)
