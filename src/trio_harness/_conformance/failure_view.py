"""The report of ``conformance run``: each failure drawn so that it leads to the bug.

A failure shows, in this order: the case id and where it is in the kit (file and line), the
call the first difference is about (scheduling: the *expected* event's call), the scenario's
behaviour tags (which name the rule, ``e.4 guard-deny``), the first difference in words, the
case's input, then the expected and the actual answer side by side, every differing row marked
(``!`` changed, ``-`` missing from the answer, ``+`` extra in it) and the first one pointed at
with ``>``. A scheduling answer is drawn as its events (one line each), its per-call times (ms)
and its outcome, so the times of both sides stand next to each other. Failures are listed
smallest case first (the length of the case's text): the smallest failing case is the one to
debug first.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol, TextIO

from .compare import TIME_FIELDS, canon, describe_event, short


class Failure(Protocol):
    """What is drawn of a failure (:class:`~.runner.Failure`)."""

    @property
    def id(self) -> str: ...
    @property
    def area(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def call(self) -> str | None: ...
    @property
    def diff(self) -> str: ...
    @property
    def request(self) -> Any: ...
    @property
    def expected(self) -> Any: ...
    @property
    def actual(self) -> Any: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def source(self) -> str | None: ...


class Report(Protocol):
    """What is drawn of a run (:class:`~.runner.Report`)."""

    @property
    def port(self) -> str | None: ...
    @property
    def verdict(self) -> str: ...
    @property
    def passed(self) -> Mapping[str, int]: ...
    @property
    def failed(self) -> Mapping[str, int]: ...
    @property
    def skipped(self) -> Mapping[str, int]: ...
    @property
    def not_run(self) -> Mapping[str, int]: ...
    @property
    def failures(self) -> Sequence[Failure]: ...
    @property
    def problems(self) -> Sequence[str]: ...
    @property
    def seconds(self) -> float: ...


__all__ = ["answer_lines", "failure_lines", "print_report", "side_by_side"]

#: Widest column of the side-by-side view; longer rows are cut (``--json`` has them whole).
COLUMN: Final = 72
#: Characters of a case's input shown in the text report.
INPUT_SHOWN: Final = 1200


_NO_TWIN: Final = object()


def _twin_of(twin: Any, key: Any) -> Any:
    if type(twin) is dict and type(key) is str:
        return twin.get(key, _NO_TWIN)
    if type(twin) is list and type(key) is int and key < len(twin):
        return twin[key]
    return _NO_TWIN


def _pretty(value: Any, twin: Any, limit: int, open_depth: int) -> list[str]:
    """Lines of ``value``: one line when short, else one member or item per line.

    ``twin`` is the value it is drawn beside (the other answer): a container is opened when
    either side's is too long for a line, so both sides are laid out alike and a diff of the
    lines pairs them. Commas are left out, so that one item lost from a list changes one line.
    Iterative over an explicit stack: any depth.
    """
    out: list[str] = []
    stack: list[tuple[str, str, Any, Any, str]] = [("", "", value, twin, "")]
    while stack:
        ind, pre, item, other, close = stack.pop()
        if close:
            out.append(ind + close)
            continue
        text = canon(item)
        room = limit - len(ind) - len(pre)
        long = (
            len(ind) < 2 * open_depth
            or len(text) > room
            or (type(other) is type(item) and other and len(canon(other)) > room)
        )
        if type(item) not in (dict, list) or not item or not long:
            out.append(f"{ind}{pre}{text}")
            continue
        is_dict = type(item) is dict
        out.append(f"{ind}{pre}{'{' if is_dict else '['}")
        stack.append((ind, "", None, None, "}" if is_dict else "]"))
        members = (
            [(canon(key) + ": ", child, _twin_of(other, key)) for key, child in item.items()]
            if is_dict
            else [("", child, _twin_of(other, index)) for index, child in enumerate(item)]
        )
        for member_prefix, child, child_twin in reversed(members):
            stack.append((ind + "  ", member_prefix, child, child_twin, ""))
    return out


def pretty_lines(
    value: Any, limit: int = COLUMN, twin: Any = _NO_TWIN, open_depth: int = 2
) -> list[str]:
    """``value`` as indented lines (no commas), each at most about ``limit`` wide when it can,
    its first ``open_depth`` levels open; laid out like ``twin`` (the value drawn beside it)
    where that one needs more lines."""
    return _pretty(value, twin, limit, open_depth)


def _times(entry: Any) -> str:
    if type(entry) is not dict:
        return short(entry, 60)
    return f"{entry.get('id')}: " + " ".join(
        "-" if entry.get(field) is None else canon(entry.get(field)) for field in TIME_FIELDS
    )


def answer_lines(area: str, answer: Any, twin: Any = _NO_TWIN) -> list[str]:
    """The lines an answer is drawn as (scheduling: events, per-call times, contexts, outcome),
    laid out like ``twin``, the answer drawn beside it."""
    if area != "scheduling" or type(answer) is not dict:
        return pretty_lines(answer, twin=twin)
    twin = twin if type(twin) is dict else {}
    lines = ["events:"]
    events = answer.get("events")
    lines += [f"  {describe_event(event)}" for event in events] if type(events) is list else []
    lines.append("calls (ms: " + " ".join(TIME_FIELDS) + "):")
    calls = answer.get("calls")
    lines += [f"  {_times(entry)}" for entry in calls] if type(calls) is list else []
    if answer.get("contexts"):
        lines.append("contexts:")
        lines += [
            "  " + line
            for line in pretty_lines(answer.get("contexts"), twin=twin.get("contexts", _NO_TWIN))
        ]
    outcome = pretty_lines(answer.get("outcome"), 60, twin.get("outcome", _NO_TWIN), 0)
    return [*lines, "outcome: " + outcome[0], *["  " + line for line in outcome[1:]]]


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def side_by_side(expected: Sequence[str], actual: Sequence[str], width: int = COLUMN) -> list[str]:
    """Two line lists aligned as a diff aligns them, in two columns with marks.

    A row is ``"  "`` equal, ``"! "`` changed, ``"- "`` only expected (missing from the answer),
    ``"+ "`` only in the answer (extra); the first differing row starts with ``">"``.
    """
    column = min(width, max([len(line) for line in expected] + [len("expected")]))
    rows: list[tuple[str, str, str]] = []
    matcher = difflib.SequenceMatcher(None, list(expected), list(actual), autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            rows += [(" ", expected[a0 + k], actual[b0 + k]) for k in range(a1 - a0)]
            continue
        pairs = min(a1 - a0, b1 - b0) if tag == "replace" else 0
        rows += [("!", expected[a0 + k], actual[b0 + k]) for k in range(pairs)]
        rows += [("-", line, "") for line in expected[a0 + pairs : a1]]
        rows += [("+", "", line) for line in actual[b0 + pairs : b1]]
    out = [f"   {'expected':<{column}} | actual"]
    first = True
    for mark, left, right in rows:
        pointer = " "
        if mark != " " and first:
            pointer, first = ">", False
        out.append(f"{pointer}{mark} {_cut(left, column):<{column}} | {_cut(right, width)}")
    return out


def _input_lines(failure: Failure) -> list[str]:
    request = failure.request
    if type(request) is dict and failure.area == "scheduling" and "scenario" in request:
        request = request["scenario"]
    lines = pretty_lines(request, 100, open_depth=1)
    text = "\n".join(lines)
    if len(text) > INPUT_SHOWN:
        kept: list[str] = []
        for line in lines:
            if sum(len(k) + 1 for k in kept) + len(line) > INPUT_SHOWN:
                break
            kept.append(line)
        lines = [*kept, f"… ({len(canon(failure.request))} characters in all; see --json)"]
    return lines


def failure_lines(failure: Failure) -> list[str]:
    """Every line of one failure's report (see the module docstring)."""
    where = f" (call {failure.call})" if failure.call else ""
    out = [f"{failure.kind.upper()} {failure.id}{where}"]
    if failure.source:
        out.append(f"    kit line: {failure.source}")
    if failure.tags:
        out.append("    behaviours: " + ", ".join(failure.tags))
    out += [f"    {line}" for line in failure.diff.splitlines()]
    if failure.request is None:
        return out
    out.append("    input:")
    out += [f"      {line}" for line in _input_lines(failure)]
    if failure.kind == "fail":
        out.append("    answers:")
        rows = side_by_side(
            answer_lines(failure.area, failure.expected, failure.actual),
            answer_lines(failure.area, failure.actual, failure.expected),
        )
        out += [f"    {row}" for row in rows]
    return out


