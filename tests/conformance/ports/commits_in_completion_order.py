"""Planted bug: results are committed when their body settles, not in model order."""

from __future__ import annotations

from typing import Any

from _port import is_schedule, serve


def call_of(event: dict[str, Any]) -> str:
    data = event["data"]
    return data["callId"] if event["type"] == "tool/call" else data["message"]["source"]["callId"]


def transform(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    if not is_schedule(request):
        return answer
    expected = answer["expected"]
    times = {entry["id"]: entry for entry in expected["calls"]}
    timeline = []
    for position, event in enumerate(expected["events"]):
        entry = times[call_of(event)]
        if event["type"] == "tool/call":
            at = entry["called"]
        else:
            at = entry["settled"] if entry["settled"] is not None else entry["committed"]
            entry["committed"] = at
        timeline.append((at, position, event))
    timeline.sort(key=lambda item: (item[0], item[1]))
    renumber = {event["seq"]: seq for seq, (_, _, event) in enumerate(timeline)}
    events = []
    for seq, (_, _, event) in enumerate(timeline):
        moved = {**event, "seq": seq}
        if "sourceEventSeqs" in event:
            moved["sourceEventSeqs"] = [renumber[cited] for cited in event["sourceEventSeqs"]]
        events.append(moved)
    expected["events"] = events
    return answer


if __name__ == "__main__":
    serve(transform)
