"""Stop reasons, usage and response ids through the real SDKs (issue 20, items 2 and 3).

Every provider stop (tool calls, end, length / max_tokens, refusal, content filter, failed,
incomplete) is visible in the turn's result; a reply cut short never runs its tool calls; and
the stored conversation stays valid: the next request is checked against the SDK's own request
types (``sdk_types``) and the rules the APIs document.
"""

from __future__ import annotations

import copy
from typing import Any

import anthropic
import openai
import pytest

import trio_harness as th
from trio_harness.providers import anthropic as anth
from trio_harness.providers import openai as oai

from .sdk_types import check_chat, check_messages, check_responses
from .server import (
    Json,
    ScriptedServer,
    Sse,
    anthropic_events,
    anthropic_message,
    chat_completion,
    response,
    response_events,
)
from .tools import runtime_with


def openai_client(server: ScriptedServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)


def anthropic_client(server: ScriptedServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=server.url, api_key="test", max_retries=0)


def completion(*, finish: str, **message: Any) -> dict[str, Any]:
    body = chat_completion(
        content=message.pop("content", None), tool_calls=message.pop("tool_calls", ())
    )
    body["choices"][0]["finish_reason"] = finish
    body["choices"][0]["message"].update(message)
    return body


def tool_calls_run(session: th.Session) -> list[str]:
    return [event.data.tool_call_id for event in session.events if event.type == "tool/call"]


# -- Chat Completions --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "finish", "refusal"),
    [
        (completion(finish="stop", refusal="I can't help with that."), "refusal", True),
        (completion(finish="content_filter"), "content_filter", False),
        (completion(finish="length", content="The answer is"), "length", False),
        (completion(finish="stop", content="Done."), "end", False),
    ],
)
async def test_chat_stop_reasons_are_visible_and_the_conversation_stays_valid(
    reply: dict[str, Any], finish: str, refusal: bool
) -> None:
    script = [Json(reply), Json(chat_completion(content="Next."))]
    with ScriptedServer(script) as server:
        async with openai_client(server) as sdk:
            model = oai.ChatCompletionsModel(sdk, "m")
            model.add_user("hi")
            result = await th.run_turn(model, runtime_with({}), th.Session())
            model.add_user("and now?")
            await th.run_turn(model, runtime_with({}), th.Session())
    assert (result.stop, result.finish) == ("done", finish)
    assert result.reply is not None
    assert result.reply.refusal == ("I can't help with that." if refusal else None)
    assert result.response_id == "chatcmpl-1"
    assert result.usage == th.turn.Usage(input_tokens=10, output_tokens=5)
    stored = server.requests[1].body["messages"][1]
    assert stored["role"] == "assistant"
    assert stored["content"] is not None
    if refusal:
        assert stored["content"] == [{"type": "refusal", "refusal": "I can't help with that."}]
    for request in server.requests:
        check_chat(request.body)


async def test_a_chat_tool_call_cut_by_the_length_limit_is_never_run() -> None:
    files = {"a.txt": "alpha"}
    cut = [("c1", "read", '{"path": "a.txt"}'), ("c2", "write", '{"path": "a.txt", "te')]
    script = [
        Json(completion(finish="length", content="Writing.", tool_calls=cut)),
        Json(chat_completion(content="ok")),
    ]
    session = th.Session()
    with ScriptedServer(script) as server:
        async with openai_client(server) as sdk:
            model = oai.ChatCompletionsModel(sdk, "m")
            model.add_user("write")
            result = await th.run_turn(model, runtime_with(files), session)
            model.add_user("try again, shorter")
            await th.run_turn(model, runtime_with(files), th.Session())
    assert (result.stop, result.finish, result.steps) == ("done", "length", 0)
    assert result.reply is not None
    assert result.reply.tool_calls == ()
    assert result.reply.cut_calls == tuple(th.ToolCallBlock(*call) for call in cut)
    assert tool_calls_run(session) == []
    assert files == {"a.txt": "alpha"}
    # Stored without the cut calls (nothing answers them), so the next request is valid.
    assert server.requests[1].body["messages"][1] == {"role": "assistant", "content": "Writing."}
    for request in server.requests:
        check_chat(request.body)


# -- Responses API -----------------------------------------------------------------------------


