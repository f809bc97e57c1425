"""Request bodies checked against the official SDKs' own request types, plus the documented rules
those types cannot express.

``check_chat``, ``check_responses`` and ``check_messages`` validate a JSON body (as the scripted
server received it) with pydantic against ``openai`` / ``anthropic`` ``*CreateParams`` TypedDicts:
every nested ``Iterable`` is consumed so its items are validated too. Then the rules the APIs
document but the types leave open are checked: an assistant message has content unless it has
tool calls, every tool call is answered before the conversation moves on, function names match
``^[a-zA-Z0-9_-]{1,64}$``, Anthropic content is never empty.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import pydantic
from anthropic.types import message_create_params
from openai.types.chat import completion_create_params
from openai.types.responses import response_create_params

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class InvalidRequest(AssertionError):
    """A body the real API would reject."""


@functools.cache
def _adapter(kind: str, stream: bool) -> pydantic.TypeAdapter[Any]:
    types: dict[tuple[str, bool], Any] = {
        ("chat", False): completion_create_params.CompletionCreateParamsNonStreaming,
        ("chat", True): completion_create_params.CompletionCreateParamsStreaming,
        ("responses", False): response_create_params.ResponseCreateParamsNonStreaming,
        ("responses", True): response_create_params.ResponseCreateParamsStreaming,
        ("messages", False): message_create_params.MessageCreateParamsNonStreaming,
        ("messages", True): message_create_params.MessageCreateParamsStreaming,
    }
    return pydantic.TypeAdapter(types[kind, stream])


def _consume(value: Any) -> Any:
    # pydantic validates Iterable[...] fields lazily: iterate to validate the items.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in list(item.items()):
                if not isinstance(child, str | bytes | int | float | bool | type(None)):
                    if not isinstance(child, dict | list | tuple):
                        child = item[key] = list(child)
                    stack.append(child)
        elif isinstance(item, list | tuple):
            for index, child in enumerate(list(item)):
                if isinstance(child, dict | list | tuple):
                    stack.append(child)
                elif not isinstance(child, str | bytes | int | float | bool | type(None)):
                    materialised = list(child)
                    if isinstance(item, list):
                        item[index] = materialised
                    stack.append(materialised)
    return value


def check_chat(body: Any) -> None:
    """A Chat Completions request body, as the API documents it."""
    try:
        _consume(_adapter("chat", bool(body.get("stream"))).validate_python(body))
    except pydantic.ValidationError as error:
        raise InvalidRequest(f"chat body does not validate: {error}") from None
    for tool in body.get("tools", ()):
        if tool.get("type") == "function" and not NAME.match(tool["function"]["name"]):
            raise InvalidRequest(f"bad function name {tool['function']['name']!r}")
    open_calls: set[str] = set()
    for message in body["messages"]:
        role = message["role"]
        if role == "tool":
            if message["tool_call_id"] not in open_calls:
                raise InvalidRequest(f"tool message for unknown call {message['tool_call_id']}")
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            raise InvalidRequest(f"calls {sorted(open_calls)} not answered before a {role} message")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") is None and not calls:
                raise InvalidRequest("assistant message without content and without tool_calls")
            for call in calls:
                function = call.get("function") or call.get("custom")
                if call.get("type") == "function" and not isinstance(function["arguments"], str):
                    raise InvalidRequest("function.arguments must be a string")
                open_calls.add(call["id"])


def check_responses(body: Any) -> None:
    """A Responses API request body: types, and every function call answered."""
    try:
        _consume(_adapter("responses", bool(body.get("stream"))).validate_python(body))
    except pydantic.ValidationError as error:
        raise InvalidRequest(f"responses body does not validate: {error}") from None
    for tool in body.get("tools", ()):
        if tool.get("type") == "function" and not NAME.match(tool["name"]):
            raise InvalidRequest(f"bad function name {tool['name']!r}")
    items = body["input"] if isinstance(body["input"], list) else []
    calls = {
        item["call_id"]
        for item in items
        if item.get("type") in ("function_call", "custom_tool_call")
    }
    answered = {
        item["call_id"]
        for item in items
        if item.get("type") in ("function_call_output", "custom_tool_call_output")
    }
    if calls - answered:
        raise InvalidRequest(f"no output for calls {sorted(calls - answered)}")


def check_messages(body: Any) -> None:
    """An Anthropic Messages request body: types, non-empty content, every tool_use answered."""
    try:
        _consume(_adapter("messages", bool(body.get("stream"))).validate_python(body))
    except pydantic.ValidationError as error:
        raise InvalidRequest(f"messages body does not validate: {error}") from None
    for tool in body.get("tools", ()):
        if not NAME.match(tool["name"]):
            raise InvalidRequest(f"bad tool name {tool['name']!r}")
    messages = body["messages"]
    for index, message in enumerate(messages):
        content = message["content"]
        if not content and index < len(messages) - 1:
            raise InvalidRequest(f"message {index} has empty content")
        if message["role"] != "assistant" or isinstance(content, str):
            continue
        uses = [block["id"] for block in content if block["type"] == "tool_use"]
        if not uses:
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        results = (
            [
                block["tool_use_id"]
                for block in following["content"]
                if isinstance(block, dict) and block.get("type") == "tool_result"
            ]
            if following is not None and not isinstance(following["content"], str)
            else []
        )
        if following is not None and sorted(results) != sorted(uses):
            raise InvalidRequest(f"tool_use {uses} answered by {results}")
