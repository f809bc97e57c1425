"""How ``conformance run`` compares an answer with the kit's: the first difference, in words.

Two JSON values are equal when their JavaScript-exact texts are (:func:`~.._json.js_json`:
``1`` and ``1.0`` are one number, key order matters). A difference is described at the first
path where the values part: a changed value shows both sides; in a list, items the answer lacks
are shown as *missing* and items it adds as *extra* (each with its index and its text), the
lists aligned as a diff aligns lines, so one lost item in the middle reads as that item, not as
every later item changed. A scheduling answer is compared event by event (the call named is the
*expected* event's call: the one the port got wrong), then per-call times, then contexts, then the
outcome.
"""

from __future__ import annotations

import difflib
import json
from typing import Any, Final

from .._json import js_json

__all__ = [
    "TIME_FIELDS",
    "canon",
    "compare_scheduling",
    "describe_event",
    "event_call",
    "first_difference",
    "short",
]

#: The per-call times of a scheduling answer, in the order a call passes them.
TIME_FIELDS: Final = ("called", "prepared", "bodyStarted", "settled", "committed")

#: List items shown by name in one difference (the rest are counted).
_SHOWN_ITEMS: Final = 6


def canon(value: Any) -> str:
    """The JavaScript-exact JSON text two answers are compared by."""
    return js_json(value)


