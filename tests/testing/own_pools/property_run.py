"""Property test of the project's own pool under PoolMonitor (from the public docs only).

Run through ``tests/testing/own_pools/test_own_pools.py``.
A script can call ``run_property(max_examples, seed)`` (and plug a mutated pool in with
``make_runtime=`` -- builds the runtime the app is registered on -- or ``pool=`` -- an
``execute_tool_calls`` replacement).
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hyp_seed

from .common import (
    check_step,
    default_make_runtime,
    describe,
    steps,
)


def run_property(
    max_examples: int, seed: int, make_runtime=default_make_runtime, pool=None, max_calls: int = 6
) -> list[str]:
    """Draw ``max_examples`` random steps; return the problems of the (shrunk) failing step.

    ``[]``: no failure. Otherwise the violation messages of the minimal failing step, then
    that step, then hypothesis's own failure text.
    """
    last: list[list[str]] = []

    @hyp_seed(seed)
    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        phases=[Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(steps(max_calls))
    def prop(step):
        problems = check_step(step, make_runtime=make_runtime, pool=pool)
        if problems:
            last[:] = [[*problems, describe(step)]]
            raise AssertionError("\n".join(problems))

    try:
        prop()
    except AssertionError as failure:
        return (last[0] if last else []) + [f"hypothesis: {failure}"]
    return []
