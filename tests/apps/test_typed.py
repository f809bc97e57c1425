"""``th.tool``: annotations → DSL → validated, structured calls; unsupported annotations refused."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
from typing import Annotated, Any, Literal, TypedDict

import attrs
import pytest

import trio_harness as th
from trio_harness.providers import openai as oai


@attrs.frozen
class Span:
    """A line range."""

    start: int
    end: int | None = None


class Options(TypedDict, total=False):
    case_sensitive: bool
    max_hits: int


@th.tool(parallel=True, timeout_ms=5000)
async def search(
    query: Annotated[str, "Text to look for"],
    paths: list[str],
    mode: Literal["plain", "regex"] = "plain",
    span: Span | None = None,
    options: Options | None = None,
    ctx: th.ToolExecution | None = None,
) -> list[Span]:
    """Search files for text.

    Longer explanation for humans only.

    Args:
        query: Overridden by the Annotated description.
        paths: Files to search,
            in order.
        mode: How to match.
    """
    assert ctx is not None
    seen.append((query, paths, mode, span, options, ctx.call_id))
    return [Span(1), Span(2, 3)]


seen: list[tuple[Any, ...]] = []


def test_the_schema_comes_from_the_annotations_and_the_docstring() -> None:
    assert search.name == "search"
    assert search.description == "Search files for text.\n\nLonger explanation for humans only."
    assert search.timeout_ms == 5000
    span = {
        "type": "object",
        "description": "A line range.",
        "additionalProperties": False,
        "properties": {
            "start": {"type": "integer"},
            "end": {"oneOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["start"],
    }
    assert search.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Text to look for"},
            "paths": {
                "type": "array",
                "description": "Files to search, in order.",
                "items": {"type": "string"},
            },
            "mode": {
                "type": "string",
                "description": "How to match.",
                "default": "plain",
                "enum": ["plain", "regex"],
            },
            "span": {"oneOf": [span, {"type": "null"}], "default": None},
            "options": {
                "oneOf": [
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "case_sensitive": {"type": "boolean"},
                            "max_hits": {"type": "integer"},
                        },
                    },
                    {"type": "null"},
                ],
                "default": None,
            },
        },
        "required": ["query", "paths"],
    }
    assert search.output.schema == {"type": "array", "items": span}


async def test_valid_arguments_are_structured_into_the_declared_types() -> None:
    runtime = th.ToolRuntime()
    runtime.register(search)
    seen.clear()
    arguments = {
        "query": "x",
        "paths": ["a"],
        "span": {"start": 4},
        "options": {"max_hits": 2},
        "extra": "ignored",
    }
    assert runtime.execution_mode(th.ToolExecutionInput("c1", "search", arguments)) == th.PARALLEL
    result = await runtime.execute(th.ToolExecutionInput("c1", "search", arguments))
    assert seen == [("x", ["a"], "plain", Span(4), {"max_hits": 2}, "c1")]
    # The return value is unstructured to JSON, validated, and rendered as compact JSON.
    assert result.value == [{"start": 1, "end": None}, {"start": 2, "end": 3}]
    assert result.content == (
        {"type": "text", "text": '[{"start":1,"end":null},{"start":2,"end":3}]'},
    )


async def test_invalid_arguments_report_every_violation_before_the_body() -> None:
    runtime = th.ToolRuntime()
    runtime.register(search)
    seen.clear()
    result = await runtime.execute(
        th.ToolExecutionInput("c1", "search", {"paths": "a", "mode": "fuzzy"})
    )
    assert result.error is not None
    assert result.error.message == (
        'invalid arguments: missing required property "query"; "paths" must be an array; '
        '"mode" must be one of ["plain","regex"]'
    )
    assert seen == []


async def test_numbers_structure_into_float_and_int() -> None:
    got: list[Any] = []

    @th.tool
    async def scale(factor: float, times: int, flag: bool | str = False) -> None:
        """Scale."""
        got.append((factor, type(factor), times, flag))

    assert scale.parameters["properties"]["flag"] == {
        "oneOf": [{"type": "boolean"}, {"type": "string"}],
        "default": False,
    }
    await scale.execute({"factor": 2, "times": 3, "flag": "yes"}, None)
    assert got == [(2.0, float, 3, "yes")]
    assert scale.output.schema == {"type": "null"}


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        ("str | Any", 'parameter "x": union members overlap (str | Any)'),
        ("set", 'parameter "x": write set[T]'),
        ("dict[int, str]", 'parameter "x": JSON object keys are strings; write dict[str, ...]'),
        ("list", 'parameter "x": write list[T]'),
        ("Any | None", 'parameter "x": union members overlap'),
        ("Literal[1, 1.5]", 'parameter "x": Literal mixes int and float values'),
        ("list[Node]", 'parameter "x": x[].child: Node is recursive'),
        ("Span | Options", 'parameter "x": union members overlap'),
        ("bytes", 'parameter "x": bytes cannot be sent as JSON; write str'),
        ("Decimal", 'parameter "x": Decimal cannot be sent as JSON; write float (or str)'),
        ("timedelta", 'parameter "x": timedelta cannot be sent as JSON; write float seconds'),
        ("complex", 'parameter "x": complex cannot be expressed as a JSON Schema; use a JSON'),
    ],
)
def test_unsupported_annotations_are_refused_at_decoration(annotation: str, message: str) -> None:
    namespace: dict[str, Any] = {}
    exec(
        f"async def probe(x: {annotation}) -> None:\n    pass\n",
        {**globals(), "Node": Node, "Decimal": decimal.Decimal, "timedelta": datetime.timedelta},
        namespace,
    )
    with pytest.raises(TypeError) as caught:
        th.tool(namespace["probe"])
    assert str(caught.value).startswith('tool "probe": ' + message)


@attrs.frozen
class Point:
    x: int
    y: float


@attrs.define
class Node:
    child: Node | None = None


def test_other_mistakes_are_refused_naming_the_parameter() -> None:
    async def no_annotation(x) -> None:  # type: ignore[no-untyped-def]
        pass

    async def no_return(x: int):  # type: ignore[no-untyped-def]
        pass

    async def generator(x: int):  # type: ignore[no-untyped-def]
        yield x

    async def star(*names: str) -> None:
        pass

    cases = [
        (no_annotation, 'tool "no_annotation": parameter "x" has no annotation'),
        (no_return, 'tool "no_return": the return annotation is missing'),
        (generator, 'tool "generator": a generator cannot be a tool; return the value instead'),
        (star, 'tool "star": parameter "names": *args and **kwargs are not supported'),
    ]
    for function, message in cases:
        with pytest.raises(TypeError) as caught:
            th.tool(function)  # type: ignore[type-var]
        assert str(caught.value).startswith(message)


def test_typed_tools_get_strict_mode_only_when_it_means_the_same() -> None:
    @th.tool(name="closed")
    async def all_required(path: str, point: Point, tags: list[Literal["a", "b"]]) -> None:
        """All required."""

    [tool] = oai.chat_tools([all_required])
    assert tool["function"]["strict"] is True
    assert tool["function"]["parameters"]["additionalProperties"] is False
    assert all_required.parameters.get("additionalProperties") is None  # the tool stays open
    # Span.end is optional, so the nested object is not strict-expressible.
    assert "strict" not in oai.chat_tools([search])[0]["function"]
    with pytest.raises(ValueError, match='tool "search" cannot use strict mode'):
        oai.chat_tools([search], strict=True)
    assert "strict" not in oai.chat_tools([all_required], strict=False)[0]["function"]


@dataclasses.dataclass
class Move:
    source: str
    target: str
    overwrite: bool = False


async def test_dataclasses_are_closed_objects_too() -> None:
    moved: list[Move] = []

    @th.tool
    async def move(plan: list[Move]) -> int:
        """Move files."""
        moved.extend(plan)
        return len(plan)

    assert move.parameters["properties"]["plan"]["items"] == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "source": {"type": "string"},
            "target": {"type": "string"},
            "overwrite": {"type": "boolean"},
        },
        "required": ["source", "target"],
    }
    assert await move.execute({"plan": [{"source": "a", "target": "b"}]}, None) == 1
    assert moved == [Move("a", "b")]


def test_local_classes_are_reported_with_a_hint() -> None:
    @attrs.frozen
    class Local:
        x: int

    async def uses_local(value: Local) -> None:
        pass

    with pytest.raises(TypeError, match=r"name 'Local' is not defined .*not local to another"):
        th.tool(uses_local)
