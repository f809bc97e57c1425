"""Planted bug: a tool's invalid output is reported by its first violation only."""

from __future__ import annotations

from typing import Any

from _port import serve

_MARK = "returned invalid output: "


def transform(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    expected = answer["expected"]
    if not isinstance(expected, dict):
        return answer
    for event in expected.get("events") or []:
        for block in event.get("data", {}).get("message", {}).get("content", []):
            for item in block.get("content", []) if isinstance(block, dict) else []:
                text = item.get("text") if isinstance(item, dict) else None
                if isinstance(text, str) and _MARK in text:
                    head, tail = text.split(_MARK, 1)
                    item["text"] = head + _MARK + tail.split("; ", 1)[0]
    return answer


if __name__ == "__main__":
    serve(transform)
