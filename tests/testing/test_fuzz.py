"""``conformance fuzz``: finds and shrinks planted port bugs, passes a correct port; and the
library imports without hypothesis."""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from tests.support.strategies import drawn
from tests.support.vector_cases import expected_answer
from trio_harness.__main__ import main
from trio_harness._conformance.fuzz import fuzz_port
from trio_harness._conformance.fuzz_requests import (
    exact_doubles,
    scheduling_requests,
    validation_requests,
)
from trio_harness._conformance.port import request_text
from trio_harness._json import js_number, loads_any_depth

PORTS = Path(__file__).resolve().parents[1] / "conformance" / "ports"


def port(name: str) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(PORTS / f'{name}.py'))}"


def fuzz(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, float]:
    started = time.perf_counter()
    status = main(["conformance", "fuzz", *argv])
    return status, capsys.readouterr().out, time.perf_counter() - started


def minimal_vector(out: str) -> dict[str, object]:
    lines = out.splitlines()
    at = lines.index(
        "minimal case (a ready-to-save vector line; expected = the reference's answer):"
    )
    vector: dict[str, object] = json.loads(lines[at + 1])
    return vector


@pytest.mark.slow
def test_fuzz_shrinks_a_port_that_drops_the_last_violation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--port", port("first_violation_only"), "--area", "validation"]
    status, out, _ = fuzz(capsys, *argv, "--examples", "100", "--seed", "2")
    assert status == 1
    assert "validation: DISAGREEMENT" in out
    vector = minimal_vector(out)
    violations = vector["expected"]["violations"]  # type: ignore[index]
    assert len(violations) == 2  # shrunk: just enough to have a last violation to drop
    assert "port answer:\n" + json.dumps({"violations": violations[:1]}) in out
    # The seed makes the run reproducible: the same minimal case again.
    again, out_again, _ = fuzz(capsys, *argv, "--examples", "100", "--seed", "2")
    assert again == 1
    assert minimal_vector(out_again) == vector


@pytest.mark.slow
def test_fuzz_shrinks_a_port_without_exclusive_barriers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--port", port("no_exclusive_barrier"), "--area", "scheduling"]
    status, out, _ = fuzz(capsys, *argv, "--examples", "50", "--seed", "1")
    assert status == 1
    vector = minimal_vector(out)
    assert vector["op"] == "schedule"
    # Shrunk to the essence: a parallel call, then an exclusive one started while it runs.
    assert len(vector["scenario"]["calls"]) == 2  # type: ignore[index]
    assert "first differing event" in out
    assert "reproduce: python -m trio_harness conformance fuzz" in out
    # The printed vector is a kit line: the reference answers it with its own expected.
    assert expected_answer(vector["scenario"]) == vector["expected"]  # type: ignore[arg-type]


@pytest.mark.slow
def test_fuzz_shrinks_a_port_that_marks_unstarted_calls_aborted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--port", port("abort_marks_unstarted_aborted"), "--area", "scheduling"]
    # Seed 3: since the hooked scenarios draw an abort too, seed 1 finds the bug in one of them
    # and its shrinking stops at three guarded calls (a local minimum); since the stage
    # scenarios draw guards and returned values independently, seed 2 stops at two calls;
    # seeds 3 to 5 shrink to the one-call case.
    status, out, _ = fuzz(capsys, *argv, "--examples", "50", "--seed", "3")
    assert status == 1
    vector = minimal_vector(out)
    assert len(vector["scenario"]["calls"]) == 1  # type: ignore[index]
    assert vector["scenario"]["abortAtMs"] == 0  # type: ignore[index]
    assert "ABORTED_BEFORE_DISPATCH" in out


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _partial(text: str) -> bool:
    try:
        json.JSONDecoder().raw_decode(text.lstrip(" \t\r\n"))
    except ValueError:
        return False
    return not _parses(text)


VALIDATION_EDGES = {
    "negative zero": lambda text, request: "-0.0" in text,
    "an integral float": lambda text, request: re.search(r"[^\d.]\d+\.0[,}\]]", text) is not None,
    "an integer past 2**53": lambda text, request: "9007199254740994" in text,
    "whitespace-only text": lambda text, request: (
        request.get("op") == "parseArguments"
        and bool(request["raw"])
        and not request["raw"].strip(" \t\r\n")
    ),
    "trailing text": lambda text, request: (
        request.get("op") == "parseArguments" and _partial(request["raw"])
    ),
    "a non-JSON space": lambda text, request: (
        request.get("op") == "parseArguments"
        and request["raw"][:1] in ("\u00a0", "\ufeff", "\u2028")
    ),
    "assert": lambda text, request: request.get("op") == "assert",
    "assertObject": lambda text, request: request.get("op") == "assertObject",
    "compileParams": lambda text, request: request.get("op") == "compileParams",
    "compileValue": lambda text, request: request.get("op") == "compileValue",
}

