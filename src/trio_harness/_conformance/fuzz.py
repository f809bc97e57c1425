"""``python -m trio_harness conformance fuzz``: differential fuzzing of a port against the reference.

Hypothesis draws cases (validation requests, or scheduling scenarios), each is sent to the port
exactly as ``conformance run`` sends a kit line (:class:`~.port.PortProcess`) and answered by
the reference oracle in-process (:func:`~.oracle.answer_request`); the answers are compared as
``conformance run`` compares them (:func:`~.runner.judge`). On the first disagreement hypothesis
shrinks the case, and the minimal one is printed as a ready-to-save vector line with both answers.
Scenarios whose reference answer has ties (``spec/FORMAT.md``: two timers expiring at one
instant, or a dispatch that takes no time beside a later start; more than one answer is allowed)
are drawn like any other and passed over (counted in the report), and so are scenarios whose
answer meets rule 1 of ``spec/FORMAT.md`` (a scheduler failure while an earlier call's
post-execute hook runs: upstream may still commit calls that were ready, the reference does
not; the kit expects the reference, a documented difference). With ``--seed`` a run is
reproducible.

Needs hypothesis (``pip install trio_harness[testing]``).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from typing import Any, Final, TextIO

import attrs
from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from .._json import js_json, loads_any_depth
from .behaviours import behaviours_of
from .fuzz_requests import scheduling_requests, validation_requests
from .oracle import answer_request
from .port import EXIT_CODES, PortError, PortProcess, request_text
from .runner import Case, Failure, judge
from .scenario_format import parse_scenario

__all__ = ["AREAS", "FuzzResult", "fuzz_port", "main_fuzz"]

#: The areas ``--area`` accepts, in the order a run without ``--area`` fuzzes them.
AREAS: Final = ("validation", "scheduling")


@attrs.define
class FuzzResult:
    """What one area's fuzzing found.

    Attributes:
        area: ``validation`` or ``scheduling``.
        seed: The seed the run used.
        cases: Cases sent to the port (shrinking included).
        ties: Scenarios drawn whose reference answer has ties (more than one answer allowed),
            skipped.
        documented: Scenarios skipped because their answer meets a documented difference
            (``spec/FORMAT.md`` rule 1: a commit in progress when a scheduler failure came).
        first_found_after: Cases sent before the first disagreement (``None``: none found).
        seconds_to_find: Seconds until the first disagreement.
        seconds: Seconds of the whole run (shrinking included).
        vector: The minimal disagreeing case as a kit line (``expected`` = the reference).
        port_answer: The port's answer to that case.
        difference: The first difference, as ``conformance run`` describes it.
        port_error: ``(verdict, message)`` when the port crashed, hung or wrote garbage.
        shrunk: Whether the disagreeing case was shrunk (``vector`` is the minimal one).
    """

    area: str
    seed: int
    cases: int = 0
    ties: int = 0
    documented: int = 0
    first_found_after: int | None = None
    seconds_to_find: float | None = None
    seconds: float = 0.0
    vector: dict[str, Any] | None = None
    port_answer: Any = None
    difference: str | None = None
    port_error: tuple[str, str] | None = None
    shrunk: bool = True


class _Disagreement(Exception):
    pass


class _PortDown(Exception):
    pass


def _commit_spans_failure(expected: Any) -> bool:
    """A call committed after the scheduler failure was thrown: its finalize (post-execute) was
    running at ``failedAt``. Upstream then also commits later calls already ready (rule 1 of
    ``spec/FORMAT.md``); the reference commits none, so the answers differ by a documented rule."""
    if type(expected) is not dict or "raised" not in (expected.get("outcome") or {}):
        return False
    failed_at = expected["outcome"].get("failedAt")
    return any(
        type(call) is dict
        and call.get("committed") is not None
        and failed_at is not None
        and call["committed"] > failed_at
        for call in expected.get("calls") or []
    )


def _vector(area: str, request: dict[str, Any], expected: Any, seed: int) -> dict[str, Any]:
    if area != "scheduling":
        return {**request, "expected": expected}
    tags = behaviours_of(parse_scenario(request["scenario"]), expected)
    return {
        "op": "schedule",
        "id": f"fuzz/seed-{seed}",
        "tags": tags,
        "scenario": request["scenario"],
        "expected": expected,
    }


def fuzz_port(
    command: str,
    area: str,
    *,
    examples: int = 100,
    seed: int = 0,
    timeout: float = 10.0,
    knobs: dict[str, Any] | None = None,
    shrink: bool = True,
) -> FuzzResult:
    """Fuzz one area of the port started by ``command``; stops at the first disagreement.

    Args:
        command: The port's command line (JSON lines on stdin/stdout, ``spec/PROTOCOL.md``).
        area: ``validation`` or ``scheduling``.
        examples: Cases hypothesis draws at most (shrinking comes on top).
        seed: The hypothesis seed.
        timeout: Seconds to wait for each answer before calling the port hung.
        knobs: Keyword arguments for :func:`~.strategies.scheduling_scenarios`.
        shrink: Shrink the first disagreeing case (``False``: report it as drawn; for
            measuring how soon a disagreement is found).
    """
    strategy: st.SearchStrategy[dict[str, Any]] = (
        scheduling_requests(**(knobs or {})) if area == "scheduling" else validation_requests()
    )
    result = FuzzResult(area, seed, shrunk=shrink)
    started = time.perf_counter()
    port = PortProcess(command, timeout)

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink) if shrink else (Phase.generate,),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
    )
    @given(strategy)
    def check(request: dict[str, Any]) -> None:
        if result.port_error is not None:
            raise _PortDown
        # Requests travel as JSON text, to the reference as to the port; numbers keep the form
        # they were drawn in (``2.0``, ``-0.0``, big integers).
        text = request_text(request)
        reference = answer_request(loads_any_depth(text))
        expected = reference.get("expected")
        if type(expected) is dict and expected.get("ties"):
            result.ties += 1
            reject()
        if expected is None:
            reject()
        if area == "scheduling" and _commit_spans_failure(expected):
            result.documented += 1
            reject()
        result.cases += 1
        try:
            answer = port.ask(text)
        except PortError as error:
            result.port_error = (error.verdict, str(error))
            raise _PortDown from None
        outcome = judge(Case("fuzz", area, request, expected, text), answer)
        if isinstance(outcome, Failure):
            if result.first_found_after is None:
                result.first_found_after = result.cases
                result.seconds_to_find = time.perf_counter() - started
            result.vector = _vector(area, request, expected, seed)
            result.port_answer = answer.get("expected", answer) if type(answer) is dict else answer
            result.difference = outcome.diff
            raise _Disagreement

    try:
        check()
    except (_Disagreement, _PortDown, HypothesisException, ExceptionGroup):
        # The outcome is in ``result`` (a flaky port or too many tied scenarios end here too).
        pass
    finally:
        if result.port_error is not None:
            port.kill()
        else:
            port.close()
        result.seconds = time.perf_counter() - started
    return result


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except RecursionError:  # an answer nested past the json module's depth: written iteratively
        return js_json(value)


def print_result(result: FuzzResult, command: str, examples: int, out: TextIO) -> None:
    """The human report of one area: agreement, or the minimal case and both answers."""
    if result.port_error is not None:
        verdict, message = result.port_error
        out.write(f"{result.area}: {verdict.upper()} after {result.cases} cases: {message}\n")
        return
    if result.vector is None:
        tied = f", {result.ties} tied scenarios skipped" if result.ties else ""
        if result.documented:
            tied += f", {result.documented} scenarios of a documented difference skipped"
        out.write(
            f"{result.area}: {result.cases} cases, the port agrees with trio_harness "
            f"({result.seconds:.2f} s{tied})\n"
        )
        return
    out.write(
        f"{result.area}: DISAGREEMENT — first found after {result.first_found_after} cases "
        f"({result.seconds_to_find:.2f} s), {'shrunk' if result.shrunk else 'not shrunk'} "
        f"in {result.seconds:.2f} s total ({result.cases} cases)\n\n"
    )
    minimal = "minimal case" if result.shrunk else "case as drawn"
    out.write(f"{minimal} (a ready-to-save vector line; expected = the reference's answer):\n")
    out.write(_dump(result.vector) + "\n\n")
    out.write("reference answer:\n" + _dump(result.vector["expected"]) + "\n\n")
    out.write("port answer:\n" + _dump(result.port_answer) + "\n\n")
    out.write("first difference:\n")
    for line in (result.difference or "").splitlines():
        out.write(f"    {line}\n")
    out.write(
        "\nreproduce: python -m trio_harness conformance fuzz "
        f"--port {json.dumps(command)} --area {result.area} --examples {examples} "
        f"--seed {result.seed}\n"
    )


def main_fuzz(
    command: str,
    areas: Sequence[str],
    examples: int,
    seed: int | None,
    timeout: float,
    out: TextIO,
    shrink: bool = True,
) -> int:
    """``conformance fuzz``: 0 the port agrees, 1 a disagreement (printed), 3/4/5 as ``run``."""
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    out.write(f"conformance fuzz against {command} (seed {seed}, {examples} examples per area)\n")
    for area in areas:
        result = fuzz_port(
            command, area, examples=examples, seed=seed, timeout=timeout, shrink=shrink
        )
        print_result(result, command, examples, out)
        if result.port_error is not None:
            return EXIT_CODES[result.port_error[0]]
        if result.vector is not None:
            return 1
    return 0
