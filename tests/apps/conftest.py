"""Fixtures of the app tests."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator

import pytest


class UnfinishedGenerators:
    """The ResourceWarnings Trio gives for async generators garbage collected unfinished."""

    def __init__(self, caught: list[warnings.WarningMessage]) -> None:
        self._caught = caught

    def collect(self) -> list[str]:
        """Force a collection (inside the Trio run) and return the warnings so far."""
        gc.collect()
        return [
            str(w.message)
            for w in self._caught
            if issubclass(w.category, ResourceWarning) and "garbage collected" in str(w.message)
        ]


@pytest.fixture
def unfinished_generators() -> Iterator[UnfinishedGenerators]:
    """Records Trio's unfinished-async-generator warnings instead of raising them in GC context,
    so a test can assert there are none (or, for the SDK pitfall itself, that there are)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield UnfinishedGenerators(caught)
