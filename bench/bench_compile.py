"""Definition-time cost of ``compile_validator`` on large schemas (issue 8 item 12, issue 21).

Usage: ``.venv/bin/python bench/bench_compile.py [--quick] [--no-baselines]``

For a wide object (10,000 / 20,000 / 50,000 string properties; ``--quick``: 1,000 / 2,000 /
5,000) and an object chain 99 levels deep (just inside ``MAX_COMPILED_DEPTH``), it prints the
time ``compile_validator`` takes (one run each: analysis, code generation and ``compile()``;
the schema is fresh, so no cache is hit), the generated source's lines and size, and the
longest generated function. The targets: time and source linear in the schema's nodes (the
per-node columns stay flat as the schema grows), every function small.

Recorded on the project's 2-core machine, loaded (issue 8 fix, before → after):
10k properties 2.95 s → 1.49 s, 20k 5.02 s → 3.66 s, 50k 14.5 s → 9.6 s; 99-deep chain
1.05 s, 21,139 lines, 1.81 MB → 0.06 s, 3,729 lines, 0.26 MB.

Issue 21 (targets: 20,000 properties in at most 1 s, 50,000 in at most 2.5 s): an object of
more than 200 properties is checked from tables (a dict from each key to the check function of
its schema, one function per distinct scalar schema), so its source no longer grows with its
width. Loaded machine, before → after: 10k 1.71 s → 0.26 s, 20k 5.36 s → 0.53 s, 50k 11.66 s →
1.44 s. The baselines, in the same run: the walker (no definition-time work: its cost is per
call), python-jsonschema (validator construction and its first call: it compiles nothing) and
jsonschema_rs (``validator_for``), and one valid call of each on a value of 20 properties.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from trio_harness import validate_json_schema_value
from trio_harness.lowlevel import compile_validator


def wide(width: int) -> dict[str, Any]:
    """An object of ``width`` string properties, the first required."""
    properties = {f"p{i}": {"type": "string"} for i in range(width)}
    return {"type": "object", "properties": properties, "required": ["p0"]}


def chain(depth: int) -> dict[str, Any]:
    """An object chain of ``depth`` nodes, an integer at the bottom."""
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(depth - 1):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


def source_of(validator: object) -> str:
    """The generated source (empty for a schema handed to the walker)."""
    namespace = getattr(validator, "__globals__", {})
    text = namespace.get("__source__", "")
    return text if type(text) is str else ""


def _best(run: Any, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def baselines(schema: dict[str, Any]) -> str:
    """Definition time and one valid call of the walker, python-jsonschema and jsonschema_rs."""
    import jsonschema
    import jsonschema_rs

    value = dict.fromkeys(list(schema["properties"])[:20], "s")
    compiled = compile_validator(schema)
    start = time.perf_counter()
    python = jsonschema.Draft202012Validator(schema)  # no compile step: the first call pays
    python.is_valid(value)
    python_s = time.perf_counter() - start
    start = time.perf_counter()
    rust = jsonschema_rs.validator_for(schema)
    rust_s = time.perf_counter() - start
    assert compiled(value, "value") == []
    assert python.is_valid(value)
    assert rust.is_valid(value)
    calls = {
        "compiled": _best(lambda: compiled(value, "value")),
        "walker": _best(lambda: validate_json_schema_value(schema, value)),
        "jsonschema": _best(lambda: python.is_valid(value)),
        "rs": _best(lambda: rust.is_valid(value)),
    }
    return (
        f"   baselines: jsonschema {python_s:.3f} s (construction + first call), jsonschema_rs "
        f"{rust_s:.3f} s; one valid call (us): "
        + ", ".join(f"{name} {seconds * 1e6:.1f}" for name, seconds in calls.items())
    )


def main(argv: list[str]) -> None:
    widths = (1_000, 2_000, 5_000) if "--quick" in argv else (10_000, 20_000, 50_000)
    cases = [(f"{width:,} properties", wide(width), width + 1) for width in widths]
    cases.append(("chain of 99", chain(99), 99))
    print(
        f"{'schema':<20}{'compile s':>10}{'us/node':>9}{'lines':>10}{'MB':>7}{'B/node':>8}"
        f"{'longest fn':>11}"
    )
    for label, schema, nodes in cases:
        start = time.perf_counter()
        validator = compile_validator(schema)
        seconds = time.perf_counter() - start
        text = source_of(validator)
        longest = max(len(part.splitlines()) for part in text.split("\ndef "))
        print(
            f"{label:<20}{seconds:>10.2f}{seconds / nodes * 1e6:>9.0f}"
            f"{len(text.splitlines()):>10,}{len(text) / 1e6:>7.2f}{len(text) / nodes:>8.0f}"
            f"{longest:>11,}"
        )
        if "--no-baselines" not in argv and "properties" in label:
            print(baselines(wide(nodes - 1)))


if __name__ == "__main__":
    main(sys.argv[1:])
