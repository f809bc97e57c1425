"""Plausible port bugs, planted one at a time into a port that otherwise answers as the reference.

A mutant is ``mutant(request, answer, ask)``: ``request`` is the decoded case line, ``answer`` the
reference's answer line to it, ``ask(request)`` the reference's answer to another request (a
mutant that misreads its input answers the misread request). It returns the mutant port's answer
line. Each bug is one that a port author plausibly writes; the kit must fail several cases for
each (``test_mutants.py``). Not a test module.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Callable
from typing import Any

Ask = Callable[[dict[str, Any]], dict[str, Any]]
Mutant = Callable[[dict[str, Any], dict[str, Any], Ask], dict[str, Any]]

MUTANTS: dict[str, Mutant] = {}


def mutant(function: Mutant) -> Mutant:
    MUTANTS[function.__name__.replace("_", "-")] = function
    return function


def _schedule(request: dict[str, Any]) -> bool:
    return request.get("op") == "schedule"


def _rerun(request: dict[str, Any], scenario: dict[str, Any], ask: Ask) -> dict[str, Any]:
    return {**ask({**request, "scenario": scenario}), "scenario": request["scenario"]}


def _expected(answer: dict[str, Any]) -> Any:
    return answer.get("expected")


def _texts(
    request: dict[str, Any], answer: dict[str, Any], ask: Ask, misread: Callable[[str], str]
) -> dict[str, Any]:
    """Answer as a port whose argument-text reader turns ``raw`` into ``misread(raw)``."""
    if request.get("op") == "parseArguments" and type(request.get("raw")) is str:
        raw = misread(request["raw"])
        return (
            answer
            if raw == request["raw"]
            else {**ask({**request, "raw": raw}), "raw": request["raw"]}
        )
    if not _schedule(request):
        return answer
    scenario = copy.deepcopy(request["scenario"])
    changed: dict[str, str] = {}
    for call in scenario.get("calls", []):
        text = call.get("arguments", "{}")
        if type(text) is str and misread(text) != text:
            changed[call["id"]] = text
            call["arguments"] = misread(text)
    if not changed:
        return answer
    rerun = _rerun(request, scenario, ask)
    for event in (_expected(rerun) or {}).get("events", []):
        data = event["data"]
        if event["type"] == "tool/call" and data["callId"] in changed:
            data["arguments"] = changed[data["callId"]]  # the log keeps the model's text
    return rerun


# -- validation ------------------------------------------------------------------------------


@mutant
def first_violation_only(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """Validation stops at the first violation."""
    expected = _expected(answer)
    if type(expected) is dict and type(expected.get("violations")) is list:
        expected["violations"] = expected["violations"][:1]
    return answer


@mutant
def whitespace_text_is_empty(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """Argument text of whitespace only is read like ``""`` (as ``{}``)."""
    return _texts(request, answer, ask, lambda raw: "" if not raw.strip(" \t\r\n") else raw)


@mutant
def trims_unicode_space(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """Argument text is trimmed with the language's own ``strip`` (U+00A0, U+2028, ...) first."""
    return _texts(request, answer, ask, lambda raw: raw.strip() if raw.strip() else raw)


