"""Streams and replies as real servers send them, through the real SDKs (issue 20, item 4).

Tool-call deltas without ``index`` (Gemini's OpenAI endpoint), Gemini thought signatures,
``arguments`` sent as an object, streams that end before their end marker or inside an event,
a dropped connection, Anthropic deltas for a block that never started and invalid streamed tool
input, ``choices: []``, and ``custom`` tool calls. Every request the library sends next is
checked against the SDK's own request types.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest

import trio_harness as th
from trio_harness.providers import ProviderResponseError, ProviderStreamError
from trio_harness.providers import anthropic as anth
from trio_harness.providers import openai as oai

from .conftest import UnfinishedGenerators
from .sdk_types import check_chat, check_messages, check_responses
from .server import (
    Json,
    Raw,
    ScriptedServer,
    Sse,
    anthropic_events,
    chat_chunks,
    chat_completion,
    response,
    response_events,
)
from .tools import runtime_with

FILES = {"a.txt": "alpha", "b.txt": "bravo"}


def openai_client(server: ScriptedServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)


def anthropic_client(server: ScriptedServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=server.url, api_key="test", max_retries=0)


def frames(events: list[tuple[str | None, Any]]) -> list[bytes]:
    """The SSE frames of ``events``, as the scripted server writes them, one per chunk."""
    out = []
    for event, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append(((f"event: {event}\n" if event else "") + f"data: {text}\n\n").encode())
    return out


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-g",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gemini-3-flash",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


# -- Gemini-style deltas and thought signatures ------------------------------------------------

SIGNATURE = {"google": {"thought_signature": "CrICAdHtim827fQ=="}}


def gemini_stream() -> list[tuple[str | None, Any]]:
    # Gemini's OpenAI endpoint sends each call whole, without "index"; the first carries the
    # thought signature the next request must send back.
    return [
        (None, chunk({"role": "assistant", "content": "Reading both."})),
        (
            None,
            chunk(
                {
                    "tool_calls": [
                        {
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path":"a.txt"}'},
                            "extra_content": SIGNATURE,
                        }
                    ]
                }
            ),
        ),
        (
            None,
            chunk(
                {
                    "tool_calls": [
                        {
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path":"b.txt"}'},
                        }
                    ]
                }
            ),
        ),
        (None, chunk({}, "tool_calls")),
        (None, "[DONE]"),
    ]


async def test_deltas_without_index_are_separate_calls_and_signatures_go_back(
    unfinished_generators: UnfinishedGenerators,
) -> None:
    script = [Sse(gemini_stream()), Sse(chat_chunks(content=["a is alpha, b is bravo"]))]
    with ScriptedServer(script) as server:
        async with openai_client(server) as sdk:
            model = oai.ChatCompletionsModel(sdk, "gemini-3-flash", stream=True)
            model.add_user("read a and b")
            result = await th.run_turn(model, runtime_with(dict(FILES)), th.Session())
    assert result.stop == "done"
    assert [(r.call_id, r.result.content[0]["text"]) for r in result.results] == [
        ("call_a", "alpha"),
        ("call_b", "bravo"),
    ]
    second = server.requests[1].body
    assert second["messages"][1]["tool_calls"] == [
        {
            "id": "call_a",
            "type": "function",
            "function": {"name": "read", "arguments": '{"path":"a.txt"}'},
            "extra_content": SIGNATURE,
        },
        {
            "id": "call_b",
            "type": "function",
            "function": {"name": "read", "arguments": '{"path":"b.txt"}'},
        },
    ]
    for request in server.requests:
        check_chat(request.body)
    assert unfinished_generators.collect() == []


def test_a_new_id_at_a_known_index_starts_a_new_call() -> None:
    accumulator = oai.ChatStreamAccumulator()
    for call_id, path in (("c1", "a"), ("c2", "b")):
        accumulator.add(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call_id,
                            "function": {"name": "read", "arguments": f'{{"path":"{path}"}}'},
                        }
                    ]
                }
            )
        )
    accumulator.add(chunk({"tool_calls": [{"function": {"arguments": ""}}]}))
    assert accumulator.tool_calls() == [
        th.ToolCallBlock("c1", "read", '{"path":"a"}'),
        th.ToolCallBlock("c2", "read", '{"path":"b"}'),
    ]


async def test_a_non_streamed_gemini_signature_goes_back_too() -> None:
    body = chat_completion(tool_calls=[("call_a", "read", '{"path":"a.txt"}')])
    body["choices"][0]["message"]["tool_calls"][0]["extra_content"] = SIGNATURE
    with ScriptedServer([Json(body), Json(chat_completion(content="ok"))]) as server:
        async with openai_client(server) as sdk:
            model = oai.ChatCompletionsModel(sdk, "gemini-3-flash")
            model.add_user("read a")
            await th.run_turn(model, runtime_with(dict(FILES)), th.Session())
    assert server.requests[1].body["messages"][1]["tool_calls"][0]["extra_content"] == SIGNATURE


# -- arguments as an object ----------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_arguments_sent_as_an_object_are_handled(stream: bool) -> None:
    arguments = {"path": "a.txt"}
    if stream:
        events = [
            (None, chunk({"role": "assistant", "content": ""})),
            (
                None,
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "read", "arguments": arguments},
                            }
                        ]
                    }
                ),
            ),
            (None, chunk({}, "tool_calls")),
            (None, "[DONE]"),
        ]
        script: list[Json | Sse] = [Sse(events), Sse(chat_chunks(content=["ok"]))]
    else:
        body = chat_completion(tool_calls=[("c1", "read", "")])
        body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = arguments
        script = [Json(body), Json(chat_completion(content="ok"))]
    with ScriptedServer(script) as server:
        async with openai_client(server) as sdk:
            model = oai.ChatCompletionsModel(sdk, "m", stream=stream)
            model.add_user("read")
            result = await th.run_turn(model, runtime_with(dict(FILES)), th.Session())
    assert result.stop == "done"
    second = server.requests[1].body["messages"]
    assert second[1]["tool_calls"][0]["function"]["arguments"] == '{"path":"a.txt"}'
    assert second[2] == {"role": "tool", "tool_call_id": "c1", "content": "alpha"}
    for request in server.requests:
        check_chat(request.body)


# -- streams that end early ----------------------------------------------------------------------


def cut_streams() -> dict[str, tuple[str, list[tuple[str | None, Any]]]]:
    chat = chat_chunks(content=["Hel", "lo"], tool_calls=[("c1", "read", ['{"path":', '"a"}'])])
    # Everything up to the last tool-call fragment: no finish_reason, no [DONE].
    return {
        "chat": ("chat", chat[:4]),
        "responses": ("responses", response_events(text="Hello")[:3]),
        "anthropic": ("anthropic", anthropic_events(text=["Hel", "lo"])[:3]),
    }


async def step_of(kind: str, server: ScriptedServer) -> th.ModelStep:
    if kind == "anthropic":
        async with anthropic_client(server) as sdk:
            return await anth.MessagesModel(sdk, "c", stream=True).step([])
    async with openai_client(server) as sdk:
        model: Any = (
            oai.ChatCompletionsModel(sdk, "m", stream=True)
            if kind == "chat"
            else oai.ResponsesModel(sdk, "m", stream=True)
        )
        step: th.ModelStep = await model.step([])
        return step


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
async def test_a_stream_that_ends_before_its_end_marker_is_an_error(api: str) -> None:
    kind, events = cut_streams()[api]
    with (
        ScriptedServer([Raw(frames(events))]) as server,
        pytest.raises(ProviderStreamError, match="the stream ended before"),
    ):
        await step_of(kind, server)


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
async def test_a_stream_cut_inside_an_event_is_an_error_not_a_json_error(api: str) -> None:
    kind, events = cut_streams()[api]
    pieces = frames(events)
    pieces[-1] = pieces[-1][: len(pieces[-1]) // 2]  # the last event stops halfway
    with (
        ScriptedServer([Raw(pieces)]) as server,
        pytest.raises(ProviderStreamError, match="ended in the middle of an event"),
    ):
        await step_of(kind, server)


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
async def test_a_dropped_connection_is_a_stream_error(
    api: str, unfinished_generators: UnfinishedGenerators
) -> None:
    kind, events = cut_streams()[api]
    with (
        ScriptedServer([Raw(frames(events), abort=True)]) as server,
        pytest.raises(ProviderStreamError, match="the stream broke off before its end"),
    ):
        await step_of(kind, server)
    assert unfinished_generators.collect() == []


async def test_an_event_that_is_not_json_is_named() -> None:
    with (
        ScriptedServer([Raw([b"data: {oops}\n\n"])]) as server,
        pytest.raises(ProviderStreamError, match="a stream event is not JSON"),
    ):
        await step_of("chat", server)


# -- Anthropic: deltas for unknown blocks, invalid streamed input ----------------------------------


async def test_an_anthropic_delta_for_a_block_never_started_is_an_error() -> None:
    events = anthropic_events(text=["Hi"])
    events[2][1]["index"] = 3  # the text delta names a block that was never started
    with (
        ScriptedServer([Sse(events)]) as server,
        pytest.raises(ProviderStreamError, match="content block 3, which never started"),
    ):
        await step_of("anthropic", server)


async def test_invalid_streamed_tool_input_is_reported_and_stored_as_an_object() -> None:
    events = anthropic_events(tool_uses=[("toolu_1", "read", ['{"path": "a.txt"', "}}"])])
    script = [Sse(events), Sse(anthropic_events(text=["Sorry."]))]
    with ScriptedServer(script) as server:
        async with anthropic_client(server) as sdk:
            model = anth.MessagesModel(sdk, "claude-test", stream=True)
            model.add_user("read")
            result = await th.run_turn(model, runtime_with(dict(FILES)), th.Session())
    assert result.stop == "done"
    second = server.requests[1].body["messages"]
    assert second[1]["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}
    ]
    assert second[2]["content"][0]["is_error"] is True
    assert second[2]["content"][0]["content"] == [
        {"type": "text", "text": 'Error: invalid arguments: "arguments" must be an object'}
    ]
    for request in server.requests:
        check_messages(request.body)


# -- choices: [] ---------------------------------------------------------------------------------


async def test_a_completion_without_choices_is_a_clear_error() -> None:
    body = chat_completion(content="x")
    body["choices"] = []
    with ScriptedServer([Json(body)]) as server:
        async with openai_client(server) as sdk:
            with pytest.raises(ProviderResponseError, match="the completion has no choices"):
                await oai.ChatCompletionsModel(sdk, "m").step([])
    with pytest.raises(ProviderResponseError):
        oai.chat_tool_calls(body)


async def test_the_usage_chunk_without_choices_is_read_for_usage() -> None:
    events = chat_chunks(content=["Hi"])
    usage = {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}
    events.insert(-1, (None, {**chunk({}), "id": "chatcmpl-1", "choices": [], "usage": usage}))
    with ScriptedServer([Sse(events)]) as server:
        async with openai_client(server) as sdk:
            step = await oai.ChatCompletionsModel(sdk, "m", stream=True).step([])
    assert (step.text, step.finish, step.response_id) == ("Hi", "end", "chatcmpl-1")
    assert step.usage == th.turn.Usage(input_tokens=9, output_tokens=2)
    assert server.requests[0].body["stream_options"] == {"include_usage": True}


# -- custom tool calls ---------------------------------------------------------------------------


async def test_chat_custom_tool_calls_keep_their_name() -> None:
    body = chat_completion()
    body["choices"][0]["finish_reason"] = "tool_calls"
    body["choices"][0]["message"]["tool_calls"] = [
        {"id": "c1", "type": "custom", "custom": {"name": "read", "input": '{"path":"a.txt"}'}}
    ]
    with ScriptedServer([Json(body), Json(chat_completion(content="ok"))]) as server:
        async with openai_client(server) as sdk:
            model = oai.ChatCompletionsModel(sdk, "m")
            model.add_user("read")
            result = await th.run_turn(model, runtime_with(dict(FILES)), th.Session())
    assert [(r.name, r.result.content[0]["text"]) for r in result.results] == [("read", "alpha")]
    second = server.requests[1].body["messages"]
    assert second[1]["tool_calls"] == [
        {"id": "c1", "type": "custom", "custom": {"name": "read", "input": '{"path":"a.txt"}'}}
    ]
    assert second[2] == {"role": "tool", "tool_call_id": "c1", "content": "alpha"}
    for request in server.requests:
        check_chat(request.body)


async def test_responses_custom_tool_calls_are_answered_with_custom_outputs() -> None:
    body = response()
    body["output"] = [
        {
            "type": "custom_tool_call",
            "id": "ctc_1",
            "call_id": "call_1",
            "name": "read",
            "input": '{"path":"b.txt"}',
            "status": "completed",
        }
    ]
    with ScriptedServer([Json(body), Json(response(text="ok"))]) as server:
        async with openai_client(server) as sdk:
            model = oai.ResponsesModel(sdk, "m")
            model.add_user("read")
            result = await th.run_turn(model, runtime_with(dict(FILES)), th.Session())
    assert [(r.name, r.result.content[0]["text"]) for r in result.results] == [("read", "bravo")]
    assert server.requests[1].body["input"][-1] == {
        "type": "custom_tool_call_output",
        "call_id": "call_1",
        "output": "bravo",
    }
    for request in server.requests:
        check_responses(request.body)
