"""``python -m trio_harness conformance run``: check a port (or trio_harness itself) against the kit.

The kit is the ``spec/`` directory, installed with the package (:func:`packaged_kit`; a checkout
has it at the repository root too): recorded validation answers (``upstream-vectors.jsonl``),
validation edge cases (``validation-edges.jsonl``) and scheduling scenarios
(``scheduling-vectors.jsonl``); ``--json-schema-test-suite DIR`` adds the
official suite's cases inside the subset, from a checkout of that suite the user points at.
Without ``--port`` the cases are answered in-process by the reference oracle. With ``--port CMD``
the runner starts CMD (``--jobs`` copies, each a :class:`~.port.PortProcess`), sends each case
as one JSON line on its standard input without ``expected``, and reads one JSON line back per
case (``spec/PROTOCOL.md``).

Verdicts: ``pass``; ``fail`` (an answer differs: the report names the case, the call the first
difference is about, and shows it); ``crash`` (the port exited or closed its output); ``hang`` (no
answer within the per-case timeout); ``malformed`` (a line that is not a JSON object answer). A
port that crashes, hangs or prints garbage is stopped; its remaining cases count as not run.
"""

from __future__ import annotations

import fnmatch
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Final, Literal, TextIO

import attrs

from .._json import js_json, loads_any_depth
from .._validation import assert_supported_json_schema
from .compare import canon, compare_scheduling, first_difference, short
from .failure_view import print_report
from .oracle import answer_case, answer_request
from .port import EXIT_CODES, PortError, PortProcess, Verdict, request_text

__all__ = [
    "SPEC_FILES",
    "Case",
    "Failure",
    "Report",
    "compare_scheduling",
    "judge",
    "load_cases",
    "load_json_schema_test_suite",
    "packaged_kit",
    "print_report",
    "run_cases",
]

#: Kit files and the area their cases belong to.
SPEC_FILES: Final = (
    ("validation", "upstream-vectors.jsonl", "validation/upstream"),
    ("validation", "validation-edges.jsonl", "validation/edges"),
    ("scheduling", "scheduling-vectors.jsonl", "scheduling"),
)

_SEVERITY: Final[dict[str, int]] = {"pass": 0, "fail": 1, "malformed": 2, "crash": 3, "hang": 4}


@attrs.frozen
class Case:
    """One case of the kit: what is sent, and the answer expected back.

    Attributes:
        id: The case id (``scheduling/pool/003``, ``validation/upstream/validate/0042``).
        area: ``validation``, ``scheduling`` or ``json-schema-test-suite``.
        request: The case as sent, decoded.
        expected: The expected answer.
        text: The JSON line sent to a port (and read by the in-process reference): a kit line's
            own text without ``expected`` (and ``tags``), so every number reaches the port as the
            kit file writes it (``2.0`` stays ``2.0``); by default ``request`` written by
            :func:`~.port.request_text`.
        tags: The behaviour tags of a scheduling case (the rules it exercises), else ``()``.
        source: Where the case is written: ``file:line`` of the kit, or ``None``.
    """

    id: str
    area: str
    request: dict[str, Any]
    expected: Any
    text: str = attrs.field(
        default=attrs.Factory(lambda case: request_text(case.request), takes_self=True)
    )
    tags: tuple[str, ...] = ()
    source: str | None = None


@attrs.frozen
class Failure:
    """One case that did not pass.

    Attributes:
        id: The case id.
        area: ``validation``, ``scheduling`` or ``json-schema-test-suite``.
        kind: ``fail`` (answer differs), ``error`` (the port answered ``{"error": ...}``),
            ``skipped`` (a skip the case does not allow), ``crash``, ``hang`` or ``malformed``.
        call: The call id the first difference is about (scheduling: the expected event's
            call), else ``None``.
        diff: A readable description of the first difference.
        request: The case's input as sent (``None`` when the case never got an answer).
        expected: The kit's answer.
        actual: The port's answer (the ``expected`` member of its line, else the whole line).
        tags: The scenario's behaviour tags (scheduling).
        source: The kit file and line of the case.
        size: Characters of the case's text: failures are listed smallest first.
    """

    id: str
    area: str
    kind: str
    call: str | None
    diff: str
    request: Any = None
    expected: Any = None
    actual: Any = None
    tags: tuple[str, ...] = ()
    source: str | None = None
    size: int = 0


