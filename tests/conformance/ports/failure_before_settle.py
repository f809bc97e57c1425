"""Planted bug: a scheduler failure is raised at once, abandoning the in-flight bodies."""

from __future__ import annotations

from typing import Any

from _port import is_schedule, serve


def transform(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    if not is_schedule(request):
        return answer
    expected = answer["expected"]
    outcome = expected["outcome"]
    if "raised" not in outcome:
        return answer
    failed_at = outcome["failedAt"]
    outcome["endedAt"] = failed_at
    for entry in expected["calls"]:
        if entry["settled"] is not None and entry["settled"] > failed_at:
            entry["settled"] = None
    return answer


if __name__ == "__main__":
    serve(transform)
