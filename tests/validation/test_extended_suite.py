"""The extended vocabulary held to the official JSON-Schema-Test-Suite (draft 2020-12).

Every case of the files of every extended keyword runs: the schema is rewritten by
``normalize_json_schema`` (which must keep its meaning exactly: no unkept part, no violation),
then both validators (the reference walker and the compiled one) must give the suite's answer.
The suite is read from ``../shared/json-schema-test-suite`` relative to the repository root.

A few schemas use keywords outside the subset (``patternProperties``, ``allOf`` of two
``properties``...): normalisation reports them as unkept, and they are pinned in ``NOT_EXPRESSIBLE``
so that a new one cannot slip by.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import trio_harness as th
from trio_harness.lowlevel import compile_extended_validator

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT.parent / "shared" / "json-schema-test-suite" / "tests" / "draft2020-12"
FILES = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "additionalProperties",
    "prefixItems",
    "format",
]
#: (file, group description) → why the schema has no exact subset+extension form.
NOT_EXPRESSIBLE = {
    (
        "additionalProperties",
        "additionalProperties being false does not allow other properties",
    ): "patternProperties",
    ("additionalProperties", "non-ASCII pattern with additionalProperties"): "patternProperties",
    (
        "additionalProperties",
        "additionalProperties does not look in applicators",
    ): "allOf beside properties of another node",
    ("additionalProperties", "additionalProperties with propertyNames"): "propertyNames",
    ("additionalProperties", "dependentSchemas with additionalProperties"): "dependentSchemas",
    ("prefixItems", "prefixItems with boolean schemas"): "a false schema",
}
#: (file, group description) → the construct the ``pattern`` subset rejects at definition time.
REJECTED_PATTERNS = {
    ("pattern", "pattern with Unicode property escape requires unicode mode"): "\\p",
}


def load_groups() -> list[tuple[str, dict[str, Any]]]:
    if not SUITE.is_dir():
        return []
    groups = []
    for name in FILES:
        for group in json.loads((SUITE / f"{name}.json").read_text(encoding="utf-8")):
            groups.append((name, group))
    return groups


GROUPS = load_groups()
pytestmark = pytest.mark.skipif(
    not GROUPS, reason=f"the JSON-Schema-Test-Suite is not at {SUITE} (shared material absent)"
)


@pytest.mark.parametrize(
    ("name", "group"), GROUPS, ids=[f"{name}: {group['description']}" for name, group in GROUPS]
)
def test_suite_group(name: str, group: dict[str, Any]) -> None:
    normalized = th.schema.normalize_json_schema(group["schema"], tool_input=False)
    key = (name, group["description"])
    if key in NOT_EXPRESSIBLE:
        assert not normalized.exact, "now expressible: remove it from NOT_EXPRESSIBLE"
        assert normalized.unkept, "an inexpressible part must be reported"
        return
    if key in REJECTED_PATTERNS:
        assert normalized.unkept == ()
        assert any(REJECTED_PATTERNS[key] in violation for violation in normalized.violations)
        return
    assert normalized.unkept == ()
    assert normalized.violations == ()
    compiled = compile_extended_validator(normalized.schema)
    for case in group["tests"]:
        walked = th.schema.validate_extended_value(normalized.schema, case["data"])
        assert (walked == []) is case["valid"], (case["description"], walked)
        assert compiled(case["data"], "value") == walked, case["description"]


def test_every_file_is_there_and_almost_every_group_is_expressible() -> None:
    assert len(GROUPS) > 60
    expressible = [g for n, g in GROUPS if (n, g["description"]) not in NOT_EXPRESSIBLE]
    assert len(expressible) == len(GROUPS) - len(NOT_EXPRESSIBLE)
