"""The loop every fixture port shares: one JSON line in, one JSON line out, flushed.

A port here answers through the reference (as a real port would through its own code) and then
applies its planted bug to the answer, or answers a modified case. Not a test module.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from trio_harness._conformance import answer_request, answer_request_line

Transform = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]


def serve(transform: Transform | None = None) -> None:
    """Answer standard input line by line; ``transform(request, answer)`` plants the bug."""
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8")
        answered = answer_request_line(line)
        if answered is None:
            continue
        if transform is not None:
            try:
                answer = json.loads(answered)
                if "expected" in answer:
                    answered = json.dumps(transform(json.loads(line), answer))
            except RecursionError:
                pass  # nesting past the stdlib's limit: no planted bug concerns it; as answered
        sys.stdout.write(answered + "\n")
        sys.stdout.flush()


def rerun(request: dict[str, Any], scenario: dict[str, Any]) -> dict[str, Any]:
    """Answer ``request`` as if its scenario were ``scenario`` (echoing the original)."""
    answer = answer_request({**request, "scenario": scenario})
    return {**answer, "scenario": request["scenario"]}


def is_schedule(request: dict[str, Any]) -> bool:
    return request.get("op") == "schedule"