SCHEDULING_EDGES = {
    "an invalid cap": lambda scenario: (
        "cap" in scenario
        and not (type(scenario["cap"]) is int and scenario["cap"] >= 1)
        and scenario["cap"] not in (None, 1.0, 2.0)
    ),
    "a null cap": lambda scenario: "cap" in scenario and scenario["cap"] is None,
    "an integral float cap": lambda scenario: (
        type(scenario.get("cap")) is float and scenario["cap"].is_integer()
    ),
    "odd argument text": lambda scenario: any(
        "arguments" in call and not _parses(call["arguments"]) and call["arguments"] != "{"
        for call in scenario["calls"]
    ),
    "structured parameters": lambda scenario: any(
        "items" in json.dumps(tool.get("parameters", {})) for tool in scenario["tools"]
    ),
}


def reaches(strategy: st.SearchStrategy[Any], predicate: Any) -> bool:
    """Whether the strategy draws an example with ``predicate`` within 3,000 draws (no shrink)."""
    try:
        find(
            strategy,
            predicate,
            settings=settings(
                max_examples=3000,
                database=None,
                derandomize=True,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            ),
        )
    except NoSuchExample:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("edge", sorted(VALIDATION_EDGES))
def test_fuzz_draws_the_validation_edges(edge: str) -> None:
    applies = VALIDATION_EDGES[edge]
    assert reaches(validation_requests(), lambda request: applies(request_text(request), request))


@pytest.mark.slow
@pytest.mark.parametrize("edge", sorted(SCHEDULING_EDGES))
def test_fuzz_draws_the_scheduling_edges(edge: str) -> None:
    applies = SCHEDULING_EDGES[edge]
    assert reaches(scheduling_requests(), lambda request: applies(request["scenario"]))


def _inexact_integers(value: Any) -> list[int]:
    """The integers JavaScript would answer otherwise than the reference does: not a double
    (``10**300 + 1`` is read as ``1e300``; ``49774942977892350`` as ``49774942977892352``,
    though both print alike) or a double JavaScript prints otherwise (``2**60`` prints as
    ``1152921504606847000``). Iterative: argument texts nest deeper than the recursion limit."""
    found: list[int] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is int:
            try:
                held = float(item)
            except OverflowError:
                continue
            if int(held) != item or js_number(item) != js_number(held):
                found.append(item)
        elif type(item) is list:
            stack.extend(reversed(item))
        elif type(item) is dict:
            stack.extend(reversed(list(item.values())))
    return found


def _texts_read(request: dict[str, Any]) -> list[Any]:
    """What a port reads from ``request``: the request as sent, and each argument text in it
    (``raw``, a scenario call's ``arguments``) parsed, when it is JSON."""
    sent = loads_any_depth(request_text(request))
    texts = [sent.get("raw")] if type(sent) is dict else []
    scenario = sent.get("scenario") if type(sent) is dict else None
    if type(scenario) is dict:
        texts += [call.get("arguments") for call in scenario.get("calls", [])]
    read = [sent]
    for text in texts:
        if type(text) is str:
            # Not JSON (the odd texts): nothing a port reads as a number.
            with contextlib.suppress(ValueError):
                read.append(loads_any_depth(text))
    return read


def _inexact_requests(strategy: st.SearchStrategy[Any], examples: int, seed: int) -> list[Any]:
    return [
        request
        for request in drawn(strategy, examples, seed)
        if any(_inexact_integers(value) for value in _texts_read(request))
    ]


@pytest.mark.parametrize(("area", "seed"), [("validation", 13), ("scheduling", 13)])
def test_fuzz_draws_no_integer_javascript_reads_otherwise(area: str, seed: int) -> None:
    # A JavaScript port reads 2**53 + 1 as 2**53, 10**300 + 1 as 1e300, and prints 2**60 as
    # 1152921504606847000: such a request is a false alarm, not a bug. Seed 13 (1,000 examples)
    # drew 10**300 + 1 against upstream (kept exact by the reference: `[]`; `matched 2` in
    # JavaScript) and -1152921504606847000 (prints as its double, is not one).
    strategy = validation_requests() if area == "validation" else scheduling_requests()
    assert _inexact_requests(strategy, 400, seed) == []


@pytest.mark.slow
@pytest.mark.parametrize("area", ["validation", "scheduling"])
@pytest.mark.parametrize("seed", [1, 13, 21, 34])
def test_fuzz_draws_no_integer_javascript_reads_otherwise_at_any_count(
    area: str, seed: int
) -> None:
    strategy = validation_requests() if area == "validation" else scheduling_requests()
    assert _inexact_requests(strategy, 2500, seed) == []


