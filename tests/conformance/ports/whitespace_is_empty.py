"""Planted bug: argument text of whitespace only is read like "" (as {})."""

from __future__ import annotations

from typing import Any

from _port import serve

from trio_harness._conformance import answer_request


def transform(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    raw = request.get("raw")
    if (
        request.get("op") == "parseArguments"
        and type(raw) is str
        and raw
        and not raw.strip(" \t\r\n")
    ):
        return {**answer_request({**request, "raw": ""}), "raw": raw}
    return answer


if __name__ == "__main__":
    serve(transform)
