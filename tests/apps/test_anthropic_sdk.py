"""The Anthropic adapters and model, end to end through the real ``anthropic`` SDK."""

from __future__ import annotations

import json

import anthropic
import pytest

import trio_harness as th
from trio_harness.providers import anthropic as anth

from .conftest import UnfinishedGenerators
from .server import Json, ScriptedServer, Sse, anthropic_events, anthropic_message
from .tools import runtime_with


def client(server: ScriptedServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=server.url, api_key="test", max_retries=0)


async def test_messages_turn_through_the_sdk() -> None:
    files = {"a.txt": "alpha"}
    runtime = runtime_with(files)
    script = [
        Json(
            anthropic_message(
                text="Reading and writing.",
                tool_uses=[
                    ("toolu_1", "read", {"path": "a.txt"}),
                    ("toolu_2", "write", {"path": "b.txt", "text": 5}),
                ],
            )
        ),
        Json(anthropic_message(tool_uses=[("toolu_3", "write", {"path": "b.txt", "text": "五"})])),
        Json(anthropic_message(text="Wrote b.txt.")),
    ]
    session = th.Session()
    with ScriptedServer(script) as server:
        async with client(server) as sdk:
            model = anth.MessagesModel(sdk, "claude-test", system="Be brief.", max_tokens=200)
            model.add_user("copy a.txt")
            result = await th.run_turn(model, runtime, session)
    assert result.stop == "done"
    assert result.text == "Wrote b.txt."
    assert files["b.txt"] == "五"
    first, second, third = (request.body for request in server.requests)
    assert [request.path for request in server.requests] == ["/v1/messages"] * 3
    assert first["system"] == "Be brief."
    assert first["max_tokens"] == 200
    assert first["tools"][0] == {
        "name": "read",
        "description": "Read a file.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "File name"}},
            "required": ["path"],
        },
    }
    assert second["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading and writing."},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
            {
                "type": "tool_use",
                "id": "toolu_2",
                "name": "write",
                "input": {"path": "b.txt", "text": 5},
            },
        ],
    }
    # One user message answers the step: tool_result blocks in model order, is_error on failure.
    assert second["messages"][2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [{"type": "text", "text": "alpha"}],
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": [
                    {"type": "text", "text": 'Error: invalid arguments: "text" must be a string'}
                ],
                "is_error": True,
            },
        ],
    }
    assert third["messages"][-1]["content"][0]["content"] == [{"type": "text", "text": "1"}]
    # The session log has the argument text JSON.stringify would have written.
    calls = [e.data.arguments for e in session.events if e.type == "tool/call"]
    assert calls == [
        '{"path":"a.txt"}',
        '{"path":"b.txt","text":5}',
        '{"path":"b.txt","text":"五"}',
    ]


async def test_tool_use_input_becomes_javascript_exact_argument_text() -> None:
    # The SDK parses the API's JSON into Python values; the adapter writes them back as
    # JSON.stringify would: compact, non-ASCII kept, key order kept, JavaScript numbers.
    raw_input = (
        '{"z": 1.0, "a": 1e21, "small": 1e-7, "big": 12345678901234567890, '
        '"text": "é\\u2028\\ud83d\\ude00", "neg": -0.0, "nested": {"b": [0.1, 2.50]}}'
    )
    body = json.dumps(anthropic_message(tool_uses=[("t1", "f", {})]))
    body = body.replace('"input": {}', '"input": ' + raw_input)
    with ScriptedServer([Json(json.loads(body))]) as server:
        async with client(server) as sdk:
            message = await sdk.messages.create(model="c", max_tokens=10, messages=[])
    [call] = anth.tool_calls(message)
    assert call.arguments == (
        '{"z":1,"a":1e+21,"small":1e-7,"big":12345678901234567000,'
        '"text":"é\u2028😀","neg":0,"nested":{"b":[0.1,2.5]}}'
    )
    # The same from a plain dict.
    assert anth.tool_calls(json.loads(body)) == [call]


@pytest.mark.parametrize("pieces", [['{"path', '": "a.txt"}'], [""]])
async def test_streamed_messages_turn_through_the_sdk(
    pieces: list[str], unfinished_generators: UnfinishedGenerators
) -> None:
    runtime = runtime_with({"a.txt": "alpha"})
    tool = "read" if pieces[0] else "list"
    script = [
        Sse(anthropic_events(text=["Let me ", "see."], tool_uses=[("toolu_1", tool, pieces)])),
        Sse(anthropic_events(text=["Done."])),
    ]
    with ScriptedServer(script) as server:
        async with client(server) as sdk:
            model = anth.MessagesModel(sdk, "claude-test", stream=True)
            model.add_user("look")
            result = await th.run_turn(model, runtime, th.Session())
    assert (result.stop, result.steps, result.text, result.finish) == ("done", 1, "Done.", "end")
    # Usage is summed over both replies (input from message_start, output from message_delta).
    assert result.usage == th.turn.Usage(input_tokens=20, output_tokens=10)
    assert result.response_id == "msg_1"
    second = server.requests[1].body
    assert second["stream"] is True
    expected_input = {"path": "a.txt"} if pieces[0] else {}
    assert second["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me see."},
            {"type": "tool_use", "id": "toolu_1", "name": tool, "input": expected_input},
        ],
    }
    text = "alpha" if pieces[0] else '["a.txt"]'
    assert second["messages"][2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": text}],
        }
    ]
    assert unfinished_generators.collect() == []


async def test_an_error_event_in_the_stream_is_raised() -> None:
    events = [
        ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    ]
    with ScriptedServer([Sse(events)]) as server:
        async with client(server) as sdk:
            model = anth.MessagesModel(sdk, "claude-test", stream=True)
            with pytest.raises(th.providers.ProviderStreamError, match="Overloaded"):
                await model.step([])
