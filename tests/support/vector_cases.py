"""Reading the recorded upstream answers: tag decoding and JSON-exact comparison.

Shared by the replay tests (``test_vectors.py``, ``test_dsl_vectors.py``). Written independently of
``trio_harness._conformance.oracle`` on purpose, so that the replays do not trust the code they check. The
recorded files are shallow, so plain recursion is fine here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
#: The recorded upstream answers ship in the conformance kit.
VECTORS = ROOT / "spec" / "upstream-vectors.jsonl"
#: The official JSON-Schema-Test-Suite cases inside the subset are third-party data, never copied
#: into the project: read from the shared material beside the clone when it is there.
SUITE = ROOT.parent / "shared" / "spec" / "json-schema-test-suite-subset.jsonl"
SUITE_ABSENT = f"the JSON-Schema-Test-Suite subset is not at {SUITE} (shared material absent)"
UNDEFINED = object()


def decode(value: Any) -> Any:
    """Turn the tagged special numbers (``$nan``, ``$inf``, ``$negzero``, ``$undefined``) into values."""
    if isinstance(value, dict):
        if len(value) == 1:
            ((key, payload),) = value.items()
            if key == "$nan":
                return math.nan
            if key == "$inf":
                return math.inf if payload == 1 else -math.inf
            if key == "$negzero":
                return -0.0
            if key == "$undefined":
                return UNDEFINED
        return {key: decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode(item) for item in value]
    return value


def has_undefined(value: Any) -> bool:
    """Whether a decoded value holds JavaScript ``undefined`` (such cases are skipped)."""
    if value is UNDEFINED:
        return True
    if isinstance(value, dict):
        return any(has_undefined(item) for item in value.values())
    if isinstance(value, list):
        return any(has_undefined(item) for item in value)
    return False


def same(a: Any, b: Any) -> bool:
    """Equal as JSON data, key order included; -0.0/NaN told apart; bool never equal to int."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def load(path: Path, ops: tuple[str, ...] | str) -> list[dict[str, Any]]:
    """The cases of one recorded file whose ``op`` is among ``ops``."""
    wanted = (ops,) if isinstance(ops, str) else ops
    with path.open(encoding="utf-8") as lines:
        return [case for case in map(json.loads, lines) if case["op"] in wanted]


def expected_answer(scenario: dict[str, Any]) -> dict[str, Any]:
    """The reference's ``expected`` object for a scheduling scenario (``ties`` when timers tied)."""
    from trio_harness.lowlevel import run_scenario

    result = run_scenario(scenario)
    expected = dict(result.answer)
    if result.ties:
        expected["ties"] = list(result.ties)
    return expected