async def test_responses_tools_say_strict_false_and_strict_false_is_honoured() -> None:
    @th.tool
    async def find(query: str, limit: int | None = None) -> str:
        """Find."""
        return query

    @th.tool
    async def exact(path: str) -> str:
        """All required: strict-expressible."""
        return path

    runtime = th.ToolRuntime()
    runtime.register(find)
    runtime.register(exact)
    script = [Json(response(text="a")), Json(response(text="b"))]
    with ScriptedServer(script) as server:
        async with openai_client(server) as sdk:
            for strict in (None, False):
                model = oai.ResponsesModel(sdk, "m", strict=strict)
                model.add_user("go")
                await th.run_turn(model, runtime, th.Session())
    default, never = (request.body["tools"] for request in server.requests)
    # The API makes a tool strict when "strict" is absent: a non-strict tool says false.
    assert [(tool["name"], tool["strict"]) for tool in default] == [
        ("find", False),
        ("exact", True),
    ]
    assert [(tool["name"], tool["strict"]) for tool in never] == [
        ("find", False),
        ("exact", False),
    ]
    assert never[1]["parameters"] == exact.parameters  # not tightened
    assert default[1]["parameters"]["additionalProperties"] is False
    for request in server.requests:
        check_responses(request.body)


def failed_response() -> dict[str, Any]:
    body = response()
    body.update(
        status="failed",
        error={"code": "server_error", "message": "The model had a problem."},
        output=[],
    )
    return body


@pytest.mark.parametrize("stream", [False, True])
async def test_a_failed_response_raises_a_clear_error(stream: bool) -> None:
    body = failed_response()
    events: list[tuple[str | None, Any]] = [
        *response_events()[:1],
        (
            "response.failed",
            {"type": "response.failed", "sequence_number": 1, "response": body},
        ),
    ]
    reply = Sse(events) if stream else Json(body)
    with ScriptedServer([reply]) as server:
        async with openai_client(server) as sdk:
            model = oai.ResponsesModel(sdk, "m", stream=stream)
            model.add_user("go")
            with pytest.raises(th.providers.ProviderResponseError) as caught:
                await th.run_turn(model, runtime_with({}), th.Session())
    assert str(caught.value) == "the response failed (server_error): The model had a problem."
    assert caught.value.code == "server_error"
    assert isinstance(caught.value, th.providers.ProviderError)


def incomplete(body: dict[str, Any], reason: str) -> dict[str, Any]:
    body = copy.deepcopy(body)
    body.update(status="incomplete", incomplete_details={"reason": reason})
    for item in body["output"]:
        if item["type"] == "function_call":
            item["status"] = "incomplete"
            item["arguments"] = item["arguments"][:5]
    return body


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("reason", "finish"), [("max_output_tokens", "length"), ("content_filter", "content_filter")]
)
async def test_an_incomplete_response_is_visible_and_its_calls_never_run(
    stream: bool, reason: str, finish: str
) -> None:
    files = {"a.txt": "alpha"}
    calls = [("call_1", "write", '{"path":"a.txt","text":"zz"}')]
    body = incomplete(response(text="Writing.", tool_calls=calls), reason)
    if stream:
        events = response_events(text="Writing.", tool_calls=calls)[:-1]
        for _, data in events:
            # The item done is the cut one the final response lists (a streamed step would run
            # a call whose item completed before the cut: tests/apps/test_stream_calls.py).
            if data["type"] == "response.output_item.done" and data["item"]["type"] != "message":
                data["item"] = body["output"][1]
        events.append(
            (
                "response.incomplete",
                {"type": "response.incomplete", "sequence_number": 99, "response": body},
            )
        )
        first: Json | Sse = Sse(events)
    else:
        first = Json(body)
    session = th.Session()
    second = Sse(response_events(text="ok")) if stream else Json(response(text="ok"))
    with ScriptedServer([first, second]) as server:
        async with openai_client(server) as sdk:
            model = oai.ResponsesModel(sdk, "m", stream=stream)
            model.add_user("write")
            result = await th.run_turn(model, runtime_with(files), session)
            model.add_user("again")
            await th.run_turn(model, runtime_with(files), th.Session())
    assert (result.stop, result.finish, result.text) == ("done", finish, "Writing.")
    assert result.reply is not None
    assert [call.id for call in result.reply.cut_calls] == ["call_1"]
    assert result.reply.stop_reason == "incomplete"
    assert tool_calls_run(session) == []
    assert files == {"a.txt": "alpha"}
    sent = server.requests[1].body["input"]
    assert [item.get("type") for item in sent] == [None, "message", None]
    for request in server.requests:
        check_responses(request.body)


