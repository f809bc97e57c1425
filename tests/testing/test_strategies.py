"""The strategies of ``trio_harness.testing``: sound, reaching every edge, bounded by their knobs,
constructive (no filter, no health check), shrinking to the simplest case, and following the
hypothesis conventions (``InvalidArgument`` when drawn, never a silent ``nothing()``)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument, NoSuchExample

import trio_harness as th
from tests.support.vector_cases import expected_answer
from trio_harness import is_json_value, testing
from trio_harness.lowlevel import MAX_COMPILED_DEPTH, compile_validator

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
#: ``find`` that shrinks (for the shrinking tests), and one that stops at the first hit.
FIND = settings(max_examples=3000, deadline=None, database=None)
REACH = settings(max_examples=3000, deadline=None, database=None, phases=[Phase.generate])
NEVER = settings(max_examples=300, deadline=None, database=None, phases=[Phase.generate])
MAX_INT = int(sys.float_info.max)
ROOT = Path(__file__).resolve().parents[2]


def leaves(value: Any) -> Iterator[Any]:
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
        else:
            yield item


def containers(value: Any) -> Iterator[Any]:
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) in (dict, list):
            yield item
            stack.extend(item.values() if type(item) is dict else item)


def is_negative_zero(value: object) -> bool:
    return type(value) is float and value == 0 and math.copysign(1.0, value) < 0


# ---------------------------------------------------------------------------------------------
# Soundness
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_drawn_valid_values_validate_and_drawn_invalid_ones_do_not(data: st.DataObject) -> None:
    schema = data.draw(testing.subset_schemas())
    th.assert_supported_json_schema(schema)
    checker = jsonschema.Draft202012Validator(schema)
    compiled = compile_validator(schema)
    good = data.draw(testing.valid_values(schema))
    assert th.validate_json_schema_value(schema, good) == []
    assert compiled(good, "value") == []
    assert checker.is_valid(good)
    bad = data.draw(testing.invalid_values(schema))
    violations = th.validate_json_schema_value(schema, bad)
    assert violations != []
    assert compiled(bad, "value") == violations
    # python-jsonschema has no notion of lossless JSON: it accepts -0.0 and huge integers.
    assert not checker.is_valid(bad) or not is_json_value(bad)


@SETTINGS
@given(st.data())
def test_lossless_invalid_values_are_rejected_by_python_jsonschema_too(
    data: st.DataObject,
) -> None:
    schema = data.draw(testing.subset_schemas())
    try:
        bad = data.draw(testing.invalid_values(schema, non_lossless=False))
    except InvalidArgument:
        return  # the schema accepts every lossless value
    assert is_json_value(bad)
    assert th.validate_json_schema_value(schema, bad) != []
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)


@SETTINGS
@given(testing.json_values())
def test_json_values_are_lossless(value: Any) -> None:
    assert is_json_value(value)
    assert not any(is_negative_zero(leaf) for leaf in leaves(value))


# ---------------------------------------------------------------------------------------------
# Edges
# ---------------------------------------------------------------------------------------------

NUMBER = {"type": "number"}
INTEGER = {"type": "integer"}
STRING = {"type": "string"}
KV = {"oneOf": [STRING, INTEGER]}
OBJECT = {
    "type": "object",
    "properties": {"a": STRING, "b": INTEGER, "c": {"type": "array", "items": NUMBER}},
    "required": ["a", "b"],
    "additionalProperties": False,
}


def found(strategy: st.SearchStrategy[Any], condition: Callable[[Any], bool]) -> Any:
    """The simplest value satisfying ``condition`` (shrunk)."""
    return find(strategy, condition, settings=FIND)


def reached(strategy: st.SearchStrategy[Any], condition: Callable[[Any], bool]) -> Any:
    """Some value satisfying ``condition`` (the first one drawn)."""
    return find(strategy, condition, settings=REACH)


def draw_once(strategy: st.SearchStrategy[Any]) -> Any:
    return find(strategy, lambda value: True, settings=settings(max_examples=1, database=None))


@pytest.mark.parametrize(
    ("strategy", "condition"),
    [
        (testing.valid_values(INTEGER), lambda v: type(v) is float and v == 2.0),
        (testing.valid_values(INTEGER), lambda v: type(v) is float and abs(v) >= 1e300),
        (testing.valid_values(NUMBER), lambda v: type(v) is int and v > 2**53),
        (testing.valid_values(NUMBER), lambda v: v == MAX_INT),
        (testing.valid_values(NUMBER), lambda v: type(v) is float and 0 < abs(v) < 1e-300),
        (testing.valid_values(STRING), lambda v: len(v) >= 150),
        (testing.valid_values(STRING), lambda v: v == "e\u0301"),
        (testing.valid_values({"type": "array", "items": INTEGER}), lambda v: len(v) >= 20),
        (testing.valid_values({"type": "object"}), lambda v: "" in v),
        (testing.valid_values({"type": "object"}), lambda v: any(not k.isascii() for k in v)),
        (testing.valid_values({"type": "object"}), lambda v: "__proto__" in v),
        (testing.valid_values(OBJECT), lambda v: list(v)[:2] == ["b", "a"]),
        (testing.valid_values(KV), lambda v: type(v) is float),
        # Fractions near 2**52, where x + 0.5 could round to an integer (it once did).
        (
            testing.valid_values({"oneOf": [NUMBER, INTEGER]}),
            lambda v: abs(v) > 2**51 and not v.is_integer(),
        ),
        (testing.invalid_values(NUMBER), is_negative_zero),
        (testing.invalid_values(INTEGER), lambda v: type(v) is int and v > MAX_INT),
        (testing.invalid_values(INTEGER), lambda v: type(v) is float and not v.is_integer()),
        (testing.invalid_values({}), is_negative_zero),
        (
            testing.invalid_values(OBJECT),
            lambda v: type(v) is dict and is_negative_zero(v.get("b")),
        ),
        (testing.invalid_values({"type": "integer", "enum": [2**53 + 1]}), lambda v: v == 2**53),
        (testing.invalid_values({"type": "string", "enum": ["é"]}), lambda v: v == "e\u0301"),
        (
            testing.invalid_values({"type": "number", "enum": [0.1]}),
            lambda v: type(v) is float and 0.1 < v < 0.11,
        ),
        (
            testing.invalid_values(OBJECT),
            lambda v: type(v) is dict and {"a", "b"} <= set(v) and len(v) >= 4,
        ),
        (
            testing.invalid_values(OBJECT),
            lambda v: len(th.validate_json_schema_value(OBJECT, v)) >= 3,
        ),
    ],
    ids=lambda item: "" if callable(item) else str(item)[:60],
)
def test_the_value_strategies_reach_the_edges(
    strategy: st.SearchStrategy[Any], condition: Callable[[Any], bool]
) -> None:
    assert condition(reached(strategy, condition))


def test_a_oneof_value_is_built_for_one_branch_and_misses_the_others() -> None:
    overlap = {"oneOf": [NUMBER, INTEGER]}  # only fractional numbers match exactly one
    value = found(testing.valid_values(overlap), lambda v: True)
    assert value == 0.5  # the simplest fraction
    both = {
        "oneOf": [
            {"type": "object"},
            {"type": "object", "properties": {"a": {}}, "required": ["a"]},
        ]
    }
    assert found(testing.valid_values(both), lambda v: True) == {}
    # Matching two branches is a way to break a oneOf.
    strings = {"oneOf": [STRING, {"type": "string", "enum": ["x"]}]}
    assert found(testing.invalid_values(strings), lambda v: v == "x") == "x"


@settings(max_examples=100, deadline=None)  # every health check on: nothing is filtered
@given(
    testing.valid_values({"oneOf": [NUMBER, INTEGER]}),
    testing.valid_values({"oneOf": [OBJECT, {"type": "object", "properties": {"a": STRING}}]}),
    testing.invalid_values({"oneOf": [{}, STRING]}),
)
def test_oneof_values_are_drawn_without_filtering(fraction: Any, obj: Any, bad: Any) -> None:
    assert type(fraction) is float
    assert not fraction.is_integer()
    assert th.validate_json_schema_value(OBJECT, obj) != []
    assert th.validate_json_schema_value({"oneOf": [{}, STRING]}, bad) != []


def test_values_shrink_to_the_simplest_case() -> None:
    assert found(testing.valid_values(OBJECT), lambda v: True) == {"a": "", "b": 0}
    assert found(testing.invalid_values(STRING), lambda v: True) is None
    assert found(testing.invalid_values(OBJECT), lambda v: True) is None
    lossless = testing.invalid_values(OBJECT, non_lossless=False)
    assert found(lossless, lambda v: type(v) is dict) == {}
    assert found(testing.valid_values(KV), lambda v: True) == 0
    parameters = {"key": {"type": "string", "required": True}}
    assert found(testing.argument_texts(parameters), lambda v: True).text == "{"
    valid = found(testing.argument_texts(parameters, ("valid",)), lambda v: True)
    assert valid == testing.ArgumentText("valid", '{"key": ""}')


# ---------------------------------------------------------------------------------------------
# Knobs
# ---------------------------------------------------------------------------------------------


BOUNDED = {"max_size": 2, "max_string_size": 3, "big_numbers": False}
PLAIN_SCHEMAS = [
    {},
    NUMBER,
    INTEGER,
    STRING,
    KV,
    OBJECT,
    {"type": "object"},
    {"type": "array"},
    {"type": "array", "items": {"type": "array", "items": STRING}},
]


@SETTINGS
@given(st.sampled_from(PLAIN_SCHEMAS), st.data())
def test_the_knobs_bound_the_values(schema: dict[str, Any], data: st.DataObject) -> None:
    # (Members of a schema's enum or const are drawn whatever their size.)
    for value in (
        data.draw(testing.valid_values(schema, **BOUNDED)),
        data.draw(testing.invalid_values(schema, **BOUNDED)),
        data.draw(testing.json_values(**BOUNDED)),
    ):
        for leaf in leaves(value):
            if type(leaf) is str:
                assert len(leaf) <= 3
            if type(leaf) in (int, float):
                assert abs(leaf) <= 2**53
        for container in containers(value):
            # Undeclared keys and extra items are bounded; a broken value may add a wrong
            # item, or a wrong or undeclared key.
            assert len(container) <= 2 + 4


def test_keys_and_non_lossless_knobs() -> None:
    keys = st.sampled_from(["k1", "k2"])
    value = reached(testing.valid_values({"type": "object"}, keys=keys), lambda v: len(v) == 3)
    assert {key.rstrip("_") for key in value} <= {"k1", "k2"}  # distinct keys, from the knob
    lossless = testing.invalid_values(NUMBER, non_lossless=False)
    with pytest.raises(NoSuchExample):
        find(lossless, lambda v: not is_json_value(v), settings=NEVER)
    with pytest.raises(InvalidArgument, match="accepts every lossless JSON value"):
        draw_once(testing.invalid_values({}, non_lossless=False))


# ---------------------------------------------------------------------------------------------
# Hypothesis conventions: InvalidArgument when drawn
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: testing.valid_values("not a schema"), "inside the enforced subset"),
        (lambda: testing.valid_values({"type": "string", "minLength": 1}), "minLength"),
        (lambda: testing.valid_values({"type": "string", "pattern": "^a"}), "pattern"),
        (lambda: testing.invalid_values({"type": "nope"}), "inside the enforced subset"),
        (lambda: testing.valid_values({"oneOf": [{}, {}]}), "matches another branch too"),
        (
            lambda: testing.valid_values(
                {"type": "object", "properties": {"x": {"oneOf": [{}, {}]}}, "required": ["x"]}
            ),
            r"schema\.properties\.x\.oneOf",
        ),
        (lambda: testing.valid_values(STRING, max_size=-1), "max_size"),
        (lambda: testing.valid_values(STRING, keys="k"), "keys"),
        (lambda: testing.json_values(max_leaves=0), "max_leaves"),
        (lambda: testing.json_values(big_numbers="yes"), "big_numbers"),  # type: ignore[arg-type]
        (lambda: testing.subset_schemas(max_leaves=0), "max_leaves"),
        (lambda: testing.parameter_maps(min_size=3, max_size=2), "max_size"),
        (lambda: testing.argument_texts({}, kinds=("nope",)), "unknown kinds"),  # type: ignore[arg-type]
        (lambda: testing.argument_texts({}, kinds="valid"), "sequence of kind names"),  # type: ignore[arg-type]
        (lambda: testing.argument_texts({}, kinds=()), "kinds is empty"),
        (
            lambda: testing.argument_texts({"n": {"type": "integer"}}, kinds=("missing",)),
            "cannot produce",
        ),
        (lambda: testing.argument_texts({"n": {"type": "text"}}), "not a parameter map"),
        (lambda: testing.argument_texts("nope"), "not a parameter map"),
        (lambda: testing.argument_texts({}, max_depth=0), "max_depth"),
    ],
)
def test_bad_arguments_raise_invalid_argument_when_drawn(
    make: Callable[[], st.SearchStrategy[Any]], message: str
) -> None:
    strategy = make()  # building the strategy never raises, as with hypothesis's own
    with pytest.raises(InvalidArgument, match=message):
        draw_once(strategy)
    with pytest.raises(InvalidArgument, match=message):
        strategy.validate()


def test_an_unsatisfiable_schema_fails_with_a_clear_message_not_a_health_check() -> None:
    @settings(max_examples=5, database=None)
    @given(testing.valid_values({"oneOf": [{}, {}]}))
    def check(value: Any) -> None:
        raise AssertionError("never drawn")

    with pytest.raises(InvalidArgument, match=r"no JSON value satisfies this schema"):
        check()


# ---------------------------------------------------------------------------------------------
# Argument text
# ---------------------------------------------------------------------------------------------


def kind_of(parameters: Any, text: str) -> str:
    """What the pool makes of the text, in the terms of ``ArgumentText.kind``."""
    arguments = th.parse_arguments(text)
    violations = th.validate_args(parameters, arguments)
    if type(arguments) is str and arguments == text and text != "":
        return "invalid-json"
    if type(arguments) is not dict:
        return "not-an-object"
    if not violations:
        return "valid"
    if any(v.startswith("missing required property") for v in violations):
        return "missing"
    return "wrong-type"


@SETTINGS
@given(st.data())
def test_argument_texts_are_of_their_kind(data: st.DataObject) -> None:
    parameters = data.draw(testing.parameter_maps())
    drawn = data.draw(testing.argument_texts(parameters))
    assert drawn.kind in testing.ARGUMENT_KINDS
    assert kind_of(parameters, drawn.text) == ("valid" if drawn.kind == "extra" else drawn.kind)


PARAMETERS = {
    "key": {"type": "string", "required": True},
    "n": {"type": "number"},
    "i": {"type": "integer"},
}


def texts(*kinds: str) -> st.SearchStrategy[testing.ArgumentText]:
    return testing.argument_texts(PARAMETERS, kinds)  # type: ignore[arg-type]


def parsed_depth(text: str) -> int:
    depth = best = 0
    for char in text:
        depth += char in "[{"
        depth -= char in "]}"
        best = max(best, depth)
    return best


@pytest.mark.parametrize(
    ("kinds", "condition"),
    [
        (("invalid-json",), lambda t: t.text.strip() == "" and t.text != ""),
        (("invalid-json",), lambda t: t.text.startswith("\ufeff{")),
        (("invalid-json",), lambda t: t.text.startswith('{"') and t.text.endswith("}x")),
        (("invalid-json",), lambda t: t.text.startswith("{") and "}" not in t.text),
        (("invalid-json",), lambda t: t.text == "[" * len(t.text) and len(t.text) > 1000),
        (("invalid-json",), lambda t: "NaN" in t.text),
        (("extra",), lambda t: parsed_depth(t.text) > 1000),
        (("valid",), lambda t: t.text.count('"key"') == 2),
        (("valid",), lambda t: t.text[0] in " \t\n\r" and t.text[-1] in " \t\n\r"),
        (("valid",), lambda t: "\n  " in t.text),
        (("valid",), lambda t: "\\u00" in t.text),
        (("valid",), lambda t: any(len(x) > 16 and x.isdigit() for x in t.text.split())),
        (("valid",), lambda t: "E+" in t.text),
        (("wrong-type",), lambda t: '"n": -0' in t.text or '"i": -0' in t.text),
        (("wrong-type",), lambda t: "1e400" in t.text),
        (("wrong-type",), lambda t: t.text.count('"key"') == 2),
        (("not-an-object",), lambda t: type(th.parse_arguments(t.text)) is str),
        (("not-an-object",), lambda t: type(th.parse_arguments(t.text)) is list),
    ],
)
def test_argument_texts_reach_the_odd_texts(
    kinds: tuple[str, ...], condition: Callable[[testing.ArgumentText], bool]
) -> None:
    text = reached(texts(*kinds), condition)
    assert kind_of(PARAMETERS, text.text) == ("valid" if text.kind == "extra" else text.kind)


@pytest.mark.parametrize(
    "kind", ["string", "number", "integer", "boolean", "null", "json", "array", "object", "oneOf"]
)
def test_parameter_maps_reach_every_dsl_kind(kind: str) -> None:
    def has(parameters: dict[str, Any]) -> bool:
        return any(spec.get("type", "oneOf") == kind for spec in parameters.values())

    parameters = reached(testing.parameter_maps(min_size=1), has)
    th.parameter_schema_spec_to_json_schema(parameters)  # a valid map


def test_parameter_maps_knobs() -> None:
    scalar = {"string", "number", "integer", "boolean", "null"}
    flat = testing.parameter_maps(min_size=1, max_size=2, nested=False)
    assert len(found(flat, lambda p: True)) == 1
    with pytest.raises(NoSuchExample):
        find(flat, lambda p: any(s["type"] not in scalar for s in p.values()), settings=NEVER)
    assert "" in reached(testing.parameter_maps(), lambda p: "" in p)


# ---------------------------------------------------------------------------------------------
# Type strategies and the hypothesis plugin
# ---------------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_from_type_gives_meaningful_library_values(data: st.DataObject) -> None:
    block = data.draw(st.from_type(th.ToolCallBlock))
    assert isinstance(block, th.ToolCallBlock)
    assert isinstance(block.arguments, str)
    result = data.draw(st.from_type(th.ToolExecutionResult))
    assert isinstance(result, th.ToolExecutionResult)
    if result.is_error:
        assert result.error is not None
        assert result.content[0]["text"] == "Error: " + result.error.message
    else:
        assert is_json_value(result.value)
    outcome = data.draw(st.from_type(th.StepOutcome))
    assert all(isinstance(entry.result, th.ToolExecutionResult) for entry in outcome.results)
    assert data.draw(st.from_type(th.ExecutionMode)) in (th.PARALLEL, th.EXCLUSIVE)
    for kind in (th.Allow, th.Deny, th.Ask, th.Accept, th.Block, th.SubCall, th.ToolError):
        assert isinstance(data.draw(st.from_type(kind)), kind)
    text = data.draw(st.from_type(testing.ArgumentText))
    assert text.kind in testing.ARGUMENT_KINDS


def test_from_type_reaches_provider_ids_and_argument_text() -> None:
    block = reached(
        st.from_type(th.ToolCallBlock),
        lambda b: b.id.startswith("call_") and type(th.parse_arguments(b.arguments)) is dict,
    )
    assert th.parse_arguments(block.arguments) != block.arguments
    assert reached(st.from_type(th.ToolExecutionResult), lambda r: r.concludes_turn)


PLUGIN_PROBES = {
    "hypothesis first": """
