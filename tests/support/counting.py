"""Deterministic measures of work: how many function calls an action makes (no tests here)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any


def count_calls(action: Callable[[], Any]) -> int:
    """How many function calls (Python and C) ``action`` makes."""
    calls = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return calls
