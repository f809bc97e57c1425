"""The strategies of ``trio_harness.testing`` produce what they claim."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trio_harness as th
from tests.support.vector_cases import expected_answer
from trio_harness import testing

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(st.data())
def test_drawn_valid_values_validate_and_drawn_invalid_ones_do_not(data: st.DataObject) -> None:
    schema = data.draw(testing.subset_schemas())
    th.assert_supported_json_schema(schema)
    checker = jsonschema.Draft202012Validator(schema)
    good = data.draw(testing.valid_values(schema))
    assert th.validate_json_schema_value(schema, good) == []
    assert checker.is_valid(good)
    bad = data.draw(testing.invalid_values(schema))
    assert th.validate_json_schema_value(schema, bad) != []
    assert not checker.is_valid(bad)


def test_a_schema_that_accepts_everything_has_no_invalid_values() -> None:
    assert testing.invalid_values({}).is_empty
    assert testing.valid_values({"type": "string", "const": "a", "enum": ["b"]}).is_empty


@SETTINGS
@given(st.data())
def test_argument_texts_are_of_their_kind(data: st.DataObject) -> None:
    parameters = data.draw(testing.parameter_maps())
    drawn = data.draw(testing.argument_texts(parameters))
    assert drawn.kind in testing.ARGUMENT_KINDS
    arguments = th.parse_arguments(drawn.text)
    violations = th.validate_args(parameters, arguments)
    if drawn.kind == "invalid-json":
        assert arguments == drawn.text  # not JSON: the raw text, never an object
    if drawn.kind in ("valid", "extra"):
        assert violations == []
    else:
        assert violations != []
    if drawn.kind == "missing":
        assert any(v.startswith("missing required property") for v in violations)


def test_argument_kinds_the_parameters_cannot_produce_are_left_out() -> None:
    only_missing = testing.argument_texts({"n": {"type": "integer"}}, kinds=("missing",))
    assert only_missing.is_empty


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(testing.scheduling_scenarios(max_calls=4))
def test_scenarios_round_trip_through_json_and_are_answered(scenario: dict[str, object]) -> None:
    text = json.dumps(scenario)
    assert json.loads(text) == scenario
    answer = expected_answer(json.loads(text))
    assert set(answer) >= {"events", "calls", "contexts", "outcome"}
    assert [entry["id"] for entry in answer["calls"]] == [
        call["id"]  # type: ignore[index]
        for call in scenario["calls"]  # type: ignore[attr-defined]
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    testing.scheduling_scenarios(
        max_calls=3,
        caps=st.just(2),
        abort=False,
        failures=False,
        registry_changes=False,
        hooks=False,
        timeouts=False,
    )
)
def test_the_knobs_turn_features_off(scenario: dict[str, object]) -> None:
    assert scenario["cap"] == 2
    assert "abortAtMs" not in scenario
    assert "schedulerFailure" not in scenario
    calls = scenario["calls"]
    assert isinstance(calls, list)
    assert 1 <= len(calls) <= 3
    for call in calls:
        assert not {"pre", "guard", "wrapper", "post", "onCommit"} & set(call)
    assert all("timeoutMs" not in tool for tool in scenario["tools"])  # type: ignore[attr-defined]


def test_run_scenario_rejects_what_is_not_a_scenario() -> None:
    with pytest.raises(ValueError, match="calls"):
        expected_answer({"calls": "nope"})