import sys
import hypothesis
from hypothesis import strategies as st
import trio_harness_hypothesis as plugin
# Importing hypothesis must not import trio_harness.
assert "trio_harness" not in sys.modules, "imported eagerly"
plugin._hypothesis_setup_hook()  # what the entry point runs (idempotent)
assert "trio_harness" not in sys.modules, "imported by the hook"
import trio_harness as th  # registers itself: hypothesis is imported
""",
    "trio_harness first": """
import sys
import trio_harness as th
assert "hypothesis" not in sys.modules
import hypothesis
from hypothesis import strategies as st
import trio_harness_hypothesis as plugin
plugin._hypothesis_setup_hook()  # what the entry point runs when hypothesis is imported
""",
}


@pytest.mark.parametrize("order", sorted(PLUGIN_PROBES))
def test_the_plugin_is_the_setup_hook_and_registers_in_either_order(order: str) -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert (
        "[project.entry-points.hypothesis]\n"
        'trio_harness = "trio_harness_hypothesis:_hypothesis_setup_hook"'
    ) in pyproject
    probe = (
        PLUGIN_PROBES[order]
        + """
block = st.from_type(th.ToolCallBlock).example()
assert isinstance(block, th.ToolCallBlock) and isinstance(block.arguments, str), block
assert "trio_harness.testing" not in sys.modules  # the value types need no testing import
assert not [f for f in sys.meta_path if type(f).__module__.startswith("trio_harness")]
print("ok")
"""
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "HYPOTHESIS_NO_PLUGINS": "1"},
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"


# ---------------------------------------------------------------------------------------------
# Scheduling scenarios (the kit's generator, re-exported)
# ---------------------------------------------------------------------------------------------


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


def test_deep_schemas_draw() -> None:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(MAX_COMPILED_DEPTH // 2):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    value = reached(testing.valid_values(schema), lambda v: True)
    assert th.validate_json_schema_value(schema, value) == []