@attrs.define
class Report:
    """The outcome of a run."""

    port: str | None
    verdict: Verdict = "pass"
    passed: dict[str, int] = attrs.field(factory=dict)
    failed: dict[str, int] = attrs.field(factory=dict)
    skipped: dict[str, int] = attrs.field(factory=dict)
    not_run: dict[str, int] = attrs.field(factory=dict)
    failures: list[Failure] = attrs.field(factory=list)
    problems: list[str] = attrs.field(factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The machine-readable report (``--json``)."""
        areas = sorted(set(self.passed) | set(self.failed) | set(self.skipped) | set(self.not_run))
        return {
            "port": self.port,
            "verdict": self.verdict,
            "seconds": round(self.seconds, 3),
            "areas": {
                area: {
                    "passed": self.passed.get(area, 0),
                    "failed": self.failed.get(area, 0),
                    "skipped": self.skipped.get(area, 0),
                    "notRun": self.not_run.get(area, 0),
                }
                for area in areas
            },
            "problems": list(self.problems),
            "failures": [
                {**attrs.asdict(failure), "tags": list(failure.tags)} for failure in self.failures
            ],
        }


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------

_WS: Final = re.compile(r"[ \t\n\r]*")
_STRUCTURE: Final = re.compile(r'["{}\[\]]')
_SCALAR: Final = re.compile(r"[^,}\] \t\n\r]+")
_scanstring: Final = json.decoder.scanstring  # type: ignore[attr-defined]


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


def _value_end(text: str, pos: int) -> int:
    """The end of the JSON value starting at ``pos`` of (valid) ``text``; any depth, linear."""
    first = text[pos]
    if first == '"':
        end: int = _scanstring(text, pos + 1)[1]
        return end
    if first not in "{[":
        return _SCALAR.match(text, pos).end()  # type: ignore[union-attr]
    depth = 0
    while True:
        found = _STRUCTURE.search(text, pos)
        assert found is not None
        mark, pos = found.group(), found.end()
        if mark == '"':
            pos = _scanstring(text, pos)[1]
        elif mark in "{[":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return pos


def without_members(line: str, names: Sequence[str]) -> str:
    """The text of a (valid) JSON object line without its top-level members ``names``.

    Every other member is kept exactly as written (its number texts, escapes and spacing), in
    its place: what a port receives is the kit line itself, minus the answer.
    """
    pos = _skip(line, 0)
    if line[pos] != "{":
        raise ValueError("not a JSON object")
    pos += 1
    members: list[str] = []
    while True:
        pos = _skip(line, pos)
        if line[pos] == "}":
            break
        key, key_end = _scanstring(line, pos + 1)
        value_start = _skip(line, _skip(line, key_end) + 1)  # past the colon
        value_end = _value_end(line, value_start)
        if key not in names:
            members.append(f"{line[pos:key_end]}:{line[value_start:value_end]}")
        pos = _skip(line, value_end)
        if line[pos] == ",":
            pos += 1
    return "{" + ",".join(members) + "}"


def packaged_kit() -> Traversable:
    """The kit installed with the package (``trio_harness/_conformance/spec``), found through
    :mod:`importlib.resources`: ``conformance run`` works without a checkout."""
    return files(__package__) / "spec"


def load_cases(spec_dir: Path | Traversable, only: Sequence[str] = ()) -> list[Case]:
    """Read the kit's case files (those present) from ``spec_dir``, filtered by ``only`` globs.

    Raises:
        FileNotFoundError: No kit file is present in ``spec_dir``.
        ValueError: A kit line is not a JSON object with ``expected``.
    """
    cases: list[Case] = []
    found = False
    for area, name, prefix in SPEC_FILES:
        path = spec_dir / name
        if not path.is_file():
            continue
        found = True
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                case = loads_any_depth(line)
                if type(case) is not dict or "expected" not in case:
                    raise ValueError(f"{path}:{number}: not a case with an expected answer")
                if area == "scheduling":
                    case_id = f"{prefix}/{case['id']}"
                elif type(case.get("id")) is str:
                    case_id = f"{prefix}/{case.get('op')}/{case['id']}"
                else:
                    case_id = f"{prefix}/{case.get('op')}/{number:04d}"
                if only and not any(fnmatch.fnmatchcase(case_id, glob) for glob in only):
                    continue
                expected = case.pop("expected")
                dropped = ["expected"]
                tags: tuple[str, ...] = ()
                if area == "scheduling":
                    tags = tuple(str(tag) for tag in case.pop("tags", None) or ())
                    dropped.append("tags")
                text = without_members(line, dropped)
                cases.append(Case(case_id, area, case, expected, text, tags, f"{name}:{number}"))
    if not found:
        raise FileNotFoundError(f"no conformance kit files in {spec_dir}")
    return cases


def load_json_schema_test_suite(suite_dir: Path, only: Sequence[str] = ()) -> list[Case]:
    """Cases of the official JSON-Schema-Test-Suite (draft 2020-12) that fall inside the subset.

    ``suite_dir`` is a checkout of the suite (or its ``tests/draft2020-12`` folder). A test group
    is in the subset when its schema, without ``$schema``, passes
    :func:`trio_harness.assert_supported_json_schema`; each of its tests becomes a ``validate``
    case whose expected answer is the reference's (which agrees with the suite's verdicts on
    every such case).

    Raises:
        FileNotFoundError: ``suite_dir`` holds no draft 2020-12 test files.
    """
    folder = suite_dir / "tests" / "draft2020-12"
    if not folder.is_dir():
        folder = suite_dir
    files = sorted(path for path in folder.glob("*.json") if path.is_file())
    if not files:
        raise FileNotFoundError(f"no JSON-Schema-Test-Suite files in {suite_dir}")
    cases = []
    for path in files:
        groups = json.loads(path.read_text(encoding="utf-8"))
        for group_index, group in enumerate(groups):
            schema = group.get("schema")
            if isinstance(schema, dict):
                schema = {key: value for key, value in schema.items() if key != "$schema"}
            try:
                assert_supported_json_schema(schema)
            except Exception:
                continue
            for test_index, test in enumerate(group.get("tests", [])):
                case_id = f"json-schema-test-suite/{path.stem}/{group_index}/{test_index}"
                if only and not any(fnmatch.fnmatchcase(case_id, glob) for glob in only):
                    continue
                request = {
                    "op": "validate",
                    "schema": schema,
                    "value": test["data"],
                    "path": "value",
                }
                expected = answer_case(dict(request))["expected"]
                cases.append(Case(case_id, "json-schema-test-suite", request, expected))
    return cases


# ---------------------------------------------------------------------------------------------
# Judging
# ---------------------------------------------------------------------------------------------


def _allows_skip(case: Case) -> bool:
    # JavaScript ``undefined`` has no counterpart in most languages: a port may skip such cases.
    return case.area == "validation" and '"$undefined"' in canon(case.request)


def judge(case: Case, answer: Any) -> Failure | Literal["pass", "skipped"]:
    """Compare one answer (the decoded line a port returned) with the case's expectation.

    A failure carries the case's input, both answers, its behaviour tags and its kit line, for
    the report (:mod:`.failure_view`). Never raises: an answer whose shape the comparison cannot
    follow (a content block that is a string, an ``error`` that is a string, a list as a call
    id, ...) is ``malformed``.
    """
    try:
        outcome = _judge(case, answer)
    except Exception as error:
        outcome = (
            "malformed",
            None,
            f"answer cannot be judged ({type(error).__name__}: {error}): {short(answer)}",
        )
    if outcome == "pass" or outcome == "skipped":
        return outcome
    kind, call, diff = outcome
    actual = answer.get("expected", answer) if type(answer) is dict else answer
    return Failure(
        case.id,
        case.area,
        kind,
        call,
        diff,
        request=case.request,
        expected=case.expected,
        actual=actual,
        tags=case.tags,
        source=case.source,
        size=len(case.text),
    )


def _judge(case: Case, answer: Any) -> tuple[str, str | None, str] | Literal["pass", "skipped"]:
    if type(answer) is not dict:
        return "malformed", None, f"answer is not an object: {short(answer)}"
    if "expected" not in answer:
        if "error" in answer:
            return "error", None, f"port answered error: {short(answer['error'])}"
        return "malformed", None, f"answer has no expected: {short(answer)}"
    got = answer["expected"]
    if type(got) is dict and set(got) == {"skipped"}:
        if _allows_skip(case):
            return "skipped"
        return "skipped", None, f"skipped: {short(got['skipped'])}"
    if case.area == "scheduling":
        difference = compare_scheduling(case.expected, got)
        if difference is None:
            return "pass"
        call, text = difference
        return "fail", call, text
    if canon(case.expected) == canon(got):
        return "pass"
    return "fail", None, first_difference(case.expected, got)


# ---------------------------------------------------------------------------------------------
# Answering: in-process or through a port
# ---------------------------------------------------------------------------------------------


def _tally(report: Report, area: str, key: str) -> None:
    counts: dict[str, int] = getattr(report, key)
    counts[area] = counts.get(area, 0) + 1


def _worsen(report: Report, verdict: Verdict) -> None:
    if _SEVERITY[verdict] > _SEVERITY[report.verdict]:
        report.verdict = verdict


def _record(report: Report, case: Case, outcome: Failure | Literal["pass", "skipped"]) -> None:
    if outcome == "pass":
        _tally(report, case.area, "passed")
    elif outcome == "skipped":
        _tally(report, case.area, "skipped")
    else:
        assert isinstance(outcome, Failure)
        _tally(report, case.area, "failed")
        report.failures.append(outcome)
        _worsen(report, "malformed" if outcome.kind == "malformed" else "fail")


def _run_port(
    command: str, cases: Sequence[Case], timeout: float, report: Report, lock: threading.Lock
) -> None:
    try:
        _talk(command, cases, timeout, report, lock)
    except Exception as error:  # pragma: no cover - a runner bug: still account for the cases
        with lock:
            report.problems.append(f"runner error talking to {command!r}: {error!r}")
            _worsen(report, "crash")


def _talk(
    command: str, cases: Sequence[Case], timeout: float, report: Report, lock: threading.Lock
) -> None:
    try:
        port = PortProcess(command, timeout)
    except OSError as error:
        with lock:
            report.problems.append(f"crash: cannot start {command!r}: {error}")
            _worsen(report, "crash")
            for case in cases:
                _tally(report, case.area, "not_run")
        return
    try:
        for position, case in enumerate(cases):
            try:
                answer = port.ask(case.text)
            except PortError as error:
                with lock:
                    report.problems.append(f"{error.verdict} at {case.id}: {error}")
                    report.failures.append(
                        Failure(
                            case.id,
                            case.area,
                            error.verdict,
                            None,
                            str(error),
                            request=case.request,
                            expected=case.expected,
                            tags=case.tags,
                            source=case.source,
                            size=len(case.text),
                        )
                    )
                    _tally(report, case.area, "failed")
                    _worsen(report, error.verdict)
                    for rest in cases[position + 1 :]:
                        _tally(report, rest.area, "not_run")
                port.kill()
                return
            outcome = judge(case, answer)
            with lock:
                _record(report, case, outcome)
            if isinstance(outcome, Failure) and outcome.kind == "malformed":
                with lock:
                    report.problems.append(f"malformed at {case.id}: {outcome.diff}")
                    for rest in cases[position + 1 :]:
                        _tally(report, rest.area, "not_run")
                port.kill()
                return
    finally:
        port.close()


def _account_for_every_case(report: Report, cases: Sequence[Case]) -> None:
    """Count every selected case exactly once: one a worker left uncounted is not run."""
    per_area: dict[str, int] = {}
    for case in cases:
        per_area[case.area] = per_area.get(case.area, 0) + 1
    for area, selected in per_area.items():
        counted = sum(
            getattr(report, key).get(area, 0) for key in ("passed", "failed", "skipped", "not_run")
        )
        if counted < selected:
            report.not_run[area] = report.not_run.get(area, 0) + selected - counted
            report.problems.append(f"{selected - counted} {area} cases were never answered")
            _worsen(report, "crash")


def run_cases(
    cases: Sequence[Case],
    *,
    port: str | None = None,
    jobs: int = 1,
    timeout: float = 10.0,
    answer: Callable[[Any], Any] = answer_request,
) -> Report:
    """Run ``cases`` against ``port`` (a command line) or, when ``None``, against ``answer``.

    Args:
        cases: The cases to run (see :func:`load_cases`).
        port: The port's command line; started ``jobs`` times, cases split between the copies.
        jobs: Number of port processes.
        timeout: Seconds to wait for each answer before calling the port hung.
        answer: The in-process oracle used without a port.
    """
    report = Report(port=port)
    started = time.perf_counter()
    if port is None:
        for case in cases:
            # Requests travel as JSON text, the text a port would be sent.
            _record(report, case, judge(case, answer(loads_any_depth(case.text))))
    else:
        lock = threading.Lock()
        jobs = max(1, min(jobs, len(cases) or 1))
        shares = [list(cases[index::jobs]) for index in range(jobs)]
        workers = [
            threading.Thread(target=_run_port, args=(port, share, timeout, report, lock))
            for share in shares
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        _account_for_every_case(report, cases)
    # Smallest failing case first: the one to debug first. Failures without an answer (a crash,
    # a hang) lead, as they stop the run.
    order = {case.id: index for index, case in enumerate(cases)}
    report.failures.sort(
        key=lambda failure: (
            failure.kind not in ("crash", "hang"),
            failure.size,
            order.get(failure.id, 0),
        )
    )
    report.seconds = time.perf_counter() - started
    return report


def main_run(
    spec: str | None,
    port: str | None,
    only: Sequence[str],
    jobs: int,
    timeout: float,
    suite: str | None,
    json_path: str | None,
    out: TextIO | None = None,
    detailed: int = 10,
) -> int:
    """``conformance run``; returns the exit status (see :data:`EXIT_CODES`; 2 = bad usage).

    ``spec`` is the kit directory; ``None`` is the kit installed with the package. The first
    ``detailed`` failures are drawn in full (``0``: all); ``--json`` holds every one in full.
    """
    try:
        cases = load_cases(packaged_kit() if spec is None else Path(spec), only)
        if suite is not None:
            cases += load_json_schema_test_suite(Path(suite), only)
    except (OSError, ValueError) as error:
        sys.stderr.write(f"python -m trio_harness conformance run: {error}\n")
        return 2
    if not cases:
        sys.stderr.write("python -m trio_harness conformance run: no case matches --only\n")
        return 2
    report = run_cases(cases, port=port, jobs=jobs, timeout=timeout)
    print_report(report, sys.stdout if out is None else out, detailed=detailed)
    if json_path is not None:
        # JavaScript-exact and iterative: a case's input of any depth is written as sent.
        Path(json_path).write_text(js_json(report.to_json()) + "\n", encoding="utf-8")
    return EXIT_CODES[report.verdict]
