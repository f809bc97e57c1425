"""``th.tool`` with the forms users bring from the peer libraries (issue 20, items 1, 6 and 7).

Each test declares a tool as a user would and checks three things: the schema the model is
sent, what the body receives for valid arguments, and the message for invalid ones. The last
test runs a typed tool through the real ``openai`` SDK against the scripted server.
"""

from __future__ import annotations

import datetime
import enum
import threading
import uuid
from typing import Annotated, Any, Literal, Optional

import annotated_types
import attrs
import openai
import pydantic
import pytest
import typing_extensions as te
from pydantic import Field

import trio_harness as th
from trio_harness.providers import openai as oai

from .sdk_types import check_chat
from .server import Json, ScriptedServer, chat_completion


async def run(tool: th.ToolDefinition, arguments: Any) -> th.ToolExecutionResult:
    runtime = th.ToolRuntime()
    runtime.register(tool)
    return await runtime.execute(th.ToolExecutionInput("c1", tool.name, arguments))


def text(result: th.ToolExecutionResult) -> str:
    value: str = result.content[0]["text"]
    return value


@attrs.frozen
class Address:
    street: str
    zip: str


# -- item 1: Optional accepts an explicit null -------------------------------------------------


async def test_optional_parameters_accept_an_explicit_null() -> None:
    got: list[Any] = []

    @th.tool
    async def search(query: str, limit: int | None = 10, where: Optional[Address] = None) -> str:  # noqa: UP045 - both spellings
        """Search."""
        got.append((limit, where))
        return "ok"

    assert text(await run(search, {"query": "a", "limit": None, "where": None})) == "ok"
    assert text(await run(search, {"query": "a"})) == "ok"
    assert got == [(None, None), (10, None)]


# -- item 7: unions report their real cause ----------------------------------------------------


async def test_union_violations_name_the_real_cause() -> None:
    @th.tool
    async def ship(
        limit: int | None = None,
        address: Address | None = None,
        mode: Literal["air", "sea"] | None = None,
        size: Annotated[int, Field(ge=1)] | None = None,
    ) -> None:
        """Ship."""

    cases = {
        '{"limit": "5"}': '"limit" must be an integer or null',
        '{"address": {"street": "a", "zip": 12345}}': '"address.zip" must be a string',
        '{"address": "Main St"}': '"address" must be an object or null',
        '{"mode": "rail"}': '"mode" must be one of ["air","sea"] or null',
        '{"size": 0}': '"size" must be >= 1 or null',
    }
    for arguments, message in cases.items():
        result = await run(ship, th.parse_arguments(arguments))
        assert text(result) == f"Error: invalid arguments: {message}", arguments


# -- item 6: pydantic Field and annotated_types --------------------------------------------------


