"""``normalize_json_schema`` on hostile schemas: work must follow the input, not its expansion.

Run: ``.venv/bin/python bench/bench_normalize.py [rounds]`` (best of ``rounds``, default 3).

Cases (issue 18, item 16):

* ``fan-out 20x2 + 40 fields``: 20 definitions, each with 40 string fields and two references to
  the next (about 48 KB of JSON, 2**20 * 42 schema objects once inlined): refused at once for the
  node limit (it took 96 s to expand 10,000 references, then was kept as a partial schema);
* ``fan-out 6x5``: 5**6 references to inline (19,531 objects): the first 10,000 are inlined;
* ``chain 190``: a 190-deep reference chain (each inlined schema used to be walked again at every
  level above it: quadratic);
* ``anyOf 10,000``: an ``anyOf`` of 10,000 object branches (the duplicate check was quadratic).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import trio_harness as th


def fan_out(levels: int, width: int, fields: int = 0) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for level in range(levels):
        properties: dict[str, Any] = {f"f{j}": {"type": "string"} for j in range(fields)}
        properties.update({f"p{j}": {"$ref": f"#/$defs/d{level + 1}"} for j in range(width)})
        defs[f"d{level}"] = {"type": "object", "properties": properties}
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def wide_any_of(width: int) -> dict[str, Any]:
    branches = [
        {"type": "object", "properties": {f"k{i}": {"type": "string"}}} for i in range(width)
    ]
    return {"anyOf": [*branches, {"type": "string"}]}


CASES: list[tuple[str, Callable[[], dict[str, Any]], dict[str, Any]]] = [
    ("fan-out 20x2 + 40 fields", lambda: fan_out(20, 2, 40), {}),
    ("fan-out 6x5", lambda: fan_out(6, 5), {}),
    ("chain 190", lambda: fan_out(190, 1), {}),
    ("anyOf 10,000", lambda: wide_any_of(10_000), {"tool_input": False}),
]


def main(rounds: int) -> None:
    print(f"normalize_json_schema, best of {rounds}")
    for label, build, options in CASES:
        schema = build()
        best = float("inf")
        for _ in range(rounds):
            start = time.perf_counter()
            report = th.schema.normalize_json_schema(schema, **options)
            best = min(best, time.perf_counter() - start)
        outcome = "refused" if report.violations else ("exact" if report.exact else "unkept")
        print(f"{label:26} {best * 1000:9.1f} ms   {outcome}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
