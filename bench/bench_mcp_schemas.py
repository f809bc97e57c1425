"""Validation speed of the extended vocabulary on real MCP tool schemas.

Usage: ``.venv/bin/python bench/bench_mcp_schemas.py [--quick]``

Reads the 147 real-world tool schemas from ``../shared/mcp/realworld-tool-schemas.json`` (relative
to the repository root) at bench time; exits with a message when they are absent. For each tool it
generates one valid argument object (every property filled, within its bounds) and one invalid one
(every property broken: out of bounds, wrong type, unknown enum member, and a required property
missing), checks that all validators agree on which is which, and times one call of:

* ``trio_harness``: ``compile_extended_validator(normalized)(args, "")`` (every violation);
* ``jsonschema``: ``Draft202012Validator(original).iter_errors`` collected into a list;
* ``jsonschema_rs``: ``validator_for(original).iter_errors`` collected into a list.

Figures are best-of-N mean nanoseconds per call; construction is excluded for everyone. Targets:
jsonschema / trio_harness >= 10 (geometric mean, valid and invalid) and jsonschema_rs /
trio_harness > 1 on invalid calls.
"""

from __future__ import annotations

import functools
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
from bench_validation import time_per_call

import trio_harness as th
from trio_harness.lowlevel import compile_extended_validator

SCHEMAS = Path(__file__).resolve().parents[2] / "shared" / "mcp" / "realworld-tool-schemas.json"


def _all_errors(validator: Any, value: object) -> list[Any]:
    return list(validator.iter_errors(value))


def valid_example(schema: dict[str, Any]) -> Any:
    """A value of ``schema`` (normalised form), every optional property filled."""
    if "oneOf" in schema:
        return valid_example(schema["oneOf"][0])
    kind = schema.get("type")
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        return {key: valid_example(child) for key, child in schema.get("properties", {}).items()}
    if kind == "array":
        count = max(schema.get("minItems", 1), 1)
        if "prefixItems" in schema:
            return [valid_example(child) for child in schema["prefixItems"]]
        return [valid_example(schema.get("items", {})) for _ in range(count)]
    if kind == "string":
        return "a" * max(schema.get("minLength", 3), 1)
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1)
        return int(low) if kind == "integer" else low + 0.5
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "x"


def broken(schema: dict[str, Any], value: Any) -> Any:
    """``value`` with as much broken as the schema lets us break."""
    kind = schema.get("type")
    if "oneOf" in schema:
        return {"not": "any branch"} if kind != "object" else 3
    if kind == "object":
        out = {
            key: broken(child, value[key])
            for key, child in schema.get("properties", {}).items()
            if key in value
        }
        required = schema.get("required", [])
        if required:
            out.pop(required[0], None)
        return out
    if "enum" in schema:
        return "not-a-member" if schema.get("type") == "string" else 12345
    if kind == "array":
        return [broken(schema.get("items", {}), item) for item in value] or 7
    if kind in ("integer", "number"):
        if "minimum" in schema:
            return schema["minimum"] - 1
        if "maximum" in schema:
            return schema["maximum"] + 1
        return "12"
    if kind == "string":
        return 12
    if kind == "boolean":
        return "yes"
    return value


def measure(quick: bool, *, show: bool = True) -> list[dict[str, Any]]:
    """Time every real-world tool; returns one row per tool (``[]`` without the schemas)."""
    if not SCHEMAS.is_file():
        print(f"the real-world schemas are not at {SCHEMAS}: nothing to measure")
        return []
    rounds = 3 if quick else 7
    rows = []
    for entry in json.loads(SCHEMAS.read_text(encoding="utf-8")):
        original = entry["inputSchema"]
        normalized = th.schema.normalize_json_schema(original)
        assert normalized.exact, entry["tool"]
        ours = compile_extended_validator(normalized.schema)
        theirs = jsonschema.Draft202012Validator(original)
        rust = jsonschema_rs.validator_for(original)
        good = valid_example(normalized.schema)
        bad = broken(normalized.schema, good)
        if not ours(bad, ""):
            bad = ["not", "an", "object"]  # a tool without properties: only the type can fail
        agree = (ours(good, "") == [], theirs.is_valid(good), rust.is_valid(good))
        assert agree == (True, True, True), entry["tool"]
        agree = (ours(bad, "") == [], theirs.is_valid(bad), rust.is_valid(bad))
        assert agree == (False, False, False), entry["tool"]
        row: dict[str, Any] = {"tool": entry["tool"]}
        for label, value in (("valid", good), ("invalid", bad)):
            row[f"th_{label}"] = time_per_call(functools.partial(ours, value, ""), rounds, 2000)
            row[f"js_{label}"] = time_per_call(
                functools.partial(_all_errors, theirs, value), rounds, 2000
            )
            row[f"rs_{label}"] = time_per_call(
                functools.partial(_all_errors, rust, value), rounds, 2000
            )
        rows.append(row)
    if show:
        report(rows)
    return rows


def report(rows: list[dict[str, Any]]) -> None:
    """Print the summary of :func:`measure`'s rows."""

    def geomean(values: list[float]) -> float:
        return math.exp(statistics.fmean(math.log(v) for v in values))

    print(f"{len(rows)} real-world MCP tool schemas (normalised + extended vocabulary)")
    print(
        f"{'':24}{'trio_harness ns':>16}{'jsonschema ns':>15}{'jsonschema_rs ns':>18}{'js/th':>8}{'rs/th':>8}"
    )
    for label in ("valid", "invalid"):
        th_ns = statistics.median(r[f"th_{label}"] for r in rows)
        js_ns = statistics.median(r[f"js_{label}"] for r in rows)
        rs_ns = statistics.median(r[f"rs_{label}"] for r in rows)
        js_ratio = geomean([r[f"js_{label}"] / r[f"th_{label}"] for r in rows])
        rs_ratio = geomean([r[f"rs_{label}"] / r[f"th_{label}"] for r in rows])
        print(
            f"{label + ' (median / geomean)':24}{th_ns:16.0f}{js_ns:15.0f}{rs_ns:18.0f}{js_ratio:8.1f}{rs_ratio:8.2f}"
        )
    misses = [
        r["tool"]
        for r in rows
        if r["js_valid"] / r["th_valid"] < 10 or r["js_invalid"] / r["th_invalid"] < 10
    ]
    rs_misses = [r["tool"] for r in rows if r["rs_invalid"] / r["th_invalid"] <= 1]
    print(f"tools below 10x jsonschema: {len(misses)} {misses[:10]}")
    if "--details" in sys.argv:
        for r in rows:
            if r["tool"] in misses:
                print(
                    f"  {r['tool']}: valid {r['js_valid'] / r['th_valid']:.1f}x ({r['th_valid']:.0f} ns), invalid {r['js_invalid'] / r['th_invalid']:.1f}x ({r['th_invalid']:.0f} ns)"
                )
    print(
        f"tools not faster than jsonschema_rs on invalid calls: {len(rs_misses)} {rs_misses[:10]}"
    )


if __name__ == "__main__":
    measure("--quick" in sys.argv)