async def test_pydantic_field_is_honoured() -> None:
    got: list[Any] = []

    @th.tool
    async def page(
        query: Annotated[str, Field(description="What to find", min_length=1)],
        limit: Annotated[int, Field(ge=1, le=50)] = 5,
        offset: int = Field(default=10, ge=0, description="Where to start"),
        tags: list[str] = Field(default_factory=list, max_length=3),  # noqa: B008
        ratio: Annotated[float, annotated_types.Gt(0), annotated_types.Lt(1)] = 0.5,
    ) -> str:
        """Page through hits."""
        got.append((query, limit, offset, tags, ratio))
        return "ok"

    assert page.parameters == {
        "type": "object",
        "properties": {
            "query": {"description": "What to find", "type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
            "offset": {
                "description": "Where to start",
                "type": "integer",
                "minimum": 0,
                "default": 10,
            },
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "ratio": {
                "type": "number",
                "exclusiveMinimum": 0,
                "exclusiveMaximum": 1,
                "default": 0.5,
            },
        },
        "required": ["query"],
    }
    assert text(await run(page, {"query": "x"})) == "ok"
    # Field(default=10) gives 10, not the FieldInfo object; default_factory runs per call.
    assert got == [("x", 5, 10, [], 0.5)]
    bad = await run(page, {"query": "", "limit": 51, "offset": -1, "tags": ["a"] * 4, "ratio": 1})
    assert text(bad) == (
        'Error: invalid arguments: "query" must be at least 1 character long; '
        '"limit" must be <= 50; "offset" must be >= 0; "tags" must have at most 3 items; '
        '"ratio" must be < 1'
    )


def test_field_options_that_cannot_be_honoured_are_refused() -> None:
    async def aliased(x: int = Field(alias="X")) -> None:
        pass

    async def predicate(x: Annotated[int, annotated_types.Predicate(bool)]) -> None:
        pass

    async def misplaced(x: Annotated[str, Field(ge=1)]) -> None:
        pass

    cases = [
        (aliased, 'tool "aliased": parameter "x": Field(alias=...) is not supported'),
        (predicate, 'tool "predicate": parameter "x": the constraint Predicate(func=...)'),
        (misplaced, 'tool "misplaced": parameter "x": the constraint ge does not apply to string'),
    ]
    for function, message in cases:
        with pytest.raises(TypeError) as caught:
            th.tool(function)
        assert str(caught.value).startswith(message)


# -- item 6: Enum, pydantic models, TypedDict variants, datetime/UUID, tuple ---------------------


class Color(enum.Enum):
    """A color."""

    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(pydantic.BaseModel):
    x: int = Field(ge=0, description="Across")
    y: int = 0

    @pydantic.field_validator("y")
    @classmethod
    def _even(cls, value: int) -> int:
        if value % 2:
            raise ValueError("y must be even")
        return value


class Options(te.TypedDict):
    case: bool
    hits: te.NotRequired[int]


class Loose(te.TypedDict, total=False):
    a: te.Required[str]
    b: int


async def test_enums_models_typeddicts_and_formats() -> None:
    got: list[Any] = []

    @th.tool
    async def draw(
        color: Color,
        level: Level,
        at: Point,
        options: Options,
        loose: Loose,
        when: datetime.datetime,
        day: datetime.date,
        id: uuid.UUID,
        pair: tuple[int, str],
        many: tuple[float, ...],
        labels: set[str],
        scores: dict[str, int],
    ) -> tuple[Color, datetime.date, set[str]]:
        """Draw."""
        got.extend([color, level, at, options, loose, when, day, id, pair, many, labels, scores])
        return color, day, {"x"}

    properties = draw.parameters["properties"]
    assert properties["color"] == {"title": "Color", "type": "string", "enum": ["red", "green"]}
    assert properties["level"] == {"title": "Level", "type": "integer", "enum": [1, 2]}
    assert properties["at"] == {
        "properties": {
            "x": {"description": "Across", "minimum": 0, "title": "X", "type": "integer"},
            "y": {"default": 0, "title": "Y", "type": "integer"},
        },
        "required": ["x"],
        "title": "Point",
        "type": "object",
    }
    assert properties["options"]["required"] == ["case"]
    assert properties["loose"]["required"] == ["a"]
    assert properties["when"] == {"type": "string", "format": "date-time"}
    assert properties["day"] == {"type": "string", "format": "date"}
    assert properties["id"] == {"type": "string", "format": "uuid"}
    assert properties["pair"] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }
    assert properties["many"] == {"type": "array", "items": {"type": "number"}}
    assert properties["labels"] == {
        "type": "array",
        "items": {"type": "string"},
        "uniqueItems": True,
    }
    assert properties["scores"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    arguments = {
        "color": "green",
        "level": 2,
        "at": {"x": 1, "y": 2},
        "options": {"case": True},
        "loose": {"a": "z"},
        "when": "2025-01-02T03:04:05Z",
        "day": "2025-01-02",
        "id": "12345678-1234-5678-1234-567812345678",
        "pair": [1, "b"],
        "many": [1, 2.5],
        "labels": ["p", "q"],
        "scores": {"a": 1},
    }
    result = await run(draw, arguments)
    assert result.value == ["green", "2025-01-02", ["x"]]
    assert got == [
        Color.GREEN,
        Level.HIGH,
        Point(x=1, y=2),
        {"case": True},
        {"a": "z"},
        datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
        datetime.date(2025, 1, 2),
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
        (1, "b"),
        (1.0, 2.5),
        {"p", "q"},
        {"a": 1},
    ]
    wrong = {
        **arguments,
        "color": "blue",
        "at": {"x": 1, "y": 3},
        "when": "tomorrow",
        "pair": [1],
        "scores": {"a": "1"},
        "labels": ["p", "p"],
    }
    assert text(await run(draw, wrong)) == (
        'Error: invalid arguments: "color" must be one of ["red","green"]; '
        '"pair" must have at least 2 items; "labels" must not contain duplicate items '
        '(items 0 and 1 are equal); "scores.a" must be an integer'
    )
    # What only structuring can tell: a bad date, a pydantic validator.
    later = {**arguments, "at": {"x": 1, "y": 3}, "when": "tomorrow"}
    assert text(await run(draw, later)) == (
        'Error: invalid arguments: "at.y": Value error, y must be even; '
        '"when" must be an ISO 8601 date-time (got "tomorrow")'
    )


@attrs.frozen
class Range:
    start: int
    end: int = attrs.field()

    @end.validator
    def _after_start(self, attribute: Any, value: int) -> None:
        if value < self.start:
            raise ValueError("end must be >= start")


async def test_attrs_validator_messages_are_surfaced() -> None:
    @th.tool
    async def cut(span: Range, spans: list[Range] | None = None) -> None:
        """Cut."""

    result = await run(cut, {"span": {"start": 5, "end": 1}, "spans": [{"start": 1, "end": 0}]})
    assert text(result) == (
        'Error: invalid arguments: "span": end must be >= start; "spans[0]": end must be >= start'
    )


async def test_a_list_reports_every_item_that_fails_to_structure_and_keeps_the_others() -> None:
    # Items are structured in one quick pass; a list with a failing item is structured again
    # item by item, so every failing index is named, in order.
    seen: list[Any] = []

    @th.tool
    async def plan(days: list[datetime.date], counts: list[int], names: list[str]) -> None:
        """Plan."""
        seen.append((days, counts, names))

    bad = {"days": ["2026-01-01", "soon", "2026-01-03", "later"], "counts": [1], "names": []}
    assert text(await run(plan, bad)) == (
        'Error: invalid arguments: "days[1]" must be an ISO 8601 date (got "soon"); '
        '"days[3]" must be an ISO 8601 date (got "later")'
    )
    good = {"days": ["2026-01-01"], "counts": [1, 2.0], "names": ["a"]}
    assert text(await run(plan, good)) == "null"
    [(days, counts, names)] = seen
    assert days == [datetime.date(2026, 1, 1)]
    assert counts == [1, 2]
    assert [type(count) for count in counts] == [int, int]
    assert names == ["a"]
    assert names is not good["names"]


class Line(te.TypedDict):
    """One line."""

    name: str
    qty: int


async def test_a_value_already_of_its_declared_type_is_the_executions_own_not_a_copy() -> None:
    # As upstream hands the body exec.arguments itself: flat records, lists of them and lists
    # of strings reach the body as the execution's own containers, so a post-execute hook sees
    # what the body did to them. A record that must be structured (2.0 for an int) is new.
    bodies: list[Any] = []
    after: list[Any] = []

    @th.tool
    async def order(lines: list[Line], tags: list[str], first: Line) -> None:
        """Order."""
        bodies.append((lines, tags, first))
        lines[0]["qty"] += 1

    async def post(exec: Any, result: Any, next: Any) -> Any:
        after.append(exec.arguments)
        return await next()

    runtime = th.ToolRuntime()
    runtime.register(order)
    runtime.add_post_execute(post)
    arguments = {
        "lines": [{"name": "a", "qty": 1}],
        "tags": ["x"],
        "first": {"name": "b", "qty": 2},
    }
    result = await runtime.execute(th.ToolExecutionInput("c1", "order", arguments))
    assert not result.is_error
    [(lines, tags, first)] = bodies
    [seen] = after
    assert lines is seen["lines"]
    assert tags is seen["tags"]
    assert first is seen["first"]
    assert seen["lines"][0]["qty"] == 2
    assert arguments["lines"][0]["qty"] == 1  # the caller's value is never the execution's

    converted = {
        "lines": [{"name": "a", "qty": 1.0}],
        "tags": [],
        "first": {"name": "b", "qty": 2.0},
    }
    await runtime.execute(th.ToolExecutionInput("c2", "order", converted))
    lines, _, first = bodies[1]
    assert lines is not after[1]["lines"]
    assert lines == [{"name": "a", "qty": 2}]
    assert type(lines[0]["qty"]) is int
    assert first == {"name": "b", "qty": 2}
    assert first is not after[1]["first"]


# -- item 6: sync functions, docstrings, positional-only, defaults --------------------------------


async def test_a_plain_def_runs_in_a_worker_thread() -> None:
    threads: list[bool] = []

    @th.tool
    def blocking(path: str) -> str:
        """Read something slowly."""
        threads.append(threading.current_thread() is threading.main_thread())
        return path.upper()

    assert text(await run(blocking, {"path": "a"})) == "A"
    assert threads == [False]

    def with_ctx(ctx: th.ToolExecution) -> None:
        pass

    with pytest.raises(TypeError, match='parameter "ctx": a plain def runs in a worker thread'):
        th.tool(with_ctx)


def test_sphinx_numpy_and_google_docstrings() -> None:
    def sphinx(path: str, count: int = 1) -> None:
        """Read a file.

        :param path: The file
            to read.
        :type path: str
        :param int count: How many times.
        :returns: nothing
        """

    def numpy(path: str, a: int = 0, b: int = 0) -> None:
        """Read a file.

        Parameters
        ----------
        path : str
            The file
            to read.
        a, b : int
            Two numbers.

        Returns
        -------
        None
        """

    def google(path: str, count: int = 1) -> None:
        """Read a file.

        Args:
            path (str): The file
                to read.
            count: How many times.
        """

    for function in (sphinx, numpy, google):
        definition = th.tool(function)
        assert definition.description == "Read a file.", function.__name__
        properties = definition.parameters["properties"]
        assert properties["path"]["description"] == "The file to read.", function.__name__
    assert th.tool(sphinx).parameters["properties"]["count"]["description"] == "How many times."
    numbers = th.tool(numpy).parameters["properties"]
    assert numbers["a"]["description"] == numbers["b"]["description"] == "Two numbers."


async def test_positional_only_parameters_with_defaults_keep_their_places() -> None:
    @th.tool
    async def place(a: int = 1, b: int = 2, /, c: int = 3) -> list[int]:
        """Place."""
        return [a, b, c]

    assert (await run(place, {"b": 5})).value == [1, 5, 3]
    assert (await run(place, {"a": 7, "c": 9})).value == [7, 2, 9]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "limit: int = 'ten'",
            "parameter \"limit\": the default 'ten' does not match the annotation: "
            '"limit" must be an integer',
        ),
        (
            "limit: int = None",
            'parameter "limit": the default None does not match the annotation: '
            '"limit" must be an integer; write limit: <type> | None = None',
        ),
        (
            "x: float = float('nan')",
            'parameter "x": the default nan is not a JSON value, so the schema cannot show it',
        ),
        (
            "mode: Literal['a', 'b'] = 'c'",
            "parameter \"mode\": the default 'c' does not match the annotation: "
            '"mode" must be one of ["a","b"]',
        ),
    ],
)
def test_wrong_and_non_json_defaults_are_refused(source: str, message: str) -> None:
    namespace: dict[str, Any] = {}
    exec(f"async def probe({source}) -> None:\n    pass\n", {"Literal": Literal}, namespace)
    with pytest.raises(TypeError) as caught:
        th.tool(namespace["probe"])
    assert str(caught.value).startswith('tool "probe": ' + message)


