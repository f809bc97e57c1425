"""Planted bug: on abort, calls that never started are recorded ABORTED, not
ABORTED_BEFORE_DISPATCH."""

from __future__ import annotations

from typing import Any

from _port import is_schedule, serve


def transform(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    if not is_schedule(request):
        return answer
    expected = answer["expected"]
    unstarted = {entry["id"] for entry in expected["calls"] if entry["prepared"] is None}
    for event in expected["events"]:
        data = event["data"]
        if event["type"] != "tool/result" or (data.get("error") or {}).get("code") != (
            "ABORTED_BEFORE_DISPATCH"
        ):
            continue
        block = data["message"]["content"][0]
        if block["toolCallId"] in unstarted:
            data["error"] = {"name": "AbortError", "code": "ABORTED"}
            block["content"] = [{"type": "text", "text": "Error: tool call aborted"}]
    return answer


if __name__ == "__main__":
    serve(transform)
