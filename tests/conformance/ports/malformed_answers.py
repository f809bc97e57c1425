"""A port whose scheduling answers have the wrong shape where judging looks: a content block
that is a string, an ``error`` that is a string, a list as call id (argv[1] picks which)."""

from __future__ import annotations

import json
import sys
from typing import Any

from _port import is_schedule, serve


def break_answer(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    if not is_schedule(request):
        return answer
    how = sys.argv[1]
    expected = answer["expected"]
    if how == "list-call-id":
        # The events agree; the per-call times are keyed by a list.
        for entry in expected["calls"]:
            entry["id"] = [entry["id"]]
        return answer
    for event in expected["events"]:
        if event["type"] != "tool/result":
            continue
        data = event["data"]
        if how == "string-block":
            data["message"]["content"][0]["content"] = ["not a block"]
        else:
            data["error"] = "boom"
    # Events differing from the first one on, so the runner has to describe them.
    expected["events"] = list(reversed(expected["events"]))
    return json.loads(json.dumps(answer))


if __name__ == "__main__":
    serve(break_answer)
