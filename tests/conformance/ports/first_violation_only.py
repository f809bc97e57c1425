"""Planted bug: validation stops at the first violation."""

from __future__ import annotations

from typing import Any

from _port import serve


def transform(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    expected = answer["expected"]
    if isinstance(expected, dict) and isinstance(expected.get("violations"), list):
        expected["violations"] = expected["violations"][:1]
    return answer


if __name__ == "__main__":
    serve(transform)
