"""A mutation test of the kit: plausible port bugs (``mutants.py``), planted one at a time into
a port that otherwise answers as the reference, each judged case by case as ``conformance run``
judges a port. Every mutant must fail several cases of the kit (one port bug, several cases)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.conformance.mutants import MUTANTS
from tests.conformance.support import SPEC
from trio_harness._conformance.oracle import answer_request
from trio_harness._conformance.runner import Case, judge, load_cases
from trio_harness._json import loads_any_depth

#: Fewest kit cases each mutant must fail.
SEVERAL = 2


@pytest.fixture(scope="module")
def kit() -> list[tuple[Case, dict[str, Any], dict[str, Any]]]:
    """Every kit case, its request as a port reads it, and the reference's answer line."""
    cases = []
    for case in load_cases(SPEC):
        request = loads_any_depth(case.text)
        assert type(request) is dict
        cases.append((case, request, answer_request(copy.deepcopy(request))))
    return cases


def failures(
    name: str, kit: list[tuple[Case, dict[str, Any], dict[str, Any]]], limit: int
) -> list[str]:
    """The first ``limit`` kit cases the mutant fails (a kill needs no more: it stays fast)."""
    planted = MUTANTS[name]
    failed = []
    for case, request, answer in kit:
        got = planted(copy.deepcopy(request), copy.deepcopy(answer), answer_request)
        if judge(case, got) != "pass":
            failed.append(case.id)
            if len(failed) == limit:
                break
    return failed


@pytest.fixture(scope="module")
def killed(kit: list[tuple[Case, dict[str, Any], dict[str, Any]]]) -> dict[str, list[str]]:
    return {name: failures(name, kit, SEVERAL) for name in sorted(MUTANTS)}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_kit_kills_each_mutant_with_several_cases(
    name: str, killed: dict[str, list[str]]
) -> None:
    assert len(killed[name]) == SEVERAL, (name, killed[name])


def test_the_unmutated_port_passes_every_case(
    kit: list[tuple[Case, dict[str, Any], dict[str, Any]]],
) -> None:
    assert [case.id for case, _, answer in kit if judge(case, answer) != "pass"] == []


def test_mutation_score(killed: dict[str, list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    score = sum(1 for failed in killed.values() if len(failed) == SEVERAL)
    with capsys.disabled():
        print(f"\nkit mutation score: {score} of {len(killed)} mutants fail {SEVERAL}+ cases")
        for name, failed in killed.items():
            print(f"  {name:<42} {', '.join(failed)}")
    assert score == len(killed) >= 18
