"""Cost of drawing values from ``oneOf`` schemas with ``trio_harness.testing`` (issue 23).

Usage: ``.venv/bin/python bench/bench_strategies.py``

For each schema it draws 200 valid values under ``@given`` (generation phase only, no database)
and prints the CPU time (``time.process_time``: the machine is shared, wall time is noise). The
target: a ``oneOf`` costs about what its branches cost (values are built for one branch and made
to miss the others, not filtered), and ``{"oneOf": [{}, {}]}`` fails at once with
``InvalidArgument`` instead of a ``filter_too_much`` health check.

Recorded on the project's 2-core machine, loaded (issue 23: filtered → built; the same session,
the old code run from a copy of the previous commit), CPU seconds for 200 values: string
0.11 → 0.19 (longer strings now), string|integer 0.31 → 0.21, number|integer 1.40 → 0.14,
one object branch alone 1.50 → 1.11, object|object 1.65 → 1.31, {}|string 0.83 → 1.33 (larger
values: long strings, big numbers, more keys), nested 2.15 → 1.45; [{}, {}]: ``Unsatisfiable``
after 459 filtered cases (``filter_too_much`` with health checks on) → ``InvalidArgument`` at once.
"""

from __future__ import annotations

import time
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import InvalidArgument

from trio_harness import testing

SCHEMAS: dict[str, Any] = {
    "warm-up (integer)": {"type": "integer"},
    "string": {"type": "string"},
    "string|integer": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    "number|integer (overlap)": {"oneOf": [{"type": "number"}, {"type": "integer"}]},
    "object (one branch alone)": {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
    },
    "object|object": {
        "oneOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ]
    },
    "{}|string": {"oneOf": [{}, {"type": "string"}]},
    "nested": {
        "type": "object",
        "properties": {
            "v": {
                "oneOf": [
                    {
                        "type": "array",
                        "items": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                    },
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"k": {"type": "number"}},
                    },
                ]
            }
        },
        "required": ["v"],
    },
    "[{}, {}] (unsatisfiable)": {"oneOf": [{}, {}]},
}


def main() -> None:
    for label, schema in SCHEMAS.items():
        count = [0]

        def counted(value: Any, count: list[int] = count) -> None:
            count[0] += 1

        @settings(
            max_examples=200,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(testing.valid_values(schema))
        def run(value: Any) -> None:
            counted(value)

        started = time.process_time()
        try:
            run()
        except InvalidArgument as error:
            print(f"{label:28} InvalidArgument: {str(error)[:70]}")
            continue
        seconds = time.process_time() - started
        print(f"{label:28} {count[0]:4} values {seconds:6.2f} s CPU")


if __name__ == "__main__":
    main()
