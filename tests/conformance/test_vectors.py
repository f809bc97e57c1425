"""Replay of the recorded upstream answers (validate / assert / assertObject) and the
JSON-Schema-Test-Suite subset, through the public functions, as check_upstream_vectors.py does.

Each op collects every mismatch and prints them, so one failure shows the whole picture.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.vector_cases import SUITE, SUITE_ABSENT, VECTORS, decode, has_undefined, load
from trio_harness import (
    JsonSchemaError,
    assert_object_json_schema,
    assert_supported_json_schema,
    validate_json_schema_value,
)
from trio_harness.lowlevel import compile_validator


@pytest.mark.parametrize(
    "path",
    [
        VECTORS,
        pytest.param(SUITE, marks=pytest.mark.skipif(not SUITE.is_file(), reason=SUITE_ABSENT)),
    ],
    ids=lambda path: path.name,
)
def test_validate_vectors_match_upstream_exactly(path: Path) -> None:
    cases = load(path, "validate")
    assert cases
    mismatches = []
    replayed = 0
    for case in cases:
        if not case.get("schemaOk", True):
            continue
        schema, value = decode(case["schema"]), decode(case["value"])
        if has_undefined(value):
            continue
        replayed += 1
        expected = case["expected"]["violations"]
        generic = validate_json_schema_value(schema, value, case["path"])
        compiled = compile_validator(schema)(value, case["path"])
        if generic != expected or compiled != expected:
            mismatches.append((case, generic, compiled))
    for case, generic, compiled in mismatches[:20]:
        print(json.dumps(case), "\n  generic ", generic, "\n  compiled", compiled)
    assert not mismatches, f"{len(mismatches)} of {replayed} validate vectors differ"
    assert replayed > 50


@pytest.mark.skipif(not SUITE.is_file(), reason=SUITE_ABSENT)
def test_suite_vectors_agree_with_the_official_verdicts() -> None:
    for case in load(SUITE, "validate"):
        verdict = validate_json_schema_value(
            decode(case["schema"]), decode(case["value"]), case["path"]
        )
        assert (verdict == []) == case["suiteValid"], case["source"]


@pytest.mark.parametrize("op", ["assert", "assertObject"])
def test_assert_vectors_match_upstream_exactly(op: str) -> None:
    assert_fn = assert_supported_json_schema if op == "assert" else assert_object_json_schema
    cases = load(VECTORS, op)
    assert cases
    mismatches = []
    for case in cases:
        schema = decode(case["schema"])
        if has_undefined(schema):
            continue
        try:
            assert_fn(schema)
            got: dict[str, Any] = {"ok": True}
        except JsonSchemaError as error:
            got = {
                "throws": {
                    "name": error.name,
                    "message": error.message,
                    "code": error.code,
                    "violations": error.violations,
                }
            }
        if got != case["expected"]:
            mismatches.append((case, got))
    for case, got in mismatches[:20]:
        print(json.dumps(case["schema"]), "\n  got", got, "\n  exp", case["expected"])
    assert not mismatches, f"{len(mismatches)} of {len(cases)} {op} vectors differ"
