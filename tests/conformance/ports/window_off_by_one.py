"""Planted bug: the rolling window lets cap + 1 bodies run at once."""

from __future__ import annotations

from typing import Any

from _port import is_schedule, rerun, serve


def transform(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    if not is_schedule(request):
        return answer
    scenario = dict(request["scenario"])
    cap = scenario.get("cap", 10)
    if type(cap) is int and cap >= 1:
        scenario["cap"] = cap + 1
    return rerun(request, scenario)


if __name__ == "__main__":
    serve(transform)
