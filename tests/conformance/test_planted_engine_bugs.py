"""A bug planted in any one validation engine fails the kit's validation vectors.

The reference oracle answers validation cases with the validator ``define_tool`` runs, once every
other engine gave the same answer (``_validation/crosscheck.py``). Each test here plants one
plausible bug in one engine only (one table lookup, one generated branch, one closure), runs the
kit's validation vectors (``upstream-vectors.jsonl`` and ``validation-edges.jsonl``) through the
oracle as ``conformance run`` does in-process, and requires a failing case.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conformance.support import SPEC
from trio_harness._conformance.oracle import answer_request
from trio_harness._conformance.runner import Case, judge, load_cases
from trio_harness._json import loads_any_depth
from trio_harness._validation import (
    ValidatorsDisagree,
    checked_violations,
    codegen,
    codegen_check,
    compiled,
    extended,
    extended_compiled,
    rules,
    walker,
)

Plant = Callable[[pytest.MonkeyPatch], None]


@pytest.fixture(scope="module")
def vectors() -> list[Case]:
    return [case for case in load_cases(SPEC) if case.area == "validation"]


@pytest.fixture(autouse=True)
def fresh_validators(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty validator caches: code generated before (or under) a plant is never reused."""
    monkeypatch.setattr(compiled, "_by_identity", {})
    monkeypatch.setattr(compiled, "_by_text", {})


def first_failure(vectors: list[Case]) -> str | None:
    """The id of the first kit case the oracle fails, with the reason; ``None`` if all pass."""
    for case in vectors:
        verdict = judge(case, answer_request(loads_any_depth(case.text)))
        if not isinstance(verdict, str):
            return f"{case.id}: {verdict.diff}"
    return None


def _reworded(module: object, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``module``'s own binding of :func:`rules.violation` misspells violation ``name``."""

    def violation(kind: str, **holes: object) -> str:
        text = rules.violation(kind, **holes)
        return text.upper() if kind == name else text

    monkeypatch.setattr(module, "violation", violation)


def _walker_integer_accepts_fractions(monkeypatch: pytest.MonkeyPatch) -> None:
    tests = {**rules.TYPE_TESTS, "integer": rules.TYPE_TESTS["number"]}
    monkeypatch.setattr(walker, "TYPE_TESTS", tests)


def _walker_ignores_enum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walker, "_payload_violation", lambda node, value, path: None)


def _collector_misspells_undeclared(monkeypatch: pytest.MonkeyPatch) -> None:
    original = codegen._report

    def report(name: str, **holes: str) -> str:
        if name == "undeclared":
            return f"o.append(({rules.violation_code(name, **holes)}).upper())"
        return original(name, **holes)

    monkeypatch.setattr(codegen, "_report", report)


def _check_only_one_of_accepts_overlaps(monkeypatch: pytest.MonkeyPatch) -> None:
    # The compiled ``oneOf`` of overlapping branches, check-only code alone: "at least one"
    # instead of "exactly one" (the collector, never asked, is right).
    original = codegen_check.union_sum
    monkeypatch.setattr(
        codegen_check, "union_sum", lambda functions, var: f"min(1, {original(functions, var)})"
    )


def _collector_one_of_miscounts(monkeypatch: pytest.MonkeyPatch) -> None:
    original = codegen_check.union_sum  # the collector's own binding of it is patched
    monkeypatch.setattr(
        codegen, "union_sum", lambda functions, var: f"min(1, {original(functions, var)})"
    )


def _check_only_integer_accepts_fractions(monkeypatch: pytest.MonkeyPatch) -> None:
    original = codegen_check.scalar_test
    monkeypatch.setattr(
        codegen_check,
        "scalar_test",
        lambda type_name, var: original("number" if type_name == "integer" else type_name, var),
    )


def _extended_walker_misspells_required(monkeypatch: pytest.MonkeyPatch) -> None:
    _reworded(extended, "missing_required", monkeypatch)


def _extended_closures_misspell_required(monkeypatch: pytest.MonkeyPatch) -> None:
    _reworded(extended_compiled, "missing_required", monkeypatch)


def _extended_fast_arrays_accept_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extended_compiled, "_fast_array", lambda node, formats: lambda value: True)


def _extended_generated_check_accepts_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    # The extended vocabulary's generated check-only pass answers "valid" where its check fails.
    original = codegen.generate_check

    def generate_check(schema: dict[str, object], *, entry: bool = False) -> Any:
        generated = original(schema, entry=entry)
        text = generated.text.replace("return _walk(v, path)", "return []")
        return type(generated)(text, generated.entry, generated.constants)

    monkeypatch.setattr(codegen, "generate_check", generate_check)


PLANTS: dict[str, Plant] = {
    "walker: integer check accepts fractions": _walker_integer_accepts_fractions,
    "walker: enum and const not checked": _walker_ignores_enum,
    "generated collector: undeclared-property message misspelt": _collector_misspells_undeclared,
    "generated check-only oneOf: at least one branch": _check_only_one_of_accepts_overlaps,
    "generated collector oneOf: matches capped at one": _collector_one_of_miscounts,
    "generated check-only: integer accepts fractions": _check_only_integer_accepts_fractions,
    "extended walker: required message misspelt": _extended_walker_misspells_required,
    "extended closures: required message misspelt": _extended_closures_misspell_required,
    "extended check-only closures: arrays accept anything": _extended_fast_arrays_accept_anything,
    "extended generated check: failures answered valid": _extended_generated_check_accepts_failures,
}


def test_the_unplanted_engines_pass_every_validation_vector(vectors: list[Case]) -> None:
    assert len(vectors) > 4000
    assert first_failure(vectors) is None


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_a_bug_planted_in_one_engine_fails_the_kit(
    name: str, vectors: list[Case], monkeypatch: pytest.MonkeyPatch
) -> None:
    PLANTS[name](monkeypatch)
    assert first_failure(vectors) is not None, name


def test_a_disagreement_names_the_engine_and_both_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _walker_ignores_enum(monkeypatch)
    schema: dict[str, Any] = {"type": "string", "enum": ["a"]}
    with pytest.raises(ValidatorsDisagree, match="the walker answers \\[\\] where compile_"):
        checked_violations(schema, "b", "value")
    answer = answer_request({"op": "validate", "schema": schema, "value": "b"})
    assert answer["expected"]["throws"]["name"] == "ValidatorsDisagree"