def test_exact_doubles_makes_big_integers_what_javascript_holds() -> None:
    value = {"enum": [2**53 + 1, 2**53 + 2, -(2**53) - 1, 2**53, True, 1.5, "9007199254740993"]}
    assert exact_doubles(value) == {
        "enum": [2**53, 2**53 + 2, -(2**53), 2**53, True, 1.5, "9007199254740993"]
    }
    assert type(exact_doubles([True])[0]) is bool
    assert exact_doubles(-(2**60)) == -1.152921504606847e18
    assert type(exact_doubles(-(2**60))) is float
    assert exact_doubles(10**22) == 10**22
    assert type(exact_doubles(10**22)) is int
    assert _inexact_integers(exact_doubles({"a": [10**20 + 1, {"b": -(10**300) - 7}, 2**60]})) == []
    assert _inexact_integers([2**53 + 1, -(2**60), 49774942977892350, 2**60]) == [
        2**53 + 1,
        -(2**60),
        49774942977892350,
        2**60,
    ]
    assert _inexact_integers([2**53 + 2, 10**22, 2**53]) == []
    # Not doubles, though each prints as its nearest double does: made that double.
    assert exact_doubles(10**300 + 1) == int(1e300)
    assert js_number(exact_doubles(10**300 + 1)) == "1e+300"
    assert exact_doubles(-1152921504606847000) == -1.152921504606847e18
    assert exact_doubles(49774942977892350) == 49774942977892352
    assert exact_doubles(10**400) == 10**400  # no double to round to


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_fuzz_finds_a_failure_raised_before_the_in_flight_bodies_settle(seed: int) -> None:
    # Since tied scenarios are skipped, the plain scenarios found this port in 1 of 5 seeds (a
    # dispatch failing after 0 ms beside a later start is a tie); the in-flight flavour (a
    # failure at 1-15 ms among 20-40 ms parallel bodies) finds it in every seed, within 300.
    result = fuzz_port(port("failure_before_settle"), "scheduling", examples=300, seed=seed)
    assert result.port_error is None
    assert result.vector is not None
    assert result.first_found_after is not None
    assert result.first_found_after <= 300
    assert "settled expected" in (result.difference or "") or "endedAt" in (result.difference or "")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "area"),
    [("output_first_violation", "scheduling"), ("one_branch_union_accepted", "validation")],
)
def test_fuzz_finds_a_rule_that_only_one_fault_or_several_violations_decide(
    name: str, area: str
) -> None:
    # Blind mutants of upstream hid where the general strategies never reach (issue 33): an
    # output that breaks two rules at once, a `oneOf` of one branch. The flavours of
    # `fuzz_faults` draw them; found after 11-97 and 88-596 cases on seeds 1-3 when written.
    result = fuzz_port(port(name), area, examples=1000, seed=1, shrink=False)
    assert result.port_error is None
    assert result.first_found_after is not None


def test_fuzz_draws_tied_scenarios_and_skips_them() -> None:
    # Ties are not avoided: they are drawn (durations shrink to 0), answered, and passed over.
    knobs = {"min_calls": 4, "max_calls": 6}
    result = fuzz_port(port("forwarding"), "scheduling", examples=60, seed=1, knobs=knobs)
    assert result.vector is None
    assert result.port_error is None
    assert result.ties > 0
    assert result.cases >= 60


def test_fuzz_finds_a_port_that_reads_whitespace_as_empty(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The search stops at the first disagreement; the budget is generous because how soon a
    # seed reaches whitespace-only text moves with the literals of the library (hypothesis draws
    # constants from local modules): 47 to 612 cases for seeds 1-3 when this was written.
    argv = ["--port", port("whitespace_is_empty"), "--area", "validation"]
    status, out, _ = fuzz(capsys, *argv, "--examples", "1000", "--seed", "1")
    assert status == 1
    vector = minimal_vector(out)
    assert vector["op"] == "parseArguments"
    assert not str(vector["raw"]).strip(" \t\r\n")


def test_fuzz_passes_a_correct_forwarding_port(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = fuzz(capsys, "--port", port("forwarding"), "--examples", "20", "--seed", "7")
    assert status == 0
    assert "validation: 20 cases, the port agrees" in out
    assert "scheduling: 20 cases, the port agrees" in out


def test_fuzz_reports_a_crashing_port(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = fuzz(
        capsys, "--port", port("crashes"), "--area", "validation", "--examples", "10", "--seed", "1"
    )
    assert status == 3
    assert "validation: CRASH after 3 cases" in out


BLOCK_HYPOTHESIS = """
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "hypothesis" or name.startswith("hypothesis."):
            raise ImportError("hypothesis is blocked")
        return None

sys.meta_path.insert(0, Block())
import trio_harness, trio_harness.lowlevel, trio_harness.providers
import trio_harness._conformance as kit
assert not any(m == "hypothesis" or m.startswith("hypothesis.") for m in sys.modules)
from trio_harness.__main__ import main
status = main(["conformance", "fuzz", "--port", "true"])
assert status == 2, status
try:
    import trio_harness.testing
except ImportError as error:
    print("testing needs hypothesis:", error)
"""


def test_the_library_imports_without_hypothesis() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_HYPOTHESIS],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "testing needs hypothesis: trio_harness.testing needs hypothesis: "
        "pip install 'trio_harness[testing]'"
    ) in done.stdout
    assert "pip install 'trio_harness[testing]'" in done.stderr
