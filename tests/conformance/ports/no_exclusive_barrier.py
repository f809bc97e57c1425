"""Planted bug: exclusive calls are not barriers (every classifier is treated as parallel)."""

from __future__ import annotations

import copy
from typing import Any

from _port import is_schedule, rerun, serve


def transform(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    if not is_schedule(request):
        return answer
    scenario = copy.deepcopy(request["scenario"])
    for tool in scenario.get("tools", []):
        tool["parallel"] = "always"
    for call in scenario.get("calls", []):
        for change in call.get("onCommit", []):
            if change.get("op") == "setParallel":
                change["parallel"] = "always"
            elif change.get("op") == "add":
                change["tool"]["parallel"] = "always"
    return rerun(request, scenario)


if __name__ == "__main__":
    serve(transform)
