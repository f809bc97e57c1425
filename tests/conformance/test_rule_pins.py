"""Every validation message of the subset is expected by at least three kit cases, and every
scheduling behaviour is shown by at least three scenarios: no single vector line guards a
message or a rule (an edited line would leave the rule unguarded)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Final

from tests.conformance.support import SPEC
from trio_harness._conformance import BEHAVIOURS, load_cases
from trio_harness._conformance.validation_edges import edge_cases
from trio_harness._conformance.validation_pins import PIN_GROUPS

#: Each message of upstream's subset (assert, the DSL compiler, validate), as a pattern of
#: what follows the path or the value in it. Not here: ``is circular`` (JSON text has no cycles,
#: so no case can carry one; ``spec/UNREACHED.md``).
MESSAGES: Final = {
    "schema object": r" must be a schema object$",
    "annotation lossless": r" annotation must be lossless JSON data$",
    "unknown keyword": r" is not a supported keyword \(subset: .*\)$",
    "description string": r"\.description must be a string$",
    "title string": r"\.title must be a string$",
    "type and oneOf": r" cannot declare both type and oneOf$",
    "requires type": r" requires type or oneOf$",
    "beside oneOf": r" is not supported beside oneOf$",
    "oneOf two schemas": r"\.oneOf must be an array of at least two schemas$",
    "type arrays": r"\.type must be a single type string \(type arrays are not supported\)$",
    "type one of": r"\.type must be one of object/array/string/number/integer/boolean/null$",
    "not on type": r" is not supported on type \"\w+\"$",
    "properties object": r"\.properties must be an object of schemas$",
    "enum typed": r"\.enum must be a non-empty array of (?!scalar)\w+ values$",
    "const typed": r"\.const must be an? \w+ value$",
    "const in enum": r"\.const must be one of .*\.enum when both are declared$",
    "required strings": r"\.required must be an array of strings$",
    "required names": r"\.required names \".*\" which is not in properties$",
    "additionalProperties boolean": r"\.additionalProperties must be a boolean$",
    "object root": r'^schema\.type must be "object" \(structured output is object-rooted\)$',
    "DSL keyword": r" is not supported by the value schema DSL$",
    "DSL schema object": r" must be a value schema object$",
    "DSL required true": r"\.required must be true when present$",
    "DSL property map": r" must be an object of value schemas$",
    "DSL oneOf": r"\.oneOf must be an array of at least two value schemas$",
    "DSL additionalProperties": r"\.additionalProperties must be explicitly true or false$",
    "DSL enum": r"\.enum must be a non-empty array of scalar values$",
    "DSL type": r"\.type must be string/number/integer/boolean/null/array/object/json, or use oneOf$",
    "lossless value": r"\" must be a lossless JSON value$",
    "lossless object": r"\" must be a lossless JSON object$",
    "lossless array": r"\" must be a dense lossless JSON array$",
    "enum value": r"\" must be one of .*$",
    "oneOf matched": r"\" must match exactly one oneOf branch \(matched \d+\)$",
    "an object": r"\" must be an object$",
    "an array": r"\" must be an array$",
    "a string": r"\" must be a string$",
    "a number": r"\" must be a number$",
    "finite number": r"\" must be a finite JSON number$",
    "an integer": r"\" must be an integer$",
    "a boolean": r"\" must be a boolean$",
    "null": r"\" must be null$",
    "missing required": r"^missing required property \".*\"$",
    "undeclared": r"\" is not a declared property \(additionalProperties: false\)$",
    "const value": r"\" must be .*$",
}


def _messages(expected: Any) -> list[str]:
    if type(expected) is not dict:
        return []
    found = expected.get("violations")
    throws = expected.get("throws")
    if type(throws) is dict and type(throws.get("violations")) is list:
        found = throws["violations"]
    return [message for message in found or [] if type(message) is str]


def _rule(message: str) -> str | None:
    # The most specific pattern first: ``must be a string`` before ``must be <const>``.
    for name, pattern in MESSAGES.items():
        if re.search(pattern, message):
            return name
    return None


def test_every_message_of_the_subset_is_expected_by_three_cases_or_more() -> None:
    counts: Counter[str] = Counter()
    unknown = []
    for case in load_cases(SPEC, ["validation/*"]):
        rules = {_rule(message) for message in _messages(case.expected)}
        unknown += [message for message in _messages(case.expected) if _rule(message) is None]
        counts.update(rule for rule in rules if rule is not None)
    assert unknown == []
    thin = {name: counts[name] for name in MESSAGES if counts[name] < 3}
    assert thin == {}


def test_every_scheduling_behaviour_is_shown_by_three_scenarios_or_more() -> None:
    counts = Counter(tag for case in load_cases(SPEC, ["scheduling/*"]) for tag in case.tags)
    thin = {
        behaviour.id: counts[behaviour.id] for behaviour in BEHAVIOURS if counts[behaviour.id] < 3
    }
    assert thin == {}


def test_mutant_rules_are_shown_by_their_edge_scenarios() -> None:
    # Issue 33: blind mutants of upstream 074 and 111 survived the kit; each of these scenarios
    # shows the rule the mutant broke (its answer carries the behaviour's tag).
    for pattern, tag in (
        ("scheduling/edge/wrapper-success-abort-*", "e.8 wrapper-success-aborted"),
        ("scheduling/edge/failure-while-preparing-*", "f.5 failure-stops-prepared"),
    ):
        cases = load_cases(SPEC, [pattern])
        assert len(cases) >= 3, pattern
        assert all(tag in case.tags for case in cases), pattern


def test_each_pinned_rule_has_three_cases_or_more() -> None:
    ids = [case["id"] for case in edge_cases()]
    for group, requests in PIN_GROUPS:
        assert len(requests) >= 3, group
        assert sum(1 for case_id in ids if case_id.startswith(f"{group}/")) == len(requests)


def test_scheduling_cases_hold_unions_whose_branches_overlap() -> None:
    # Issue 27: a union check that stops at the first matching branch passed every scheduling
    # case while their unions could not overlap. Each of these has calls matching two branches
    # (rejected before dispatch) beside calls matching one (their bodies run) in one window.
    cases = load_cases(SPEC, ["scheduling/edge/union-overlap-*"])
    assert len(cases) >= 3
    for case in cases:
        texts = [
            " ".join(part["text"] for part in event["data"]["message"]["content"][0]["content"])
            for event in case.expected["events"]
            if event["type"] == "tool/result"
        ]
        assert any("must match exactly one oneOf branch (matched 2)" in text for text in texts)
        assert any(not text.startswith("Error:") for text in texts)