@mutant
def ignores_trailing_text(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """A streaming JSON reader: the first value is taken, the text after it ignored."""

    def misread(raw: str) -> str:
        try:
            json.loads(raw)
            return raw
        except ValueError:
            pass
        try:
            _, end = json.JSONDecoder().raw_decode(raw.lstrip(" \t\r\n"))
        except ValueError:
            return raw
        return raw.lstrip(" \t\r\n")[:end]

    return _texts(request, answer, ask, misread)


_NEGATIVE_ZERO = re.compile(r"(?<![\d.eE+-])-0(?:\.0+)?(?:[eE][+-]?\d+)?(?![\d.eE])")


@mutant
def loses_negative_zero(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """``-0`` is read as ``0`` (a reader that parses integers into a machine int)."""
    return _texts(request, answer, ask, lambda raw: _NEGATIVE_ZERO.sub("0", raw))


def _unfloat(value: Any) -> Any:
    """Every integral float as a number no integer equals (how a typed reader treats ``2.0``)."""
    if type(value) is float and value.is_integer():
        return value + 0.5
    if type(value) is list:
        return [_unfloat(item) for item in value]
    if type(value) is dict:
        return {key: _unfloat(item) for key, item in value.items()}
    return value


@mutant
def integral_floats_are_not_integers(
    request: dict[str, Any], answer: dict[str, Any], ask: Ask
) -> Any:
    """A typed JSON reader: ``2.0`` stays a float, unequal to ``2`` and not an integer."""
    if request.get("op") in ("validate", "validateArgs", "assert", "compileValue", "compileParams"):
        misread = _unfloat(request)
        return answer if misread == request else ask(misread)
    if _schedule(request) and type(request["scenario"].get("cap")) is float:
        return _rerun(
            request, {**request["scenario"], "cap": request["scenario"]["cap"] + 0.5}, ask
        )
    return answer


@mutant
def empty_key_path_is_empty(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """A path of one empty segment is rendered ``""`` (upstream joins it raw: ``arguments``)."""
    expected = _expected(answer)
    if (
        request.get("op") in ("validate", "validateArgs")
        and '"":' in json.dumps(request, separators=(",", ":"))
        and type(expected) is dict
        and type(expected.get("violations")) is list
    ):
        expected["violations"] = [
            text.replace('"arguments" ', '"" ', 1) for text in expected["violations"]
        ]
    return answer


# -- scheduling ------------------------------------------------------------------------------


@mutant
def window_off_by_one(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """The rolling window lets cap + 1 bodies run at once."""
    if not _schedule(request):
        return answer
    cap = request["scenario"].get("cap", 10)
    if type(cap) is not int or cap < 1:
        return answer
    return _rerun(request, {**request["scenario"], "cap": cap + 1}, ask)


@mutant
def window_off_by_one_after_reclassification(
    request: dict[str, Any], answer: dict[str, Any], ask: Ask
) -> Any:
    """A call made parallel by a commit joins the group without taking a window slot."""
    if not _schedule(request):
        return answer
    scenario = request["scenario"]
    flips = any(
        change.get("op") == "setParallel" and change.get("parallel") == "always"
        for call in scenario.get("calls", [])
        for change in call.get("onCommit", [])
    )
    cap = scenario.get("cap", 10)
    if not flips or type(cap) is not int or cap < 1:
        return answer
    return _rerun(request, {**scenario, "cap": cap + 1}, ask)


def _statically_parallel(scenario: dict[str, Any]) -> bool:
    """Whether two neighbouring calls would open a parallel group (as the registry starts)."""
    modes = {tool["name"]: tool.get("parallel", "always") for tool in scenario.get("tools", [])}
    flags = []
    for call in scenario.get("calls", []):
        mode = modes.get(call["name"])
        try:
            args = json.loads(call.get("arguments", "{}") or "{}")
        except ValueError:
            args = None
        parallel = type(args) is dict and (
            mode == "always" or (type(mode) is dict and args.get(mode.get("argument")) is True)
        )
        flags.append(parallel)
    return any(left and right for left, right in itertools.pairwise(flags))


@mutant
def cap_checked_when_a_group_opens(
    request: dict[str, Any], answer: dict[str, Any], ask: Ask
) -> Any:
    """The cap is validated only when a parallel group opens; otherwise it is never read."""
    if not _schedule(request) or "rejectedCap" not in (_expected(answer) or {}).get("outcome", {}):
        return answer
    if _statically_parallel(request["scenario"]):
        return answer
    return _rerun(request, {**request["scenario"], "cap": 10}, ask)


@mutant
def null_cap_rejected(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """A ``null`` cap is rejected instead of meaning the default."""
    if _schedule(request) and "cap" in request["scenario"] and request["scenario"]["cap"] is None:
        message = "maxParallelToolCalls must be a positive integer"
        expected = {"events": [], "calls": [], "contexts": [], "outcome": {"rejectedCap": message}}
        expected["calls"] = [
            dict.fromkeys(("called", "prepared", "bodyStarted", "settled", "committed"))
            | {"id": call["id"]}
            for call in request["scenario"]["calls"]
        ]
        return {**request, "expected": expected}
    return answer


@mutant
def truthy_classifier_is_parallel(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """``if (isConcurrencySafe(args))`` instead of ``=== true``: any truthy value is parallel."""
    if not _schedule(request):
        return answer
    scenario = copy.deepcopy(request["scenario"])
    tools = {tool["name"]: tool for tool in scenario.get("tools", [])}
    changed = False
    for tool in tools.values():
        if tool.get("parallel") == "truthy":
            tool["parallel"] = "always"
            changed = True

    def truthy_to_true(text: str, key: str) -> str:
        try:
            args = json.loads(text or "{}")
        except ValueError:
            return text
        if type(args) is not dict or type(args.get(key)) is bool or not args.get(key):
            return text
        return json.dumps({**args, key: True})

    for call in scenario.get("calls", []):
        mode = tools.get(call["name"], {}).get("parallel")
        # Only where ``true`` passes the parameters as the truthy value did (undeclared key).
        if type(mode) is dict and mode["argument"] not in tools[call["name"]].get("parameters", {}):
            text = call.get("arguments", "{}")
            new = truthy_to_true(text, mode["argument"])
            if new != text:
                call["arguments"] = new
                changed = True
    if not changed:
        return answer
    rerun = _rerun(request, scenario, ask)
    originals = {call["id"]: call.get("arguments", "{}") for call in request["scenario"]["calls"]}
    for event in (_expected(rerun) or {}).get("events", []):
        if event["type"] == "tool/call":
            event["data"]["arguments"] = originals[event["data"]["callId"]]
    return rerun


def _simplified(parameters: Any) -> Any:
    """A fast path for tool arguments: only each parameter's ``type`` and ``required``."""
    if type(parameters) is not dict:
        return parameters
    out = {}
    for name, spec in parameters.items():
        if type(spec) is dict and "type" in spec:
            out[name] = {key: spec[key] for key in ("type", "required") if key in spec}
            if spec["type"] == "object":
                out[name]["additionalProperties"] = True
        else:
            out[name] = {}
    return out


@mutant
def argument_fast_path(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """Tool arguments are checked by a fast path that knows only ``type`` and ``required``."""
    if not _schedule(request):
        return answer
    scenario = copy.deepcopy(request["scenario"])
    changed = False
    for tool in scenario.get("tools", []):
        if "parameters" in tool and _simplified(tool["parameters"]) != tool["parameters"]:
            tool["parameters"] = _simplified(tool["parameters"])
            changed = True
    return _rerun(request, scenario, ask) if changed else answer


@mutant
def no_exclusive_barrier(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """Exclusive calls are not barriers: every classifier is treated as parallel."""
    if not _schedule(request):
        return answer
    scenario = copy.deepcopy(request["scenario"])
    for tool in scenario.get("tools", []):
        tool["parallel"] = "always"
    for call in scenario.get("calls", []):
        for change in call.get("onCommit", []):
            if change.get("op") == "setParallel":
                change["parallel"] = "always"
            elif change.get("op") == "add":
                change["tool"]["parallel"] = "always"
    return _rerun(request, scenario, ask)


def _call_of(event: dict[str, Any]) -> str:
    data = event["data"]
    return data["callId"] if event["type"] == "tool/call" else data["message"]["source"]["callId"]


@mutant
def commits_in_completion_order(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """Results are committed when their body settles, not in model order."""
    expected = _expected(answer)
    if not _schedule(request) or "events" not in (expected or {}):
        return answer
    times = {entry["id"]: entry for entry in expected["calls"]}
    timeline = []
    for position, event in enumerate(expected["events"]):
        entry = times[_call_of(event)]
        at = entry["called"]
        if event["type"] == "tool/result":
            at = entry["settled"] if entry["settled"] is not None else entry["committed"]
            entry["committed"] = at
        timeline.append((at, position, event))
    timeline.sort(key=lambda item: (item[0], item[1]))
    renumber = {event["seq"]: seq for seq, (_, _, event) in enumerate(timeline)}
    events = []
    for seq, (_, _, event) in enumerate(timeline):
        moved = {**event, "seq": seq}
        if "sourceEventSeqs" in event:
            moved["sourceEventSeqs"] = [renumber[cited] for cited in event["sourceEventSeqs"]]
        events.append(moved)
    expected["events"] = events
    return answer


def _results(answer: dict[str, Any]) -> list[dict[str, Any]]:
    expected = _expected(answer) or {}
    return [event for event in expected.get("events", []) if event["type"] == "tool/result"]


@mutant
def abort_marks_unstarted_aborted(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """On abort, calls that never started are recorded ``ABORTED``, not ``..._BEFORE_DISPATCH``."""
    for event in _results(answer):
        data = event["data"]
        if (data.get("error") or {}).get("code") == "ABORTED_BEFORE_DISPATCH":
            data["error"] = {"name": "AbortError", "code": "ABORTED"}
            data["message"]["content"][0]["content"] = [
                {"type": "text", "text": "Error: tool call aborted"}
            ]
    return answer


@mutant
def named_timeout_text(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """The timeout result names the tool (``tool "<name>" timed out``), not upstream's text."""
    for event in _results(answer):
        data = event["data"]
        if (data.get("error") or {}).get("code") == "TOOL_TIMEOUT":
            for part in data["message"]["content"][0]["content"]:
                part["text"] = part["text"].replace("tool call timed out", 'tool "t" timed out')
    return answer


@mutant
def failure_raised_at_once(request: dict[str, Any], answer: dict[str, Any], ask: Ask) -> Any:
    """A scheduler failure is raised at once, abandoning the in-flight bodies."""
    expected = _expected(answer) or {}
    outcome = expected.get("outcome", {})
    if "raised" in outcome:
        outcome["endedAt"] = outcome["failedAt"]
        for entry in expected["calls"]:
            if entry["settled"] is not None and entry["settled"] > outcome["failedAt"]:
                entry["settled"] = None
    return answer