def test_defaults_that_are_values_of_their_annotation_are_written_as_json() -> None:
    @th.tool
    async def plan(
        color: Color = Color.GREEN,
        day: datetime.date = datetime.date(2025, 1, 2),
        pair: tuple[int, int] = (1, 2),
        where: Address = Address("a", "1"),
    ) -> None:
        """Plan."""

    properties = plan.parameters["properties"]
    assert [properties[name]["default"] for name in ("color", "day", "pair", "where")] == [
        "green",
        "2025-01-02",
        [1, 2],
        {"street": "a", "zip": "1"},
    ]


# -- through the real SDK ----------------------------------------------------------------------


async def test_a_typed_tool_through_the_openai_sdk() -> None:
    got: list[Any] = []

    @th.tool
    async def lookup(
        city: str, limit: Annotated[int, Field(ge=1, le=10)] | None = None, color: Color = Color.RED
    ) -> str:
        """Look a city up."""
        got.append((city, limit, color))
        return f"{city}:{limit}:{color.value}"

    runtime = th.ToolRuntime()
    runtime.register(lookup)
    script = [
        Json(
            chat_completion(
                tool_calls=[
                    ("c1", "lookup", '{"city": "Oslo", "limit": null}'),
                    ("c2", "lookup", '{"city": "Rome", "limit": "5", "color": "green"}'),
                ]
            )
        ),
        Json(chat_completion(content="done")),
    ]
    with ScriptedServer(script) as server:
        async with openai.AsyncOpenAI(
            base_url=server.url + "/v1", api_key="test", max_retries=0
        ) as sdk:
            model = oai.ChatCompletionsModel(sdk, "m")
            model.add_user("look up")
            result = await th.run_turn(model, runtime, th.Session())
    assert result.stop == "done"
    assert got == [("Oslo", None, Color.RED)]
    for request in server.requests:
        check_chat(request.body)
    first, second = (request.body for request in server.requests)
    assert first["tools"][0]["function"]["parameters"]["properties"]["limit"] == {
        "default": None,
        "oneOf": [{"type": "integer", "minimum": 1, "maximum": 10}, {"type": "null"}],
    }
    assert second["messages"][2:] == [
        {"role": "tool", "tool_call_id": "c1", "content": "Oslo:None:red"},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": 'Error: invalid arguments: "limit" must be an integer or null',
        },
    ]
