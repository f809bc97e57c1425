"""``trio_harness.mcp`` against a real MCP server (the SDK's ``MCPServer``), over stdio and HTTP.

These tests talk to a real subprocess, so they run on Trio's real clock, each bounded by
``fail_after``; nothing sleeps: the server itself proves overlap (a read-only call waits until its
peer has arrived) and records the order of starts and ends.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

import trio_harness as th
from trio_harness.mcp import MCP_TOOL_ERROR, McpToolset

from .connect import BOUND_S, http_toolset, stdio_toolset


def call(call_id: str, name: str, arguments: dict[str, Any]) -> th.ToolCallBlock:
    return th.ToolCallBlock(call_id, name, json.dumps(arguments))


def results(session: th.Session) -> dict[str, dict[str, Any]]:
    """callId → the tool-result block (wire form) of every committed result."""
    out = {}
    for event in session.events:
        if event.type == "tool/result":
            block = event.to_json()["data"]["message"]["content"][0]
            out[block["toolCallId"]] = block
    return out


def texts(block: dict[str, Any]) -> list[str]:
    return [part["text"] for part in block["content"] if part["type"] == "text"]


async def test_every_tool_is_registered_with_its_normalised_schema_and_mode() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset() as (runtime, toolset, _):
            assert all(report.registered for report in toolset.reports)
            schemas = {schema["name"]: schema["parameters"] for schema in runtime.schemas()}
            # Optional[Color] with $defs/$ref: inlined and written as a oneOf, nothing lost.
            assert schemas["search"]["properties"]["color"] == {
                "default": None,
                "oneOf": [
                    {"enum": ["red", "green"], "title": "Color", "type": "string"},
                    {"type": "null"},
                ],
            }
            assert schemas["add_items"]["properties"]["items"]["items"]["properties"]["qty"] == {
                "maximum": 100,
                "minimum": 1,
                "title": "Qty",
                "type": "integer",
            }
            report = {r.name: r for r in toolset.reports}["search"]
            assert report.parallel is True
            assert any('"#/$defs/Color" inlined' in change for change in report.changes)
            assert (
                runtime.execution_mode(th.ToolExecutionInput("c", "search", {"query": "a"})).kind
                == "parallel"
            )
            assert (
                runtime.execution_mode(th.ToolExecutionInput("c", "write", {"tag": "a"})).kind
                == "exclusive"
            )
            # Invalid arguments never classify a read-only tool as parallel (fail-closed).
            assert (
                runtime.execution_mode(th.ToolExecutionInput("c", "search", {"page": 0})).kind
                == "exclusive"
            )


async def test_invalid_arguments_are_reported_locally_by_path_and_never_sent() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset() as (runtime, _, _session):
            session = th.Session()
            await th.execute_tool_calls(
                runtime,
                session,
                [
                    call("c1", "search", {"query": "X", "page": 0, "color": "blue", "extra": 1}),
                    call("c2", "add_items", {"items": [{"name": "", "qty": 0}, {"qty": 101}]}),
                    call("c3", "journal", {}),
                ],
            )
            answers = results(session)
            assert texts(answers["c1"]) == [
                'Error: invalid arguments: "query" must match pattern "^[a-z ]+$"; '
                '"page" must be >= 1; "color" must be one of ["red","green"] or null'
            ]
            assert texts(answers["c2"]) == [
                'Error: invalid arguments: "items[0].name" must be at least 1 character long; '
                '"items[0].qty" must be >= 1; missing required property "items[1].name"; '
                '"items[1].qty" must be <= 100'
            ]
            assert answers["c1"]["isError"]
            assert answers["c2"]["isError"]
            # The server never saw either call: its journal is empty.
            assert answers["c3"]["content"] == []
            assert not answers["c3"]["isError"]


async def test_content_errors_and_server_text_once() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset() as (runtime, _, _session):
            session = th.Session()
            await th.execute_tool_calls(
                runtime,
                session,
                [
                    call("ok", "search", {"query": "cats", "color": "red", "tags": ["a"]}),
                    call("pic", "picture", {}),
                    call("fail", "fail", {"reason": "disk full"}),
                    call("err", "explicit_error", {}),
                    call("items", "add_items", {"items": [{"name": "n", "qty": 2}]}),
                ],
            )
            answers = results(session)
            assert texts(answers["ok"]) == ["found cats page 1 color red tags ['a']"]
            assert answers["pic"]["content"] == [
                {"type": "text", "text": "a red dot"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            ]
            # The SDK's "Error executing tool fail" is shown once, not as "Error: Error executing…".
            assert texts(answers["fail"]) == ["Error: executing tool fail"]
            assert texts(answers["err"]) == ["Error: quota exceeded"]
            assert answers["err"]["isError"] is True
            assert json.loads(texts(answers["items"])[0]) == {"count": 1, "total": 2}


async def test_error_result_carries_the_mcp_code() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset() as (runtime, _, _session):
            result = await runtime.execute(th.ToolExecutionInput("c", "explicit_error", {}))
            assert result.is_error
            assert result.error is not None
            assert result.error.message == "quota exceeded"
            assert result.error.info is not None
            assert result.error.info.code == MCP_TOOL_ERROR


async def test_structured_content_is_kept_and_checked() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset() as (runtime, toolset, _session):
            assert {r.name: r for r in toolset.reports}["search"].output_checked is True
            result = await runtime.execute(th.ToolExecutionInput("c", "search", {"query": "a"}))
            assert result.value == {
                "content": [{"type": "text", "text": "found a page 1 color None tags None"}],
                "structuredContent": {"result": "found a page 1 color None tags None"},
            }


async def test_a_step_mixing_read_only_and_writing_tools_overlaps_and_barriers() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset() as (runtime, _, _session):
            session = th.Session()
            await th.execute_tool_calls(
                runtime,
                session,
                [
                    # r1 and r2 each wait on the server until the other has arrived: they can
                    # only finish if they overlap.
                    call("r1", "peek", {"tag": "r1", "group": "g1", "meet": 2}),
                    call("r2", "peek", {"tag": "r2", "group": "g1", "meet": 2}),
                    call("w", "write", {"tag": "w"}),
                    call("r3", "peek", {"tag": "r3", "group": "g2", "meet": 1}),
                ],
            )
            order = list(results(session))
            assert order == ["r1", "r2", "w", "r3"]  # committed in model order
            journal = await runtime.execute(th.ToolExecutionInput("j", "journal", {}))
            events = journal.value["structuredContent"]["result"]
            assert sorted(events[:2]) == ["start r1", "start r2"]  # overlap
            assert sorted(events[2:4]) == ["end r1", "end r2"]
            # The writer is a barrier: it starts after both readers ended, and r3 after it ended.
            assert events[4:] == ["start w", "end w", "start r3", "end r3"]


async def test_abort_cancels_the_in_flight_call_on_the_server() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset() as (runtime, _, _session):
            abort = trio.Event()
            sent = trio.Event()

            async def note_dispatch(exec: Any, next: Any) -> Any:
                sent.set()
                return await next()

            runtime.add_execute_wrapper(note_dispatch)
            session = th.Session()
            async with trio.open_nursery() as nursery:

                async def step() -> None:
                    await th.execute_tool_calls(
                        runtime, session, [call("h", "hang", {"tag": "h"})], abort=abort
                    )

                nursery.start_soon(step)
                await sent.wait()
                # Wait until the server has started the call (its journal shows it).
                while True:
                    journal = await runtime.execute(th.ToolExecutionInput("j", "journal", {}))
                    if "start h" in journal.value["structuredContent"]["result"]:
                        break
                abort.set()
            answer = results(session)["h"]
            assert answer["isError"] is True
            assert texts(answer) == ["Error: tool call aborted"]
            # The server saw the cancellation of the in-flight call.
            with trio.fail_after(10):
                while True:
                    journal = await runtime.execute(th.ToolExecutionInput("j", "journal", {}))
                    if "cancelled h" in journal.value["structuredContent"]["result"]:
                        break


async def test_a_server_dying_mid_call_gives_an_error_result() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset() as (runtime, _, _session):
            session = th.Session()
            outcome = await th.execute_tool_calls(
                runtime, session, [call("d", "die", {}), call("after", "journal", {})]
            )
            answers = results(session)
            # The step is not crashed: both calls have an error result, in order.
            assert list(answers) == ["d", "after"]
            assert answers["d"]["isError"] is True
            assert texts(answers["d"]) == ["Error: Connection closed"]
            assert answers["after"]["isError"] is True
            assert not outcome.aborted


async def test_relisting_after_tools_list_changed_updates_the_registry_between_steps() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset() as (runtime, toolset, session):
            assert "late" not in toolset.names
            log = th.Session()
            await th.execute_tool_calls(runtime, log, [call("a", "add_late_tool", {})])
            await trio.testing.wait_all_tasks_blocked()
            assert toolset.changed is True
            reports = await toolset.sync_if_changed(session)
            assert reports is not None
            assert "late" in toolset.names
            assert toolset.changed is False
            assert await toolset.sync_if_changed(session) is None
            await th.execute_tool_calls(
                runtime, log, [call("b", "late", {"x": -1}), call("c", "late", {"x": 2})]
            )
            answers = results(log)
            assert texts(answers["b"]) == ['Error: invalid arguments: "x" must be >= 0']
            assert texts(answers["c"]) == ["late 2"]


# The SDK's HTTP client (httpx2/httpcore2) leaves streaming async generators to the garbage
# collector when the session closes; under Trio its finalizer warns. Those warnings are the SDK's,
# named exactly here; any other warning still fails the test.
@pytest.mark.filterwarnings("ignore:Async generator 'httpx2.:ResourceWarning")
@pytest.mark.filterwarnings("ignore:Async generator 'httpcore2.:ResourceWarning")
async def test_the_same_server_over_streamable_http() -> None:
    with trio.fail_after(BOUND_S):
        async with http_toolset() as (runtime, toolset, _session):
            assert all(report.registered for report in toolset.reports)
            session = th.Session()
            await th.execute_tool_calls(
                runtime,
                session,
                [
                    call("r1", "peek", {"tag": "r1", "group": "h1", "meet": 2}),
                    call("r2", "peek", {"tag": "r2", "group": "h1", "meet": 2}),
                    call("w", "write", {"tag": "w"}),
                    call("bad", "search", {"query": "a", "page": 0}),
                ],
            )
            answers = results(session)
            assert texts(answers["r1"]) == ["peeked r1"]
            assert texts(answers["r2"]) == ["peeked r2"]
            assert texts(answers["w"]) == ["wrote w"]
            assert texts(answers["bad"]) == ['Error: invalid arguments: "page" must be >= 1']


async def test_strict_vocabulary_refuses_the_extension_and_names_every_reason() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset(vocabulary="strict") as (runtime, toolset, _):
            reports = {report.name: report for report in toolset.reports}
            assert reports["search"].registered is False
            assert (
                "schema.properties.query.minLength: an extension keyword (not in the strict vocabulary)"
                in reports["search"].reasons
            )
            assert reports["journal"].registered is True
            assert "search" not in [schema["name"] for schema in runtime.schemas()]


async def test_a_name_taken_by_another_tool_is_reported_not_registered() -> None:
    runtime = th.ToolRuntime()
    taken, _ = th.define_json_tool(
        name="journal", description="mine", input_schema={"type": "object"}, execute=_local
    )
    runtime.register(taken)
    with trio.fail_after(BOUND_S):
        async with stdio_toolset(runtime) as (_, toolset, _session):
            report = {r.name: r for r in toolset.reports}["journal"]
            assert report.registered is False
            assert report.reasons[0].startswith('tool "journal" is already registered')
            assert "journal" not in toolset.names
            assert runtime.schemas()[0]["description"] == "mine"


async def _local(args: Any, ctx: Any) -> Any:
    return "local"


def test_toolset_defaults_are_extended_and_fail_closed() -> None:
    toolset = McpToolset(th.ToolRuntime())
    assert toolset.names == []
    assert toolset.changed is False


@pytest.mark.parametrize("prefix", ["", "srv_"])
async def test_prefix_names(prefix: str) -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset(prefix=prefix) as (runtime, toolset, _):
            assert f"{prefix}search" in toolset.names
            result = await runtime.execute(
                th.ToolExecutionInput("c", f"{prefix}search", {"query": "a"})
            )
            assert not result.is_error


class ScriptedSession:
    """Answers ``call_tool`` with a scripted result (the mapping of results, without a server)."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.calls: list[tuple[str, Any]] = []

    async def call_tool(self, name: str, arguments: Any) -> Any:
        self.calls.append((name, arguments))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def scripted_tool(session: ScriptedSession) -> th.ToolDefinition:
    from mcp.types import Tool

    from trio_harness.mcp import mcp_tool_definition

    tool = Tool(
        name="count",
        inputSchema={"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
        outputSchema={
            "type": "object",
            "properties": {"total": {"type": "integer", "maximum": 10}},
            "required": ["total"],
        },
    )
    definition, report = mcp_tool_definition(session, tool)  # type: ignore[arg-type]
    assert report.output_checked
    assert not report.parallel
    return definition


async def test_structured_content_violating_the_output_schema_is_an_output_error() -> None:
    from mcp.types import CallToolResult, TextContent

    session = ScriptedSession(
        CallToolResult(
            content=[TextContent(type="text", text="99")], structuredContent={"total": 99}
        )
    )
    runtime = th.ToolRuntime()
    runtime.register(scripted_tool(session))
    result = await runtime.execute(th.ToolExecutionInput("c", "count", {"n": 1}))
    assert result.is_error
    assert result.error is not None
    assert result.error.info is not None
    assert result.error.info.code == "INVALID_TOOL_OUTPUT"
    assert result.error.message == (
        'tool "count" returned invalid output: "structuredContent.total" must be <= 10'
    )
    # The SDK's own outputSchema check (it runs first when the tool was listed) maps the same way.
    session.answer = RuntimeError("Invalid structured content returned by tool count: 99 > 10")
    result = await runtime.execute(th.ToolExecutionInput("c", "count", {"n": 1}))
    assert result.error is not None
    assert result.error.info is not None
    assert result.error.info.code == "INVALID_TOOL_OUTPUT"
    # Invalid arguments never reach the session.
    calls = len(session.calls)
    result = await runtime.execute(th.ToolExecutionInput("c", "count", {"n": -1}))
    assert result.content == (
        {"type": "text", "text": 'Error: invalid arguments: "n" must be >= 0'},
    )
    assert len(session.calls) == calls
