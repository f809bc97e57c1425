"""Rounds interleaved in a rotating order, the benchmarks' one way to compare variants.

Each round runs every variant once, in an order rotated by one per round, so a noisy neighbour
hurts all of them alike and none always runs right after the same other one.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def interleaved(variants: dict[str, Callable[[], T]], rounds: int) -> dict[str, list[T]]:
    """Each variant's result per round, after one warm-up run of each (imports, caches)."""
    for run in variants.values():
        run()
    found: dict[str, list[T]] = {name: [] for name in variants}
    names = list(variants)
    for round_ in range(rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()
            found[name].append(variants[name]())
    return found
