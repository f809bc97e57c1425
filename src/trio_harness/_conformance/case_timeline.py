"""A kit case's scheduling answers drawn as a text Gantt chart: expected above actual.

``python -m trio_harness timeline FILE`` draws these when ``FILE`` holds no step trace but kit
lines (``scheduling-vectors.jsonl``: the expected answer of each case) or a ``conformance run
--json`` report (each scheduling failure: the expected and the port's answer, on one time axis,
so the call that went wrong stands out). ``--case GLOB`` picks the cases by id.

A row is one call of one answer, drawn from its per-call times (ms): ``:`` preparing (hooks,
approval), ``.`` prepared and waiting (the window or a barrier), ``#`` the body running, ``~``
settled and waiting to commit in model order, ``*`` the commit (a body that started and never
settled runs to the end of the axis).
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Sequence
from typing import Any, Final

from .compare import TIME_FIELDS

__all__ = ["kit_timelines", "render_answers"]

_SEGMENTS: Final = (
    ("called", "prepared", ":"),
    ("prepared", "bodyStarted", "."),
    ("bodyStarted", "settled", "#"),
    ("settled", "committed", "~"),
)


def _times(answer: Any) -> list[dict[str, Any]]:
    calls = answer.get("calls") if type(answer) is dict else None
    if type(calls) is not list:
        return []
    return [entry for entry in calls if type(entry) is dict]


def _number(value: Any) -> float | None:
    return float(value) if type(value) in (int, float) else None


def _shown(text: str) -> str:
    """``text`` with characters a terminal must not be sent (escape sequences) replaced."""
    return "".join(char if char.isprintable() else "\ufffd" for char in text)


def _tick_ms(end_ms: float, width: int) -> float:
    """The smallest of 1, 2, 5 x 10**k ms that keeps ticks at least 8 columns apart."""
    if end_ms <= 0:
        return 1.0
    wanted = end_ms * 8 / width
    tick = 10.0 ** math.floor(math.log10(wanted))
    for factor in (1, 2, 5, 10):
        if tick * factor >= wanted:
            return tick * factor
    return tick * 10  # pragma: no cover - the loop ends at 10


def render_answers(title: str, answers: Sequence[tuple[str, Any]], *, width: int = 48) -> list[str]:
    """The answers (``(label, answer)``, e.g. expected then actual) of one case on one axis."""
    instants = [
        time
        for _, answer in answers
        for entry in _times(answer)
        for time in (_number(entry.get(field)) for field in TIME_FIELDS)
        if time is not None
    ]
    end_ms = max(instants, default=0.0)
    scale = width / end_ms if end_ms > 0 else 0.0

    def col(ms: float) -> int:
        return min(width, round(ms * scale))

    labels = [
        _shown(f"{label} {entry.get('id')}")[:28]
        for label, answer in answers
        for entry in _times(answer)
    ]
    label_width = max([len(label) for label in labels] + [8]) + 2
    tick = _tick_ms(end_ms, width)
    axis = [" "] * (width + 8)
    rule = ["-"] * (width + 1)
    count = int(end_ms / tick + 1e-9) if end_ms > 0 else 0
    for number in range(count + 1):
        position = col(number * tick)
        text = f"{number * tick:g}ms"
        if position + len(text) <= len(axis):
            axis[position : position + len(text)] = text
        rule[position] = "|"
    out = [title, " " * label_width + "".join(axis).rstrip(), " " * label_width + "".join(rule)]
    for label, answer in answers:
        for entry in _times(answer):
            row = [" "] * (width + 1)
            for start_field, end_field, char in _SEGMENTS:
                start, stop = _number(entry.get(start_field)), _number(entry.get(end_field))
                if char == "#" and start is not None and stop is None:
                    stop = end_ms  # a body that never settled runs to the end of the axis
                if start is None or stop is None:
                    continue
                first, last = col(start), col(stop)
                if char == "#" and first == last:
                    last = first + 1  # a body is visible however short
                for column in range(first, min(last, width + 1)):
                    row[column] = char
            committed = _number(entry.get("committed"))
            if committed is not None:
                row[col(committed)] = "*"
            name = _shown(f"{label} {entry.get('id')}")[:28]
            times = " ".join(
                "-" if entry.get(field) is None else str(entry.get(field)) for field in TIME_FIELDS
            )
            out.append(f"{name:<{label_width}}{''.join(row)}  {times}")
    out.append("legend: : preparing  . waiting (window or barrier)  # body  ~ waiting to commit")
    out.append(f"        * committed; times (ms): {' '.join(TIME_FIELDS)}")
    return out


def _objects(text: str) -> list[Any] | None:
    try:
        return [json.loads(text)]  # a report (compact or indented)
    except ValueError:
        pass
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError:
        return None


def kit_timelines(text: str, case: str | None, *, width: int = 48) -> list[str] | None:
    """Charts of the scheduling cases in ``text`` (kit lines or a ``--json`` report) whose id
    matches ``case`` (a glob; ``None``: all); ``None`` when ``text`` holds no such case."""
    charts: list[list[str]] = []
    for data in _objects(text) or []:
        if type(data) is not dict:
            continue
        if type(data.get("failures")) is list:  # a conformance run --json report
            for failure in data["failures"]:
                if type(failure) is not dict or failure.get("area") != "scheduling":
                    continue
                case_id = str(failure.get("id"))
                if case is not None and not fnmatch.fnmatchcase(case_id, case):
                    continue
                diff = str(failure.get("diff")).splitlines()
                title = f"{case_id} ({failure.get('kind')}): {diff[0] if diff else ''}"
                answers = [("expected", failure.get("expected")), ("actual", failure.get("actual"))]
                charts.append(render_answers(title, answers, width=width))
        elif data.get("op") == "schedule" and "expected" in data:
            case_id = f"scheduling/{data.get('id')}"
            if case is not None and not fnmatch.fnmatchcase(case_id, case):
                continue
            tags = ", ".join(str(tag) for tag in data.get("tags", []))
            title = f"{case_id}" + (f" [{tags}]" if tags else "")
            charts.append(render_answers(title, [("expected", data["expected"])], width=width))
    if not charts:
        return None
    out: list[str] = []
    for chart in charts:
        out += [*([""] if out else []), *chart]
    return out
