"""The failures ``docs/property-testing.md`` shows are the ones its examples really produce."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_docs import python_blocks

PAGE = Path(__file__).resolve().parents[2] / "docs" / "property-testing.md"
TEXT = re.compile(r"^```text\n(.*?)^```", re.MULTILINE | re.DOTALL)


def report(failure: BaseException) -> str:
    """What hypothesis prints for a failing test: the error, then its notes."""
    notes = getattr(failure, "__notes__", [])
    return "\n".join([f"{type(failure).__name__}: {failure}", *notes]) + "\n"


def test_the_failures_shown_are_the_real_ones() -> None:
    namespace: dict[str, object] = {"__name__": "docs_property_testing"}
    for index, block in enumerate(python_blocks(PAGE)):
        exec(compile(block, f"{PAGE.name}[python block {index}]", "exec"), namespace)
    shown = TEXT.findall(PAGE.read_text(encoding="utf-8"))
    sloppy, trusting = namespace["sloppy_classifier"], namespace["trusting_wrapper"]
    assert isinstance(sloppy, AssertionError)
    assert isinstance(trusting, TypeError)
    assert shown[:2] == [report(sloppy), report(trusting)]
