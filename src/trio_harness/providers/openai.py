"""OpenAI adapters: Chat Completions and the Responses API, as plain data.

Nothing here imports the ``openai`` package: SDK objects are read by attribute and plain ``dict`` s
by key, so responses from the SDK, from raw HTTP or from a recording all work. Any
OpenAI-compatible endpoint (DeepSeek's own API, a local server) is covered by the same code.

Chat Completions:

* :func:`chat_tools` — the ``tools=[{"type": "function", ...}]`` request parameter;
* :func:`chat_tool_calls` — an assistant message's ``tool_calls`` as ``ToolCallBlock`` s;
* :func:`chat_assistant_message` — the assistant message to append to the conversation;
* :func:`chat_tool_messages` — step results as ``role: "tool"`` messages, in model order;
* :class:`ChatStreamAccumulator` — rebuilds the message from streamed chunks.

Responses API: :func:`responses_tools`, :func:`responses_tool_calls`,
:func:`responses_tool_outputs` and :class:`ResponsesStreamAccumulator`.

The ready turn-loop models :class:`ChatCompletionsModel` and :class:`ResponsesModel` drive an SDK
client the application created (and closes: use ``async with openai.AsyncOpenAI(...)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from .._apps import ModelStep
from .._pool import StepResult, ToolCallBlock
from ._common import (
    ToolSource,
    dump,
    feed_stream,
    field,
    result_text,
    tool_specs,
)
from ._strict import strict_schema

__all__ = [
    "ChatCompletionsModel",
    "ChatStreamAccumulator",
    "ResponsesModel",
    "ResponsesStreamAccumulator",
    "chat_assistant_message",
    "chat_tool_calls",
    "chat_tool_messages",
    "chat_tools",
    "responses_tool_calls",
    "responses_tool_outputs",
    "responses_tools",
]


def _function(spec: dict[str, Any], strict: bool | None) -> dict[str, Any]:
    # The fields of a function tool shared by both APIs; ``strict`` only where the schema allows.
    out: dict[str, Any] = {
        "name": spec["name"],
        "description": spec["description"],
        "parameters": spec["parameters"],
    }
    if strict is False:
        return out
    tightened = strict_schema(spec["parameters"])
    if tightened is None:
        if strict:
            raise ValueError(
                f'tool "{spec["name"]}" cannot use strict mode: every property must be required '
                "and every object closed, with no oneOf or free-form json values"
            )
        return out
    out["parameters"] = tightened
    out["strict"] = True
    return out


def chat_tools(tools: ToolSource, *, strict: bool | None = None) -> list[dict[str, Any]]:
    """The Chat Completions ``tools`` parameter.

    Args:
        tools: A ``ToolRuntime`` (its ``schemas()``), or ``ToolDefinition`` s / schema dicts.
        strict: ``None`` (default): ``"strict": true`` on each tool whose schema strict mode can
            express without changing what is valid (every property required, every object
            closed); ``True``: require it (``ValueError`` otherwise); ``False``: never.

    Returns:
        ``[{"type": "function", "function": {"name", "description", "parameters"[, "strict"]}}]``.
    """
    return [{"type": "function", "function": _function(spec, strict)} for spec in tool_specs(tools)]


def chat_tool_calls(message: Any) -> list[ToolCallBlock]:
    """The tool calls of an assistant message (SDK ``ChatCompletionMessage`` or dict), in order.

    A completion (with ``choices``) is accepted too: its first choice's message is read.
    """
    choices = field(message, "choices")
    if choices:
        message = field(choices[0], "message")
    blocks = []
    for call in field(message, "tool_calls", ()):
        function = field(call, "function")
        blocks.append(
            ToolCallBlock(
                field(call, "id", ""), field(function, "name", ""), field(function, "arguments", "")
            )
        )
    return blocks


def chat_assistant_message(message: Any) -> dict[str, Any]:
    """The assistant message to append to ``messages`` before the tool results.

    Keeps ``content``, ``tool_calls`` and, when present, DeepSeek's ``reasoning_content``.
    """
    choices = field(message, "choices")
    if choices:
        message = field(choices[0], "message")
    out: dict[str, Any] = {"role": "assistant", "content": field(message, "content")}
    reasoning = field(message, "reasoning_content")
    if reasoning is not None:
        out["reasoning_content"] = reasoning
    calls = chat_tool_calls(message)
    if calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in calls
        ]
    return out


def chat_tool_messages(results: Sequence[StepResult]) -> list[dict[str, Any]]:
    """Step results as ``{"role": "tool", "tool_call_id", "content"}`` messages, in model order.

    ``content`` is the result's text (text blocks joined by newlines). Chat Completions has no
    error flag: a failed result's text starts with ``Error:``, which models read as a failure.
    """
    return [
        {"role": "tool", "tool_call_id": item.call_id, "content": result_text(item)}
        for item in results
    ]


@attrs.define(eq=False)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = attrs.field(factory=list)


@attrs.define(eq=False)
class ChatStreamAccumulator:
    """Rebuilds an assistant message from Chat Completions stream chunks.

    Feed every chunk to :meth:`add` (SDK ``ChatCompletionChunk`` or dict). Tool-call deltas are
    merged by their ``index``: the first delta carries ``id`` and ``function.name``, later ones
    carry fragments of ``function.arguments``.

    Attributes:
        text: The streamed assistant text so far.
        finish_reason: The choice's finish reason, once streamed.
        on_call: Called with each tool call as soon as it is complete (a call with a higher
            ``index`` began, or the choice finished), in order, once each; e.g. a memory
            channel's ``send_nowait`` feeding ``execute_tool_calls`` (streaming dispatch). Call
            :meth:`finish` at the stream's end.
    """

    text: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    on_call: Callable[[ToolCallBlock], object] | None = attrs.field(default=None, kw_only=True)
    _calls: dict[int, _PartialCall] = attrs.field(factory=dict)
    _sent: set[int] = attrs.field(factory=set)

    def add(self, chunk: Any) -> None:
        """Merge one chunk (only the first choice is read)."""
        choices = field(chunk, "choices", ())
        if not choices:
            return
        choice = choices[0]
        delta = field(choice, "delta")
        if delta is not None:
            self.text += field(delta, "content", "")
            self.reasoning += field(delta, "reasoning_content", "")
            for call in field(delta, "tool_calls", ()):
                index = field(call, "index", 0)
                if index not in self._calls:
                    self._complete(index - 1)  # a call began: every earlier one is complete
                partial = self._calls.setdefault(index, _PartialCall())
                partial.id = field(call, "id", partial.id)
                function = field(call, "function")
                if function is not None:
                    # The name comes whole in the call's first delta; some compatible servers
                    # repeat it in later deltas, so it is never concatenated.
                    partial.name = partial.name or field(function, "name", "")
                    partial.arguments.append(field(function, "arguments", ""))
        self.finish_reason = field(choice, "finish_reason", self.finish_reason)
        if self.finish_reason is not None:
            self.finish()

    def finish(self) -> None:
        """The stream ended: report every call not reported yet (see ``on_call``)."""
        self._complete(max(self._calls, default=-1))

    def _complete(self, through: int) -> None:
        on_call = self.on_call
        if on_call is None:
            return
        for index, call in sorted(self._calls.items()):
            if index > through:
                break
            if index not in self._sent:
                self._sent.add(index)
                on_call(ToolCallBlock(call.id, call.name, "".join(call.arguments)))

    def tool_calls(self) -> list[ToolCallBlock]:
        """The streamed tool calls, in ``index`` order."""
        return [
            ToolCallBlock(call.id, call.name, "".join(call.arguments))
            for _, call in sorted(self._calls.items())
        ]

    def message(self) -> dict[str, Any]:
        """The assistant message (as :func:`chat_assistant_message` would build it)."""
        out: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.reasoning:
            out["reasoning_content"] = self.reasoning
        calls = self.tool_calls()
        if calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in calls
            ]
        return chat_assistant_message(out)


# ---------------------------------------------------------------------------------------------
# Responses API
# ---------------------------------------------------------------------------------------------


def responses_tools(tools: ToolSource, *, strict: bool | None = None) -> list[dict[str, Any]]:
    """The Responses API ``tools`` parameter: ``[{"type": "function", "name", ...}]``.

    ``strict`` works as in :func:`chat_tools`.
    """
    return [{"type": "function", **_function(spec, strict)} for spec in tool_specs(tools)]


def responses_tool_calls(response: Any) -> list[ToolCallBlock]:
    """The ``function_call`` items of a response (or of its ``output`` list), in order.

    The block id is the item's ``call_id`` (what ``function_call_output`` answers).
    """
    output = field(response, "output", response)
    return [
        ToolCallBlock(
            field(item, "call_id", ""), field(item, "name", ""), field(item, "arguments", "")
        )
        for item in output
        if field(item, "type") == "function_call"
    ]


def responses_tool_outputs(results: Sequence[StepResult]) -> list[dict[str, Any]]:
    """Step results as ``function_call_output`` input items, in model order."""
    return [
        {"type": "function_call_output", "call_id": item.call_id, "output": result_text(item)}
        for item in results
    ]


def _output_text(response: Any) -> str:
    parts = []
    for item in field(response, "output", ()):
        if field(item, "type") == "message":
            for part in field(item, "content", ()):
                if field(part, "type") == "output_text":
                    parts.append(field(part, "text", ""))
    return "".join(parts)


@attrs.define(eq=False)
class ResponsesStreamAccumulator:
    """Rebuilds a response from Responses API stream events.

    Output items are collected from ``response.output_item.done`` events (in ``output_index``
    order); ``response.output_text.delta`` events build :attr:`text` as it streams. When the
    ``response.completed`` event arrives, its full response is kept in :attr:`response`.

    ``on_call`` is called with each ``function_call`` item as a ``ToolCallBlock`` when its
    ``response.output_item.done`` arrives, in order, once each (streaming dispatch: e.g. a memory
    channel's ``send_nowait`` feeding ``execute_tool_calls``); :meth:`finish` at the stream's end
    reports any the events did not.
    """

    text: str = ""
    response: Any = None
    on_call: Callable[[ToolCallBlock], object] | None = attrs.field(default=None, kw_only=True)
    _items: dict[int, Any] = attrs.field(factory=dict)
    _sent: set[str] = attrs.field(factory=set)

    def add(self, event: Any) -> None:
        """Merge one stream event."""
        kind = field(event, "type")
        if kind == "response.output_text.delta":
            self.text += field(event, "delta", "")
        elif kind == "response.output_item.done":
            item = field(event, "item")
            self._items[field(event, "output_index", len(self._items))] = item
            self._report(responses_tool_calls([item]))
        elif kind == "response.completed":
            self.response = field(event, "response")

    def finish(self) -> None:
        """The stream ended: report every ``function_call`` not reported yet (see ``on_call``)."""
        self._report(self.tool_calls())

    def _report(self, calls: list[ToolCallBlock]) -> None:
        on_call = self.on_call
        if on_call is None:
            return
        for call in calls:
            if call.id not in self._sent:
                self._sent.add(call.id)
                on_call(call)

    def output(self) -> list[Any]:
        """The response's output items."""
        if self.response is not None and field(self.response, "output"):
            return list(field(self.response, "output"))
        return [item for _, item in sorted(self._items.items())]

    def tool_calls(self) -> list[ToolCallBlock]:
        """The streamed ``function_call`` items as ``ToolCallBlock`` s."""
        return responses_tool_calls(self.output())


# ---------------------------------------------------------------------------------------------
# Ready models for run_turn
# ---------------------------------------------------------------------------------------------


@attrs.define(eq=False)
class ChatCompletionsModel:
    """A :class:`~trio_harness.TurnModel` over Chat Completions (OpenAI, DeepSeek, compatible).

    The conversation lives in :attr:`messages` (Chat Completions format); append user messages
    with :meth:`add_user`. The application owns the client::

        async with openai.AsyncOpenAI(base_url=..., api_key=...) as client:
            model = ChatCompletionsModel(client, "deepseek-chat")

    Attributes:
        client: An ``openai.AsyncOpenAI`` (or anything with ``chat.completions.create``).
        model: The model name.
        messages: The conversation so far.
        system: A system prompt, put first in :attr:`messages` unless they already start with a
            system message (a resumed conversation).
        stream: Stream the reply (read to the end, then closed).
        strict: Passed to :func:`chat_tools`.
        options: Extra keyword arguments for every ``create`` call (e.g. ``temperature``).
        on_text: Called with each streamed text fragment (streaming only).
    """

    client: Any
    model: str
    messages: list[dict[str, Any]] = attrs.field(factory=list)
    system: str | None = attrs.field(default=None, kw_only=True)
    stream: bool = attrs.field(default=False, kw_only=True)
    strict: bool | None = attrs.field(default=None, kw_only=True)
    options: dict[str, Any] = attrs.field(factory=dict, kw_only=True)
    on_text: Any = attrs.field(default=None, kw_only=True)

    def __attrs_post_init__(self) -> None:
        if self.system is not None and not (
            self.messages and self.messages[0].get("role") == "system"
        ):
            self.messages.insert(0, {"role": "system", "content": self.system})

    def add_user(self, text: str) -> None:
        """Append a user message."""
        self.messages.append({"role": "user", "content": text})

    async def step(
        self,
        tools: Sequence[dict[str, Any]],
        *,
        on_call: Callable[[ToolCallBlock], object] | None = None,
    ) -> ModelStep:
        """Send the conversation; append the assistant message; return its text and tool calls.

        ``on_call`` gets each tool call, in order: while the reply streams (``stream=True``) as
        soon as it is complete, otherwise once the reply arrived.
        """
        request: dict[str, Any] = {"model": self.model, "messages": self.messages, **self.options}
        if tools:
            request["tools"] = chat_tools(list(tools), strict=self.strict)
        if not self.stream:
            completion = await self.client.chat.completions.create(**request)
            choice = field(completion, "choices")[0]
            message = chat_assistant_message(field(choice, "message"))
            finish = field(choice, "finish_reason")
            if on_call is not None:
                for call in chat_tool_calls(message):
                    on_call(call)
        else:
            accumulator = ChatStreamAccumulator(on_call=on_call)
            on_text = self.on_text

            def add(chunk: Any) -> None:
                before = len(accumulator.text)
                accumulator.add(chunk)
                if on_text is not None and len(accumulator.text) > before:
                    on_text(accumulator.text[before:])

            await feed_stream(
                self.client.chat.completions.with_streaming_response.create(**request, stream=True),
                add,
            )
            accumulator.finish()
            message = accumulator.message()
            finish = accumulator.finish_reason
        self.messages.append(message)
        return ModelStep(
            text=message.get("content") or "",
            tool_calls=tuple(chat_tool_calls(message)),
            stop_reason=finish,
            raw=message,
        )

    def add_tool_results(self, results: Sequence[StepResult]) -> None:
        """Append the step's results as ``role: "tool"`` messages."""
        self.messages.extend(chat_tool_messages(results))


@attrs.define(eq=False)
class ResponsesModel:
    """A :class:`~trio_harness.TurnModel` over the Responses API.

    The conversation lives in :attr:`input` (Responses input items), sent whole on every request
    (stateless: no ``previous_response_id``).

    Attributes:
        client: An ``openai.AsyncOpenAI`` (or anything with ``responses.create``).
        model: The model name.
        input: The input items so far.
        instructions: Optional system instructions.
        stream: Stream the reply (read to the end, then closed).
        strict: Passed to :func:`responses_tools`.
        options: Extra keyword arguments for every ``create`` call.
    """

    client: Any
    model: str
    input: list[Any] = attrs.field(factory=list)
    instructions: str | None = attrs.field(default=None, kw_only=True)
    stream: bool = attrs.field(default=False, kw_only=True)
    strict: bool | None = attrs.field(default=None, kw_only=True)
    options: dict[str, Any] = attrs.field(factory=dict, kw_only=True)

    def add_user(self, text: str) -> None:
        """Append a user message item."""
        self.input.append({"role": "user", "content": text})

    async def step(
        self,
        tools: Sequence[dict[str, Any]],
        *,
        on_call: Callable[[ToolCallBlock], object] | None = None,
    ) -> ModelStep:
        """Send the input; append the output items; return the text and ``function_call`` s.

        ``on_call`` gets each ``function_call``, in order: while the reply streams
        (``stream=True``) as soon as its item is done, otherwise once the reply arrived.
        """
        request: dict[str, Any] = {"model": self.model, "input": self.input, **self.options}
        if self.instructions is not None:
            request["instructions"] = self.instructions
        if tools:
            request["tools"] = responses_tools(list(tools), strict=self.strict)
        if not self.stream:
            response = await self.client.responses.create(**request)
            output = list(field(response, "output", ()))
            text = _output_text(response)
            if on_call is not None:
                for call in responses_tool_calls(output):
                    on_call(call)
        else:
            accumulator = ResponsesStreamAccumulator(on_call=on_call)
            await feed_stream(
                self.client.responses.with_streaming_response.create(**request, stream=True),
                accumulator.add,
            )
            accumulator.finish()
            output = accumulator.output()
            text = _output_text({"output": output}) or accumulator.text
        self.input.extend(dump(item) for item in output)
        return ModelStep(text=text, tool_calls=tuple(responses_tool_calls(output)), raw=output)

    def add_tool_results(self, results: Sequence[StepResult]) -> None:
        """Append the step's results as ``function_call_output`` items."""
        self.input.extend(responses_tool_outputs(results))
