"""Hypothesis properties of the validation layer: totality, compiled == generic, and agreement
with python-jsonschema (Draft 2020-12) on plain JSON values inside the subset."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from tests.support.strategies import any_values, json_values, subset_schemas
from trio_harness import (
    assert_object_json_schema,
    assert_supported_json_schema,
    validate_json_schema_value,
)
from trio_harness._validation.compiled import _build
from trio_harness.lowlevel import compile_validator

PATHS = st.sampled_from(["value", "", "a.b", "x[0]"])


@given(subset_schemas())
def test_generated_subset_schemas_are_accepted(schema: dict[str, Any]) -> None:
    assert_supported_json_schema(schema)
    if schema.get("type") == "object":
        assert_object_json_schema(schema)


@given(subset_schemas(), any_values(), PATHS)
def test_validation_is_total_and_compiled_equals_generic(
    schema: dict[str, Any], value: object, path: str
) -> None:
    generic = validate_json_schema_value(schema, value, path)
    assert isinstance(generic, list)
    assert all(isinstance(violation, str) for violation in generic)
    assert compile_validator(schema)(value, path) == generic


@given(subset_schemas(), json_values(), PATHS)
def test_compiled_collector_equals_generic_on_json_values(
    schema: dict[str, Any], value: object, path: str
) -> None:
    # _build bypasses the caches, so the generated code itself is exercised every time.
    assert _build(schema)(value, path) == validate_json_schema_value(schema, value, path)


@given(subset_schemas(), json_values())
def test_valid_means_the_same_as_python_jsonschema(schema: dict[str, Any], value: object) -> None:
    # Both treat True as not-a-number, 2.0 as an integer and 1 == 1.0 in enum/const, and oneOf
    # as "exactly one"; on lossless JSON values (no -0.0, ints within 2**53) they must agree.
    ours = validate_json_schema_value(schema, value) == []
    theirs = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert ours == theirs
