"""Typed tools (issue 32): one rule for integral numbers, and a clear output error for a body
whose value is not of its return annotation."""

from __future__ import annotations

from typing import Literal

import pydantic
from typing_extensions import TypedDict

import trio_harness as th

from .test_typed_forms import run, text


async def test_an_integral_number_reaches_an_int_slot_as_an_int_everywhere() -> None:
    # The rule: JSON 2.0 is the integer 2 (as in JavaScript), so wherever the annotation has an
    # int for it, the body gets the int: a plain int parameter and a Literal's int member alike.
    seen: list[object] = []

    @th.tool
    async def pick(x: Literal[1, True, "1"], n: int, f: float) -> str:
        """Pick."""
        seen.extend([x, n, f])
        return "ok"

    result = await run(pick, {"x": 1.0, "n": 2.0, "f": 3})
    assert text(result) == "ok", text(result)
    assert seen == [1, 2, 3.0]
    assert [type(value) for value in seen] == [int, int, float]
    seen.clear()
    await run(pick, {"x": True, "n": 2, "f": 3.5})
    assert seen == [True, 2, 3.5]
    assert type(seen[0]) is bool


class Line(TypedDict):
    name: str
    qty: int
    price: float


async def test_the_rule_holds_inside_typeddict_records_and_lists() -> None:
    # Records take the fast way for values already of their exact type, and the hooks for the
    # others: the body sees the same types either way.
    seen: list[object] = []

    @th.tool
    async def order(lines: list[Line], counts: list[int]) -> str:
        """Order."""
        seen.extend([lines, counts])
        return "ok"

    lines = [{"name": "a", "qty": 2.0, "price": 1}, {"name": "b", "qty": 3, "price": 1.5}]
    result = await run(order, {"lines": lines, "counts": [1.0, 2]})
    assert text(result) == "ok", text(result)
    got_lines, counts = seen
    assert got_lines == [
        {"name": "a", "qty": 2, "price": 1.0},
        {"name": "b", "qty": 3, "price": 1.5},
    ]
    assert [[type(v) for v in line.values()] for line in got_lines] == [[str, int, float]] * 2
    assert counts == [1, 2]
    assert [type(v) for v in counts] == [int, int]


class Point(pydantic.BaseModel):
    x: int


async def test_a_body_returning_the_wrong_type_is_a_clear_output_error() -> None:
    @th.tool
    async def point() -> Point:
        """A point."""
        return {"x": 1}  # type: ignore[return-value]

    result = await run(point, {})
    assert result.is_error
    assert result.error is not None
    assert result.error.info is not None
    assert result.error.info.code == "INVALID_TOOL_OUTPUT"
    assert text(result) == (
        'Error: tool "point" returned invalid output: the body returned dict, not Point'
    )