async def test_a_responses_refusal_and_usage_are_visible() -> None:
    body = response()
    body["output"] = [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "refusal", "refusal": "I can't do that."}],
        }
    ]
    body["usage"]["input_tokens_details"]["cached_tokens"] = 4
    with ScriptedServer([Json(body), Json(response(text="ok"))]) as server:
        async with openai_client(server) as sdk:
            model = oai.ResponsesModel(sdk, "m")
            model.add_user("bad idea")
            result = await th.run_turn(model, runtime_with({}), th.Session())
            model.add_user("fine")
            await th.run_turn(model, runtime_with({}), th.Session())
    assert (result.finish, result.response_id) == ("refusal", "resp_1")
    assert result.reply is not None
    assert result.reply.refusal == "I can't do that."
    assert result.usage == th.turn.Usage(input_tokens=10, output_tokens=5, cached_input_tokens=4)
    for request in server.requests:
        check_responses(request.body)


# -- Anthropic ---------------------------------------------------------------------------------


def message(stop: str, **kwargs: Any) -> dict[str, Any]:
    body = anthropic_message(**kwargs)
    body["stop_reason"] = stop
    return body


@pytest.mark.parametrize(
    ("reply", "finish"),
    [
        (message("refusal"), "refusal"),
        (message("refusal", text="I started to"), "refusal"),
        (message("max_tokens", text="The answer is"), "length"),
        (message("model_context_window_exceeded", text="Partial"), "length"),
        (message("pause_turn", text="Searching"), "pause"),
        (message("stop_sequence", text="END"), "end"),
    ],
)
async def test_anthropic_stop_reasons_are_visible_and_the_conversation_stays_valid(
    reply: dict[str, Any], finish: str
) -> None:
    script = [Json(reply), Json(anthropic_message(text="Next."))]
    with ScriptedServer(script) as server:
        async with anthropic_client(server) as sdk:
            model = anth.MessagesModel(sdk, "claude-test")
            model.add_user("hi")
            result = await th.run_turn(model, runtime_with({}), th.Session())
            model.add_user("and now?")
            await th.run_turn(model, runtime_with({}), th.Session())
    assert (result.stop, result.finish, result.response_id) == ("done", finish, "msg_1")
    assert result.reply is not None
    assert result.reply.stop_reason == reply["stop_reason"]
    for request in server.requests:
        check_messages(request.body)
    # A reply with no content left is not stored (the API rejects empty content).
    stored = server.requests[1].body["messages"]
    assert len(stored) == (2 if not reply["content"] else 3)


@pytest.mark.parametrize("stream", [False, True])
async def test_an_anthropic_tool_use_cut_by_max_tokens_is_never_run(stream: bool) -> None:
    files = {"a.txt": "alpha"}
    if stream:
        events = anthropic_events(
            text=["Writing."], tool_uses=[("toolu_1", "write", ['{"path": "a.txt", "te'])]
        )
        events[-2][1]["delta"]["stop_reason"] = "max_tokens"
        first: Json | Sse = Sse(events)
    else:
        first = Json(
            message(
                "max_tokens",
                text="Writing.",
                tool_uses=[("toolu_1", "write", {"path": "a.txt"})],
            )
        )
    session = th.Session()
    second = Sse(anthropic_events(text=["ok"])) if stream else Json(anthropic_message(text="ok"))
    with ScriptedServer([first, second]) as server:
        async with anthropic_client(server) as sdk:
            model = anth.MessagesModel(sdk, "claude-test", stream=stream)
            model.add_user("write")
            result = await th.run_turn(model, runtime_with(files), session)
            model.add_user("shorter please")
            await th.run_turn(model, runtime_with(files), th.Session())
    assert (result.stop, result.finish, result.steps) == ("done", "length", 0)
    assert result.reply is not None
    assert [call.id for call in result.reply.cut_calls] == ["toolu_1"]
    assert tool_calls_run(session) == []
    assert files == {"a.txt": "alpha"}
    assert server.requests[1].body["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Writing."}],
    }
    for request in server.requests:
        check_messages(request.body)


async def test_anthropic_usage_counts_cache_reads_and_writes_as_input() -> None:
    body = anthropic_message(text="hi")
    body["usage"] = {
        "input_tokens": 3,
        "output_tokens": 7,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
    }
    with ScriptedServer([Json(body)]) as server:
        async with anthropic_client(server) as sdk:
            model = anth.MessagesModel(sdk, "claude-test")
            model.add_user("hi")
            step = await model.step([])
    assert step.usage == th.turn.Usage(input_tokens=123, output_tokens=7, cached_input_tokens=100)
    assert step.usage.total_tokens == 130
