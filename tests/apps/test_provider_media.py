"""MCP tools meet the model APIs (issue 20, items 5 and 7), with the real mcp SDK on both sides.

A real MCP server subprocess (``mcp_media_server.py``, stdio) publishes an image result, a PDF
resource, a dotted name, OpenAPI number formats, a number union, an ``Optional`` object and a
task-only tool. The toolset registers what a model can call; the provider adapters send the
results in each API's own form (checked against the SDKs' request types), never as base64 text.
Each test is bounded in real time (a subprocess); nothing sleeps.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
import trio
from mcp import ClientSession, StdioServerParameters, stdio_client

import trio_harness as th
from trio_harness.mcp import McpToolset
from trio_harness.providers import anthropic as anth
from trio_harness.providers import openai as oai

from .mcp_media_server import PDF, PNG
from .sdk_types import check_chat, check_messages, check_responses
from .server import Json, ScriptedServer, anthropic_message, chat_completion, response

SERVER = Path(__file__).with_name("mcp_media_server.py")
#: Real-time bound of one server's use in a test (start, calls, stop).
BOUND_S = 30


@asynccontextmanager
async def media_tools(**options: Any) -> AsyncIterator[tuple[th.ToolRuntime, McpToolset]]:
    runtime = th.ToolRuntime()
    toolset = McpToolset(runtime, **options)
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    with open(os.devnull, "w") as errlog:  # noqa: ASYNC230 - the server's log is not needed
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, message_handler=toolset.message_handler) as session,
        ):
            await session.initialize()
            await toolset.sync(session)
            yield runtime, toolset


async def test_the_toolset_registers_what_a_model_can_call_and_says_why_not() -> None:
    with trio.fail_after(BOUND_S):
        async with media_tools() as (runtime, toolset):
            reports = {report.name: report for report in toolset.reports}
            assert {name for name, report in reports.items() if report.registered} == {
                "screenshot",
                "report",
                "resize",
            }
            assert all(reports[name].fully_checked for name in ("screenshot", "report", "resize"))
            assert reports["files.read"].reasons == (
                'name "files.read" is not accepted by the model APIs (^[a-zA-Z0-9_-]{1,64}$); '
                "give McpToolset a rename= function",
            )
            assert reports["long_job"].reasons == (
                'execution.taskSupport is "required": the tool only runs as a task, and the '
                "toolset makes plain calls",
            )
            assert not reports["long_job"].fully_checked
            # int32/double formats no longer block registration; integer|number is a number.
            resize = {s["name"]: s for s in runtime.schemas()}["resize"]["parameters"]
            assert resize["properties"]["ratio"] == {"type": "number", "minimum": 0}
            assert resize["properties"]["scale"] == {"type": "number"}
            assert resize["properties"]["limit"] == {
                "oneOf": [{"type": "integer"}, {"type": "null"}]
            }
            assert any('format "int32" on integer dropped' in c for c in reports["resize"].changes)


async def test_renamed_tools_are_called_by_their_server_name() -> None:
    with trio.fail_after(BOUND_S):
        async with media_tools(rename=lambda name: name.replace(".", "_")) as (runtime, toolset):
            assert "files_read" in toolset.names
            result = await runtime.execute(
                th.ToolExecutionInput("c1", "files_read", {"path": "a.txt"})
            )
    assert json.loads(result.content[0]["text"]) == {
        "arguments": {"path": "a.txt"},
        "tool": "files.read",
    }


async def test_union_violations_of_mcp_tools_name_the_real_cause() -> None:
    with trio.fail_after(BOUND_S):
        async with media_tools() as (runtime, _):
            cases = {
                "box": {"ratio": 1, "box": {"width": "5", "unit": "px"}},
                "limit": {"ratio": -1, "limit": "many", "scale": 1.5},
            }
            results = {
                key: await runtime.execute(th.ToolExecutionInput(key, "resize", arguments))
                for key, arguments in cases.items()
            }
    assert results["box"].content[0]["text"] == (
        'Error: invalid arguments: "box.width" must be an integer'
    )
    assert results["limit"].content[0]["text"] == (
        'Error: invalid arguments: "ratio" must be >= 0; "limit" must be an integer or null'
    )


def screenshot_then_report_calls() -> list[tuple[str, str, str]]:
    return [("c1", "screenshot", "{}"), ("c2", "report", "{}")]


async def test_mcp_images_reach_anthropic_as_image_blocks() -> None:
    uses = [(call_id, name, {}) for call_id, name, _ in screenshot_then_report_calls()]
    script = [Json(anthropic_message(tool_uses=uses)), Json(anthropic_message(text="A dot."))]
    with trio.fail_after(BOUND_S), ScriptedServer(script) as server:
        async with (
            media_tools() as (runtime, _),
            anthropic.AsyncAnthropic(base_url=server.url, api_key="t", max_retries=0) as sdk,
        ):
            model = anth.MessagesModel(sdk, "claude-test")
            model.add_user("look")
            await th.run_turn(model, runtime, th.Session())
    answer = server.requests[1].body["messages"][2]["content"]
    assert answer[0]["content"] == [
        {"type": "text", "text": "the screen"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]
    assert answer[1]["content"] == [
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
        }
    ]
    for request in server.requests:
        check_messages(request.body)


async def test_mcp_images_reach_chat_completions_as_a_note_not_base64() -> None:
    script = [
        Json(chat_completion(tool_calls=screenshot_then_report_calls())),
        Json(chat_completion(content="A dot.")),
    ]
    with trio.fail_after(BOUND_S), ScriptedServer(script) as server:
        async with (
            media_tools() as (runtime, _),
            openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="t", max_retries=0) as sdk,
        ):
            model = oai.ChatCompletionsModel(sdk, "m")
            model.add_user("look")
            await th.run_turn(model, runtime, th.Session())
    messages = server.requests[1].body["messages"]
    assert messages[2:] == [
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "the screen\n[image image/png, 71 bytes: not shown]",
        },
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": "[resource file:///tmp/report.pdf application/pdf, 15 bytes: not shown]",
        },
    ]
    for request in server.requests:
        check_chat(request.body)


async def test_mcp_images_reach_the_responses_api_as_input_images() -> None:
    script = [
        Json(response(tool_calls=screenshot_then_report_calls())),
        Json(response(text="A dot.")),
    ]
    with trio.fail_after(BOUND_S), ScriptedServer(script) as server:
        async with (
            media_tools() as (runtime, _),
            openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="t", max_retries=0) as sdk,
        ):
            model = oai.ResponsesModel(sdk, "m")
            model.add_user("look")
            await th.run_turn(model, runtime, th.Session())
    outputs = server.requests[1].body["input"][-2:]
    assert outputs == [
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": [
                {"type": "input_text", "text": "the screen"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
            ],
        },
        {
            "type": "function_call_output",
            "call_id": "c2",
            "output": [
                {
                    "type": "input_file",
                    "filename": "report.pdf",
                    "file_data": f"data:application/pdf;base64,{PDF}",
                }
            ],
        },
    ]
    for request in server.requests:
        check_responses(request.body)


@pytest.mark.parametrize(
    "adapter", [oai.chat_tools, oai.responses_tools, anth.tools_param], ids=lambda f: f.__name__
)
def test_the_adapters_refuse_names_the_apis_reject(adapter: Any) -> None:
    tools = [
        {"name": "ok_name-1", "parameters": {"type": "object"}},
        {"name": "files.read", "parameters": {"type": "object"}},
        {"name": "x" * 65, "parameters": {"type": "object"}},
    ]
    with pytest.raises(ValueError, match="tool names must match") as caught:
        adapter(tools)
    assert str(caught.value).startswith(
        'tool names must match ^[a-zA-Z0-9_-]{1,64}$ for OpenAI and Anthropic; rename "files.read", "xxx'
    )


def test_number_formats_and_number_unions_are_normalised_exactly() -> None:
    report = th.schema.normalize_json_schema(
        {
            "type": "object",
            "properties": {
                "n": {"type": ["integer", "null"], "format": "int64"},
                "x": {"type": "number", "format": "float", "maximum": 1},
                "any": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "number"}]},
                "tag": {"type": "string", "format": "uuid"},
                # Not simplified: the number branch is constrained, so the branches overlap.
                "both": {"anyOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]},
            },
        }
    )
    properties = report.schema["properties"]
    assert properties["n"] == {"oneOf": [{"type": "integer"}, {"type": "null"}]}
    assert properties["x"] == {"type": "number", "maximum": 1}
    assert properties["any"] == {"type": "number"}
    assert properties["tag"] == {"type": "string", "format": "uuid"}
    assert "both" in properties
    assert report.unkept == (
        "schema.properties.both.anyOf: branches overlap by type (anyOf is not expressible as "
        "oneOf); removed",
    )
    assert report.violations == ()
