"""The OpenAI adapters and models, end to end through the real ``openai`` SDK.

Every test starts a scripted HTTP server on 127.0.0.1 that answers with recorded-shape bodies;
the SDK (``openai.AsyncOpenAI`` under Trio) parses them, the adapters convert, the pool runs real
tools. Nothing is mocked.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

import trio_harness as th
from trio_harness.providers import openai as oai
from trio_harness.providers import sse_events

from .conftest import UnfinishedGenerators
from .server import (
    Json,
    ScriptedServer,
    Sse,
    chat_chunks,
    chat_completion,
    response,
    response_events,
)
from .tools import runtime_with

FILES = {"a.txt": "alpha", "b.txt": "bravo"}


def client(server: ScriptedServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)


def first_step() -> list[tuple[str, str, str]]:
    # Two parallel reads, then a bad write (text missing) the model repairs in the next step.
    return [
        ("call_1", "read", '{"path": "a.txt"}'),
        ("call_2", "read", '{"path":"b.txt"}'),
        ("call_3", "write", '{"path": "c.txt"}'),
    ]


async def test_chat_completions_turn_through_the_sdk() -> None:
    files = dict(FILES)
    runtime = runtime_with(files)
    script = [
        Json(chat_completion(tool_calls=first_step())),
        Json(
            chat_completion(tool_calls=[("call_4", "write", '{"path":"c.txt","text":"charlie"}')])
        ),
        Json(chat_completion(content="Done: c.txt written.")),
    ]
    events: list[th.turn.TurnEvent] = []
    with ScriptedServer(script) as server:
        async with client(server) as sdk:
            model = oai.ChatCompletionsModel(sdk, "deepseek-chat")
            model.add_user("copy things")
            session = th.Session()
            result = await th.run_turn(model, runtime, session, on_event=events.append)
    assert (result.stop, result.steps, result.text) == ("done", 2, "Done: c.txt written.")
    assert (result.finish, result.response_id) == ("end", "chatcmpl-1")
    assert result.usage == th.turn.Usage(input_tokens=30, output_tokens=15)
    assert files["c.txt"] == "charlie"
    assert [r.call_id for r in result.results] == ["call_4"]

    first, second, third = (request.body for request in server.requests)
    assert [request.path for request in server.requests] == ["/v1/chat/completions"] * 3
    # The tools parameter: read/list have only required properties -> strict; write too.
    tools = {tool["function"]["name"]: tool for tool in first["tools"]}
    assert tools["read"] == {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "File name"}},
                "required": ["path"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    }
    # The second request carries the assistant message and the three results, in model order.
    assert second["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in first_step()
        ],
    }
    assert second["messages"][2:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "alpha"},
        {"role": "tool", "tool_call_id": "call_2", "content": "bravo"},
        {
            "role": "tool",
            "tool_call_id": "call_3",
            "content": 'Error: invalid arguments: missing required property "text"',
        },
    ]
    assert third["messages"][-1] == {"role": "tool", "tool_call_id": "call_4", "content": "7"}
    # Progress: the first step ran the two reads as one parallel group, the write alone.
    started = [e for e in events if isinstance(e, th.turn.StepStarted)]
    assert [[c.id for c in group] for group in started[0].groups] == [
        ["call_1", "call_2"],
        ["call_3"],
    ]
    # Bodies are entered in model order (the bad write's body starts too: validation is part of it).
    assert [e.call_id for e in events if isinstance(e, th.turn.ToolStarted)] == [
        "call_1",
        "call_2",
        "call_3",
        "call_4",
    ]
    assert [e.call_id for e in events if isinstance(e, th.turn.ToolCommitted)] == [
        "call_1",
        "call_2",
        "call_3",
        "call_4",
    ]
    # The session log holds both steps.
    assert [e.type for e in session.events].count("tool/result") == 4


async def test_streamed_chat_turn_through_the_sdk(
    unfinished_generators: UnfinishedGenerators,
) -> None:
    files = dict(FILES)
    runtime = runtime_with(files)
    script = [
        Sse(
            chat_chunks(
                content=["Let me ", "look."],
                tool_calls=[
                    ("call_1", "read", ['{"pa', 'th": "a.', 'txt"}']),
                    ("call_2", "list", ["{}"]),
                ],
            )
        ),
        Sse(chat_chunks(content=["All ", "good."])),
    ]
    streamed: list[str] = []
    with ScriptedServer(script) as server:
        async with client(server) as sdk:
            model = oai.ChatCompletionsModel(sdk, "m", stream=True, on_text=streamed.append)
            model.add_user("look")
            result = await th.run_turn(model, runtime, th.Session())
    assert result.stop == "done"
    assert result.text == "All good."
    assert streamed == ["Let me ", "look.", "All ", "good."]
    second = server.requests[1].body
    assert second["stream"] is True
    assert second["messages"][1] == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
            },
            {"id": "call_2", "type": "function", "function": {"name": "list", "arguments": "{}"}},
        ],
    }
    assert second["messages"][3] == {
        "role": "tool",
        "tool_call_id": "call_2",
        "content": '["a.txt","b.txt"]',
    }
    assert unfinished_generators.collect() == []


async def test_the_sdks_own_chat_stream_leaves_generators_unfinished_under_trio(
    unfinished_generators: UnfinishedGenerators,
) -> None:
    # Why the models read streams through sse_events: the SDK's iterator stops at [DONE]
    # without finishing its generator chain, even when read to the end.
    with ScriptedServer([Sse(chat_chunks(content=["x"]))]) as server:
        async with client(server) as sdk:
            stream = await sdk.chat.completions.create(model="m", messages=[], stream=True)
            chunks = [chunk async for chunk in stream]
    assert len(chunks) == 3
    assert unfinished_generators.collect() != []


async def test_leaving_a_stream_early_finishes_every_generator(
    unfinished_generators: UnfinishedGenerators,
) -> None:
    events = chat_chunks(content=["a", "b", "c", "d"])
    with ScriptedServer([Sse(events, hold_before=3)]) as server:
        async with (
            client(server) as sdk,
            sdk.chat.completions.with_streaming_response.create(
                model="m", messages=[], stream=True
            ) as raw,
            sse_events(raw) as stream,
        ):
            async for event in stream:
                first = event.json()
                break
    assert first["choices"][0]["delta"]["role"] == "assistant"
    assert unfinished_generators.collect() == []


async def test_a_stream_error_event_is_raised() -> None:
    events: list[tuple[str | None, Any]] = [
        (None, {"error": {"message": "overloaded", "type": "server_error"}})
    ]
    with ScriptedServer([Sse(events)]) as server:
        async with client(server) as sdk:
            model = oai.ChatCompletionsModel(sdk, "m", stream=True)
            with pytest.raises(th.providers.ProviderStreamError, match="overloaded"):
                await model.step([])


async def test_an_http_error_reaches_the_app_bare() -> None:
    script = [Json({"error": {"message": "bad key", "type": "invalid_request_error"}}, status=401)]
    with ScriptedServer(script) as server:
        async with client(server) as sdk:
            model = oai.ChatCompletionsModel(sdk, "m")
            with pytest.raises(openai.AuthenticationError):
                await th.run_turn(model, runtime_with({}), th.Session())


@pytest.mark.parametrize("stream", [False, True])
async def test_responses_api_turn_through_the_sdk(
    stream: bool, unfinished_generators: UnfinishedGenerators
) -> None:
    files = dict(FILES)
    runtime = runtime_with(files)
    reply = response_events if stream else response
    calls = [("call_1", "read", '{"path":"a.txt"}'), ("call_2", "read", '{"path":"zzz"}')]
    script = [
        (Sse if stream else Json)(reply(text="Reading.", tool_calls=calls)),  # type: ignore[operator]
        (Sse if stream else Json)(reply(text="a.txt says alpha; zzz is missing.")),  # type: ignore[operator]
    ]
    with ScriptedServer(script) as server:
        async with client(server) as sdk:
            model = oai.ResponsesModel(sdk, "gpt-test", instructions="Be brief.", stream=stream)
            model.add_user("read a.txt and zzz")
            result = await th.run_turn(model, runtime, th.Session())
    assert result.stop == "done"
    assert result.text == "a.txt says alpha; zzz is missing."
    first, second = (request.body for request in server.requests)
    assert [request.path for request in server.requests] == ["/v1/responses"] * 2
    assert first["instructions"] == "Be brief."
    assert first["tools"][0] == {
        "type": "function",
        "name": "read",
        "description": "Read a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "File name"}},
            "required": ["path"],
            "additionalProperties": False,
        },
        "strict": True,
    }
    sent = second["input"]
    assert [item.get("type") for item in sent[1:]] == [
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert sent[-2:] == [
        {"type": "function_call_output", "call_id": "call_1", "output": "alpha"},
        {"type": "function_call_output", "call_id": "call_2", "output": "Error: no such file: zzz"},
    ]
    assert unfinished_generators.collect() == []


def test_chat_adapters_read_plain_dicts() -> None:
    completion = chat_completion(tool_calls=[("c1", "read", '{"path":"a"}')])
    assert oai.chat_tool_calls(completion) == [th.ToolCallBlock("c1", "read", '{"path":"a"}')]
    accumulator = oai.ChatStreamAccumulator()
    for _, data in chat_chunks(tool_calls=[("c1", "read", ['{"pa', 'th":"a"}'])])[:-1]:
        accumulator.add(data)
    assert accumulator.tool_calls() == [th.ToolCallBlock("c1", "read", '{"path":"a"}')]
    assert accumulator.finish_reason == "tool_calls"
    assert json.loads(accumulator.tool_calls()[0].arguments) == {"path": "a"}


def test_the_system_prompt_goes_first_once() -> None:
    model = oai.ChatCompletionsModel(None, "m", system="Be brief.")
    assert model.messages == [{"role": "system", "content": "Be brief."}]
    resumed = [{"role": "system", "content": "Old."}, {"role": "user", "content": "hi"}]
    model = oai.ChatCompletionsModel(None, "m", list(resumed), system="Be brief.")
    assert model.messages == resumed


def test_a_repeated_function_name_in_later_deltas_is_not_doubled() -> None:
    accumulator = oai.ChatStreamAccumulator()
    for piece in ('{"path":', '"a"}'):
        accumulator.add(
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "c1",
                                    "function": {"name": "read", "arguments": piece},
                                }
                            ]
                        },
                    }
                ]
            }
        )
    assert accumulator.tool_calls() == [th.ToolCallBlock("c1", "read", '{"path":"a"}')]