def short(value: Any, limit: int = 160) -> str:
    """``canon(value)``, cut to ``limit`` characters with an ellipsis."""
    text = canon(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _list_difference(expected: list[Any], actual: list[Any], path: str) -> str:
    left = [canon(item) for item in expected]
    right = [canon(item) for item in actual]
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    parts: list[str] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and a1 - a0 == b1 - b0 and not parts:
            # Same count on both sides: the items changed; describe the first one inside.
            return first_difference(expected[a0], actual[b0], f"{path}[{a0}]")
        if tag in ("delete", "replace"):
            parts += [f"missing [{i}] {short(expected[i], 100)}" for i in range(a0, a1)]
        if tag in ("insert", "replace"):
            parts += [f"extra [{j}] {short(actual[j], 100)}" for j in range(b0, b1)]
    shown = parts[:_SHOWN_ITEMS]
    more = f"; and {len(parts) - len(shown)} more" if len(parts) > len(shown) else ""
    return f"{path or '.'}: " + "; ".join(shown) + more


def first_difference(expected: Any, actual: Any, path: str = "") -> str:
    """The path of the first difference between two JSON values and what differs there.

    Objects are compared key by key (expected keys first); lists are aligned
    (:class:`difflib.SequenceMatcher`) and a missing or extra item is shown with its index and
    text. Iterative down the common path: answers of any depth are described.
    """
    while True:
        if type(expected) is dict and type(actual) is dict:
            for key in list(expected) + [k for k in actual if k not in expected]:
                if key not in actual:
                    return f"{path}.{key}: missing (expected {short(expected[key])})"
                if key not in expected:
                    return f"{path}.{key}: extra {short(actual[key])}"
                if canon(expected[key]) != canon(actual[key]):
                    expected, actual, path = expected[key], actual[key], f"{path}.{key}"
                    break
            else:
                # Same members, another order: JSON texts differ by key order only.
                return (
                    f"{path or '.'}: key order differs: expected {list(expected)}, "
                    f"got {list(actual)}"
                )
            continue
        if type(expected) is list and type(actual) is list:
            return _list_difference(expected, actual, path)
        return f"{path or '.'}: expected {short(expected)}, got {short(actual)}"


def event_call(event: Any) -> str | None:
    """The call id a session event is about (``None`` when it names none)."""
    if type(event) is not dict:
        return None
    data = event.get("data")
    if type(data) is not dict:
        return None
    if "callId" in data:
        return str(data["callId"])
    try:
        return str(data["message"]["source"]["callId"])
    except (KeyError, TypeError):
        return None


def describe_event(event: Any) -> str:
    """One line for a session event: ``#3 tool/result c1 (cites #1) error ABORTED "Error: …"``."""
    if type(event) is not dict:
        return short(event)
    kind = event.get("type")
    head = f"#{event.get('seq')} {kind} {event_call(event)}"
    data: dict[str, Any] = event["data"] if type(event.get("data")) is dict else {}
    if kind == "tool/call":
        return f"{head} {data.get('name')} {short(data.get('arguments'), 60)}"
    if kind == "tool/result":
        try:
            block = data["message"]["content"][0]
            texts = " ".join(part.get("text", "") for part in block["content"])
            status = "error" if block["isError"] else "ok"
        except (KeyError, TypeError, IndexError):
            return f"{head} {short(data)}"
        code = (data.get("error") or {}).get("code")
        cites = event.get("sourceEventSeqs")
        return f"{head} (cites {cites}) {status}{' ' + code if code else ''} {json.dumps(texts)}"
    return f"{head} {short(data)}"


def _outcome_matches(expected: Any, actual: Any) -> bool:
    if type(expected) is dict and "rejectedCap" in expected:
        # The message is the implementation's own (upstream: "maxParallelToolCalls must be a
        # positive integer"); only the rejection is compared.
        return type(actual) is dict and set(actual) == {"rejectedCap"}
    return canon(expected) == canon(actual)


def _event_difference(exp_events: list[Any], act_events: list[Any]) -> tuple[str | None, str]:
    index = next(
        i
        for i in range(max(len(exp_events), len(act_events)))
        if i >= len(exp_events)
        or i >= len(act_events)
        or canon(exp_events[i]) != canon(act_events[i])
    )
    left = exp_events[index] if index < len(exp_events) else None
    right = act_events[index] if index < len(act_events) else None
    # The expected event's call: a port that loses c0's result is wrong about c0, whatever
    # event it wrote in that place instead.
    call = event_call(left) if left is not None else event_call(right)
    lines = [
        f"first differing event is #{index} (call {call}):",
        f"  expected: {describe_event(left) if left is not None else '(no more events)'}",
        f"  got:      {describe_event(right) if right is not None else '(no more events)'}",
    ]
    if left is not None and right is not None:
        lines.append("  at " + first_difference(left, right))
    return call, "\n".join(lines)


def compare_scheduling(expected: dict[str, Any], actual: Any) -> tuple[str | None, str] | None:
    """``None`` when the answers agree, else ``(call id or None, readable first difference)``.

    Order: session events, then per-call times, then contexts, then the outcome.
    """
    if type(actual) is not dict:
        return None, f"answer must be an object, got {short(actual)}"
    exp_events = expected.get("events", [])
    act_events = actual.get("events")
    if type(act_events) is not list:
        return None, f"answer has no events list: {short(actual)}"
    if canon(exp_events) != canon(act_events):
        return _event_difference(exp_events, act_events)
    exp_calls = expected.get("calls", [])
    act_calls = actual.get("calls")
    if type(act_calls) is not list:
        return None, "answer has no calls list"
    by_id = {entry.get("id"): entry for entry in act_calls if type(entry) is dict}
    for entry in exp_calls:
        mine = by_id.get(entry["id"])
        if mine is None:
            return entry["id"], f"call {entry['id']}: missing from the answer's calls"
        for field in TIME_FIELDS:
            if canon(entry.get(field)) != canon(mine.get(field)):
                return (
                    entry["id"],
                    f"call {entry['id']}: {field} expected {canon(entry.get(field))} ms, "
                    f"got {canon(mine.get(field))}",
                )
    if canon(expected.get("contexts", [])) != canon(actual.get("contexts")):
        return None, "contexts differ at " + first_difference(
            expected.get("contexts", []), actual.get("contexts")
        )
    if not _outcome_matches(expected.get("outcome"), actual.get("outcome")):
        return None, "outcome differs at " + first_difference(
            expected.get("outcome"), actual.get("outcome")
        )
    return None
