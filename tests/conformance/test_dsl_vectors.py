"""Replay the recorded upstream answers for the DSL compilers, validate_args and parse_arguments.

Same decoding and comparison as ``check_upstream_vectors.py``: tagged special numbers decoded,
cases containing JS ``undefined`` skipped, compiled schemas compared including key order, and
``-0.0`` told apart from ``0``. The only allowed difference: ``parse_arguments`` keeps integers
beyond 2**53 exact where JavaScript rounds them (documented porting decision).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import trio_harness as th
from tests.support.vector_cases import VECTORS, decode, has_undefined, load, same

_OPS = ("compileParams", "compileValue", "validateArgs", "parseArguments")


def _load() -> list[dict[str, Any]]:
    cases = load(VECTORS, _OPS)
    # JS ``undefined`` has no Python value: such cases are left out, as the checker does.
    return [
        case
        for case in cases
        if not any(has_undefined(decode(case.get(key))) for key in ("spec", "args"))
    ]


_CASES = _load()


def _case_id(case: dict[str, Any]) -> str:
    return str(case["op"])


@pytest.mark.parametrize("case", _CASES, ids=_case_id)
def test_upstream_vector(case: dict[str, Any]) -> None:
    op, expected = case["op"], case["expected"]
    if op == "parseArguments":
        got = th.parse_arguments(case["raw"])
        want = decode(expected["value"])
        if (
            isinstance(got, int)
            and not isinstance(got, bool)
            and isinstance(want, float)
            and want != 0
            and abs(got) > 2**53
        ):
            # porting decision: Python keeps big integers exact
            assert float(got) == want
            return
        assert same(got, want), (case["raw"], got, want)
        return

    spec = decode(case["spec"])
    if op == "validateArgs":
        args = decode(case["args"])
        if "violations" in expected:
            assert th.validate_args(spec, args) == expected["violations"]
        else:
            with pytest.raises(th.JsonSchemaError) as info:
                th.validate_args(spec, args)
            assert info.value.violations == expected["throws"]["violations"]
        return

    compile_fn = (
        th.parameter_schema_spec_to_json_schema
        if op == "compileParams"
        else th.value_schema_spec_to_json_schema
    )
    if "schema" in expected:
        got_schema = compile_fn(spec)
        assert same(got_schema, decode(expected["schema"])), json.dumps(got_schema)
    else:
        with pytest.raises(th.JsonSchemaError) as info:
            compile_fn(spec)
        assert info.value.name == expected["throws"]["name"]
        assert info.value.violations == expected["throws"]["violations"]
        assert info.value.message == expected["throws"]["message"]