def print_report(report: Report, out: TextIO, *, detailed: int = 10) -> None:
    """The human summary: per area pass/fail, the first ``detailed`` failures (smallest case
    first) in full, then one line for each other failure."""
    target = report.port if report.port is not None else "trio_harness (in-process)"
    out.write(f"conformance run against {target}\n")
    areas = sorted(
        set(report.passed) | set(report.failed) | set(report.skipped) | set(report.not_run)
    )
    for area in areas:
        parts = [f"{report.passed.get(area, 0)} passed", f"{report.failed.get(area, 0)} failed"]
        if report.skipped.get(area):
            parts.append(f"{report.skipped[area]} skipped")
        if report.not_run.get(area):
            parts.append(f"{report.not_run[area]} not run")
        status = "PASS" if not report.failed.get(area) and not report.not_run.get(area) else "FAIL"
        out.write(f"  {status} {area:<24} {', '.join(parts)}\n")
    for problem in report.problems:
        out.write(f"  {problem}\n")
    shown = report.failures if detailed <= 0 else report.failures[:detailed]
    for failure in shown:
        out.write("\n" + "\n".join(failure_lines(failure)) + "\n")
    rest = report.failures[len(shown) :]
    if rest:
        out.write(f"\n{len(rest)} more failures (smallest first; each in full with --json):\n")
        for failure in rest:
            where = f" (call {failure.call})" if failure.call else ""
            gist = " ".join(line.strip() for line in failure.diff.splitlines()[:3])
            gist = gist if len(gist) <= 240 else gist[:239] + "…"
            out.write(f"  {failure.kind.upper()} {failure.id}{where}: {gist}\n")
    total = sum(report.passed.values()) + sum(report.failed.values()) + sum(report.skipped.values())
    names = {
        "pass": "PASS",
        "fail": "FAIL (answers differ)",
        "crash": "CRASH (the port exited)",
        "hang": "HANG (no answer within the timeout)",
        "malformed": "MALFORMED OUTPUT (not an answer line)",
    }
    out.write(f"\nresult: {names[report.verdict]} — {total} cases in {report.seconds:.2f} s\n")
