"""OpenAI adapters: Chat Completions and the Responses API, as plain data.

Nothing here imports the ``openai`` package: SDK objects are read by attribute and plain ``dict`` s
by key, so responses from the SDK, from raw HTTP or from a recording all work. Any
OpenAI-compatible endpoint (DeepSeek's own API, Gemini's OpenAI endpoint, a local server) is
covered by the same code.

Chat Completions:

* :func:`chat_tools` — the ``tools=[{"type": "function", ...}]`` request parameter;
* :func:`chat_tool_calls` — an assistant message's ``tool_calls`` as ``ToolCallBlock`` s
  (``custom`` tool calls too; ``arguments`` sent as an object become their JSON text);
* :func:`chat_assistant_message` — the assistant message to append to the conversation (it
  keeps DeepSeek's ``reasoning_content`` and Gemini's ``extra_content`` thought signatures, and
  is never ``content: null`` without tool calls);
* :func:`chat_tool_messages` — step results as ``role: "tool"`` messages, in model order;
* :func:`chat_finish` — the neutral finish reason of a choice;
* :class:`ChatStreamAccumulator` — rebuilds the message from streamed chunks.

Responses API: :func:`responses_tools`, :func:`responses_tool_calls`,
:func:`responses_tool_outputs`, :func:`responses_finish` and :class:`ResponsesStreamAccumulator`.

The ready turn-loop models :class:`ChatCompletionsModel` and :class:`ResponsesModel` drive an SDK
client the application created (and closes: use ``async with openai.AsyncOpenAI(...)``). A reply
cut short (``finish_reason: "length"``, an incomplete response) never runs its tool calls; they
are reported in ``ModelStep.cut_calls`` and left out of the stored conversation.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Final

import attrs

from .._apps import FinishReason, ModelStep, Usage
from .._pool import StepResult, ToolCallBlock
from ._common import (
    ProviderResponseError,
    ProviderStreamError,
    ToolSource,
    arguments_text,
    block_text,
    check_tool_names,
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
    "chat_finish",
    "chat_tool_calls",
    "chat_tool_messages",
    "chat_tools",
    "chat_usage",
    "responses_finish",
    "responses_tool_calls",
    "responses_tool_outputs",
    "responses_tools",
    "responses_usage",
]

#: The finish reasons after which a reply's tool calls are not run (the reply is not complete).
CUT: Final = frozenset({"length", "content_filter", "refusal", "incomplete"})


def _function(spec: dict[str, Any], strict: bool | None, explicit: bool) -> dict[str, Any]:
    # The fields of a function tool shared by both APIs; ``strict`` only where the schema allows.
    # ``explicit``: write ``"strict": false`` too (the Responses API makes a function tool strict
    # when the field is absent).
    out: dict[str, Any] = {
        "name": spec["name"],
        "description": spec["description"],
        "parameters": spec["parameters"],
    }
    tightened = None if strict is False else strict_schema(spec["parameters"])
    if tightened is None:
        if strict:
            raise ValueError(
                f'tool "{spec["name"]}" cannot use strict mode: every property must be required '
                "and every object closed, with no oneOf or free-form json values"
            )
        if explicit:
            out["strict"] = False
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

    Raises:
        ValueError: A tool name the API rejects (``^[a-zA-Z0-9_-]{1,64}$``), or ``strict=True``
            for a schema strict mode cannot express.
    """
    specs = tool_specs(tools)
    check_tool_names(specs)
    return [{"type": "function", "function": _function(spec, strict, False)} for spec in specs]


def _message_of(message: Any) -> Any:
    choices = field(message, "choices")
    if choices is not None and not isinstance(message, list):
        if not choices:
            raise ProviderResponseError("the completion has no choices (nothing was generated)")
        return field(choices[0], "message")
    return message


def _call_block(call: Any) -> ToolCallBlock:
    if field(call, "type") == "custom":
        custom = field(call, "custom")
        return ToolCallBlock(
            field(call, "id", ""), field(custom, "name", ""), arguments_text(field(custom, "input"))
        )
    function = field(call, "function")
    return ToolCallBlock(
        field(call, "id", ""),
        field(function, "name", ""),
        arguments_text(field(function, "arguments")),
    )


def chat_tool_calls(message: Any) -> list[ToolCallBlock]:
    """The tool calls of an assistant message (SDK ``ChatCompletionMessage`` or dict), in order.

    A completion (with ``choices``) is accepted too: its first choice's message is read. A
    ``custom`` tool call gives its ``custom.name`` and its ``input`` text; ``arguments`` sent as
    an object become the text ``JSON.stringify`` would write.

    Raises:
        ProviderResponseError: A completion with ``choices: []``.
    """
    return [_call_block(call) for call in field(_message_of(message), "tool_calls", ())]


def _stored_call(call: Any) -> dict[str, Any]:
    block = _call_block(call)
    if field(call, "type") == "custom":
        out: dict[str, Any] = {
            "id": block.id,
            "type": "custom",
            "custom": {"name": block.name, "input": block.arguments},
        }
    else:
        out = {
            "id": block.id,
            "type": "function",
            "function": {"name": block.name, "arguments": block.arguments},
        }
    extra = field(call, "extra_content")
    if extra is not None:  # Gemini's thought signature: sent back exactly as received
        out["extra_content"] = extra if isinstance(extra, dict) else dump(extra)
    return out


def chat_assistant_message(message: Any, *, keep_calls: bool = True) -> dict[str, Any]:
    """The assistant message to append to ``messages`` before the tool results.

    Keeps ``content``, ``tool_calls`` (each with its ``extra_content``, where Gemini puts the
    thought signature it requires back) and, when present, DeepSeek's ``reasoning_content`` and
    a message-level ``extra_content``. A refusal is kept as a ``refusal`` content part. A message
    with neither content nor tool calls gets ``content: ""`` (the API rejects ``null`` there).

    Args:
        message: An SDK ``ChatCompletionMessage``, a dict, or a completion (first choice).
        keep_calls: ``False`` leaves the tool calls out (a reply cut short: its calls are not
            run, so they must not be answered).

    Raises:
        ProviderResponseError: A completion with ``choices: []``.
    """
    message = _message_of(message)
    content = field(message, "content")
    refusal = field(message, "refusal")
    out: dict[str, Any] = {"role": "assistant", "content": content}
    reasoning = field(message, "reasoning_content")
    if reasoning is not None:
        out["reasoning_content"] = reasoning
    extra = field(message, "extra_content")
    if extra is not None:
        out["extra_content"] = extra if isinstance(extra, dict) else dump(extra)
    calls = [_stored_call(call) for call in field(message, "tool_calls", ())] if keep_calls else []
    if calls:
        out["tool_calls"] = calls
    elif content is None:
        out["content"] = [{"type": "refusal", "refusal": refusal}] if refusal else ""
    return out


def chat_tool_messages(results: Sequence[StepResult]) -> list[dict[str, Any]]:
    """Step results as ``{"role": "tool", "tool_call_id", "content"}`` messages, in model order.

    ``content`` is the result's text (text blocks joined by newlines; an image or other binary
    block becomes a short note, since tool messages carry text only). Chat Completions has no
    error flag: a failed result's text starts with ``Error:``, which models read as a failure.
    """
    return [
        {"role": "tool", "tool_call_id": item.call_id, "content": result_text(item)}
        for item in results
    ]


_CHAT_FINISH: Final[dict[str, FinishReason]] = {
    "stop": "end",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}


def chat_finish(finish_reason: str | None, *, refusal: bool = False, calls: bool = False) -> Any:
    """The neutral finish reason (``"end"``, ``"tool_calls"``, ``"length"``, ``"refusal"``,
    ``"content_filter"``) of a choice's ``finish_reason`` (``None`` when unknown).

    A message with a ``refusal`` is ``"refusal"``; one that ended normally with tool calls (some
    compatible servers say ``"stop"``) is ``"tool_calls"``.
    """
    if refusal and finish_reason in (None, "stop"):
        return "refusal"
    finish = _CHAT_FINISH.get(finish_reason or "")
    if calls and finish in (None, "end"):
        return "tool_calls"
    return finish


def chat_usage(usage: Any) -> Usage | None:
    """A completion's (or final chunk's) ``usage`` as a :class:`~trio_harness.turn.Usage`."""
    if usage is None:
        return None
    details = field(usage, "prompt_tokens_details")
    return Usage(
        input_tokens=int(field(usage, "prompt_tokens", 0)),
        output_tokens=int(field(usage, "completion_tokens", 0)),
        cached_input_tokens=int(field(details, "cached_tokens", 0) if details else 0),
    )


@attrs.define(eq=False)
class _PartialCall:
    id: str = ""
    name: str = ""
    type: str = "function"
    arguments: list[str] = attrs.field(factory=list)
    extra_content: dict[str, Any] | None = None


def _merge_extra(old: dict[str, Any] | None, new: Any) -> dict[str, Any] | None:
    if new is None:
        return old
    new = new if isinstance(new, dict) else dump(new)
    if old is None:
        return dict(new)
    merged = dict(old)
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


@attrs.define(eq=False)
class ChatStreamAccumulator:
    """Rebuilds an assistant message from Chat Completions stream chunks.

    Feed every chunk to :meth:`add` (SDK ``ChatCompletionChunk`` or dict). Tool-call deltas are
    merged by their ``index``: the first delta carries ``id`` and ``function.name``, later ones
    carry fragments of ``function.arguments``. A delta without ``index`` (Gemini's OpenAI
    endpoint, some local servers) continues the last call unless it brings a new ``id``, which
    starts a new call; so does a new ``id`` at a known index. ``extra_content`` (Gemini's thought
    signature) is kept with its call. A chunk with ``choices: []`` (the usage chunk) is read for
    its usage only.

    Attributes:
        text: The streamed assistant text so far.
        reasoning: The streamed ``reasoning_content`` so far (DeepSeek).
        refusal: The streamed refusal text so far.
        finish_reason: The choice's finish reason, once streamed.
        usage: The ``usage`` of the final chunk, when the stream sent one.
        id: The completion id of the chunks.
    """

    text: str = ""
    reasoning: str = ""
    refusal: str = ""
    finish_reason: str | None = None
    usage: Any = None
    id: str | None = None
    _calls: list[_PartialCall] = attrs.field(factory=list)
    _by_index: dict[int, _PartialCall] = attrs.field(factory=dict)
    _extra: dict[str, Any] | None = None

    def add(self, chunk: Any) -> None:
        """Merge one chunk (only the first choice is read)."""
        self.id = field(chunk, "id", self.id)
        usage = field(chunk, "usage")
        if usage is not None:
            self.usage = usage
        choices = field(chunk, "choices", ())
        if not choices:
            return
        choice = choices[0]
        delta = field(choice, "delta")
        if delta is not None:
            self.text += field(delta, "content", "")
            self.reasoning += field(delta, "reasoning_content", "")
            self.refusal += field(delta, "refusal", "")
            self._extra = _merge_extra(self._extra, field(delta, "extra_content"))
            for call in field(delta, "tool_calls", ()):
                self._add_call(call)
        self.finish_reason = field(choice, "finish_reason", self.finish_reason)

    def _add_call(self, call: Any) -> None:
        index = field(call, "index")
        call_id = field(call, "id", "")
        partial = self._by_index.get(index) if index is not None else None
        if index is None and self._calls:
            partial = self._calls[-1]
        if partial is None or (call_id and partial.id and call_id != partial.id):
            partial = _PartialCall()
            self._calls.append(partial)
            if index is not None:
                self._by_index[index] = partial
        partial.id = call_id or partial.id
        partial.extra_content = _merge_extra(partial.extra_content, field(call, "extra_content"))
        if field(call, "type") == "custom" or field(call, "custom") is not None:
            partial.type = "custom"
            custom = field(call, "custom")
            partial.name = partial.name or field(custom, "name", "")
            partial.arguments.append(arguments_text(field(custom, "input")))
            return
        function = field(call, "function")
        if function is not None:
            # The name comes whole in the call's first delta; some compatible servers repeat
            # it in later deltas, so it is never concatenated.
            partial.name = partial.name or field(function, "name", "")
            partial.arguments.append(arguments_text(field(function, "arguments")))

    @property
    def complete(self) -> bool:
        """Whether the choice finished (a ``finish_reason`` arrived)."""
        return self.finish_reason is not None

    def tool_calls(self) -> list[ToolCallBlock]:
        """The streamed tool calls, in the order they started."""
        return [ToolCallBlock(call.id, call.name, "".join(call.arguments)) for call in self._calls]

    def message(self, *, keep_calls: bool = True) -> dict[str, Any]:
        """The assistant message (as :func:`chat_assistant_message` would build it)."""
        out: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.reasoning:
            out["reasoning_content"] = self.reasoning
        if self.refusal:
            out["refusal"] = self.refusal
        if self._extra is not None:
            out["extra_content"] = self._extra
        calls = []
        for call in self._calls:
            arguments = "".join(call.arguments)
            entry: dict[str, Any] = (
                {"id": call.id, "type": "custom", "custom": {"name": call.name, "input": arguments}}
                if call.type == "custom"
                else {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments},
                }
            )
            if call.extra_content is not None:
                entry["extra_content"] = call.extra_content
            calls.append(entry)
        if calls:
            out["tool_calls"] = calls
        return chat_assistant_message(out, keep_calls=keep_calls)


# ---------------------------------------------------------------------------------------------
# Responses API
# ---------------------------------------------------------------------------------------------


def responses_tools(tools: ToolSource, *, strict: bool | None = None) -> list[dict[str, Any]]:
    """The Responses API ``tools`` parameter: ``[{"type": "function", "name", ...}]``.

    ``strict`` works as in :func:`chat_tools`; every tool says ``"strict"`` explicitly, because
    this API makes a function tool strict when the field is absent (then optional parameters
    become required and the model invents values for them).
    """
    specs = tool_specs(tools)
    check_tool_names(specs)
    return [{"type": "function", **_function(spec, strict, True)} for spec in specs]


_CALL_ITEMS: Final = ("function_call", "custom_tool_call")


def responses_tool_calls(response: Any) -> list[ToolCallBlock]:
    """The ``function_call`` (and ``custom_tool_call``) items of a response (or of its
    ``output`` list), in order.

    The block id is the item's ``call_id`` (what ``function_call_output`` answers); a custom
    call's ``input`` text is its argument text.
    """
    output = field(response, "output", response)
    blocks = []
    for item in output:
        kind = field(item, "type")
        if kind == "function_call":
            arguments = arguments_text(field(item, "arguments"))
        elif kind == "custom_tool_call":
            arguments = arguments_text(field(item, "input"))
        else:
            continue
        blocks.append(ToolCallBlock(field(item, "call_id", ""), field(item, "name", ""), arguments))
    return blocks


_RESPONSES_IMAGES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _output_parts(item: StepResult) -> str | list[dict[str, Any]]:
    # Text when the content is text only; otherwise input_text / input_image / input_file parts
    # (the API's own forms for images and files in a function call's output).
    blocks = item.result.content
    parts: list[dict[str, Any]] = []
    media = False
    for block in blocks:
        if not isinstance(block, dict):
            parts.append({"type": "input_text", "text": block_text(block)})
            continue
        kind = block.get("type")
        mime = block.get("mimeType") or block.get("mime_type")
        resource = block.get("resource") if kind == "resource" else None
        if kind == "image" and "data" in block and mime in _RESPONSES_IMAGES:
            parts.append(
                {"type": "input_image", "image_url": f"data:{mime};base64,{block['data']}"}
            )
            media = True
        elif (
            isinstance(resource, dict)
            and "blob" in resource
            and resource.get("mimeType") == ("application/pdf")
        ):
            name = str(resource.get("uri", "file.pdf")).rsplit("/", 1)[-1] or "file.pdf"
            parts.append(
                {
                    "type": "input_file",
                    "filename": name,
                    "file_data": f"data:application/pdf;base64,{resource['blob']}",
                }
            )
            media = True
        else:
            parts.append({"type": "input_text", "text": block_text(block)})
    if not media:
        return result_text(item)
    return parts


def responses_tool_outputs(
    results: Sequence[StepResult], *, custom: Collection[str] = ()
) -> list[dict[str, Any]]:
    """Step results as ``function_call_output`` input items, in model order.

    ``output`` is the result's text; when the result holds images (PNG, JPEG, GIF, WebP) or a
    PDF, it is a list of ``input_text`` / ``input_image`` / ``input_file`` parts instead, the
    API's own form, so no base64 payload is sent as text.

    Args:
        results: The step's results.
        custom: Call ids of ``custom_tool_call`` items: answered by ``custom_tool_call_output``.
    """
    out: list[dict[str, Any]] = []
    for item in results:
        if item.call_id in custom:
            out.append(
                {
                    "type": "custom_tool_call_output",
                    "call_id": item.call_id,
                    "output": result_text(item),
                }
            )
        else:
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": item.call_id,
                    "output": _output_parts(item),
                }
            )
    return out


def _output_text(output: Sequence[Any]) -> tuple[str, str | None]:
    parts: list[str] = []
    refusals: list[str] = []
    for item in output:
        if field(item, "type") == "message":
            for part in field(item, "content", ()):
                kind = field(part, "type")
                if kind == "output_text":
                    parts.append(field(part, "text", ""))
                elif kind == "refusal":
                    refusals.append(field(part, "refusal", ""))
    return "".join(parts), ("".join(refusals) if refusals else None)


_INCOMPLETE: Final[dict[str, FinishReason]] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}


def responses_finish(response: Any) -> Any:
    """The neutral finish reason of a response: ``"tool_calls"``, ``"end"``, ``"refusal"``;
    for ``status: "incomplete"``, ``"length"`` (``max_output_tokens``), ``"content_filter"`` or
    ``"incomplete"``; ``None`` for another status.

    Raises:
        ProviderResponseError: ``status: "failed"`` (the message and code are the response's
            ``error``).
    """
    status = field(response, "status")
    if status == "failed":
        error = field(response, "error")
        code = field(error, "code")
        message = field(error, "message", "no error message")
        raise ProviderResponseError(
            f"the response failed ({code or 'no code'}): {message}",
            None if code is None else str(code),
        )
    output = list(field(response, "output", ()))
    if status == "incomplete":
        reason = field(field(response, "incomplete_details"), "reason")
        return _INCOMPLETE.get(reason or "", "incomplete")
    if status not in (None, "completed"):
        return None
    if responses_tool_calls(output):
        return "tool_calls"
    return "refusal" if _output_text(output)[1] is not None else "end"


def responses_usage(usage: Any) -> Usage | None:
    """A response's ``usage`` as a :class:`~trio_harness.turn.Usage`."""
    if usage is None:
        return None
    details = field(usage, "input_tokens_details")
    return Usage(
        input_tokens=int(field(usage, "input_tokens", 0)),
        output_tokens=int(field(usage, "output_tokens", 0)),
        cached_input_tokens=int(field(details, "cached_tokens", 0) if details else 0),
    )


_TERMINAL: Final = ("response.completed", "response.incomplete", "response.failed")


@attrs.define(eq=False)
class ResponsesStreamAccumulator:
    """Rebuilds a response from Responses API stream events.

    Output items are collected from ``response.output_item.done`` events (in ``output_index``
    order); ``response.output_text.delta`` events build :attr:`text` as it streams. The final
    event (``response.completed``, ``response.incomplete`` or ``response.failed``) brings the
    full response, kept in :attr:`response`; without one the stream was cut (:attr:`complete`
    is ``False``).
    """

    text: str = ""
    response: Any = None
    _items: dict[int, Any] = attrs.field(factory=dict)

    def add(self, event: Any) -> None:
        """Merge one stream event."""
        kind = field(event, "type")
        if kind == "response.output_text.delta":
            self.text += field(event, "delta", "")
        elif kind == "response.output_item.done":
            self._items[field(event, "output_index", len(self._items))] = field(event, "item")
        elif kind in _TERMINAL:
            self.response = field(event, "response")

    @property
    def complete(self) -> bool:
        """Whether the stream's final event arrived."""
        return self.response is not None

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
            model = ChatCompletionsModel(client, "deepseek-v4-flash")

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
        stream_usage: When streaming, ask for the usage chunk
            (``stream_options={"include_usage": true}``) unless ``options`` set
            ``stream_options``.
    """

    client: Any
    model: str
    messages: list[dict[str, Any]] = attrs.field(factory=list)
    system: str | None = attrs.field(default=None, kw_only=True)
    stream: bool = attrs.field(default=False, kw_only=True)
    strict: bool | None = attrs.field(default=None, kw_only=True)
    options: dict[str, Any] = attrs.field(factory=dict, kw_only=True)
    on_text: Any = attrs.field(default=None, kw_only=True)
    stream_usage: bool = attrs.field(default=True, kw_only=True)

    def __attrs_post_init__(self) -> None:
        if self.system is not None and not (
            self.messages and self.messages[0].get("role") == "system"
        ):
            self.messages.insert(0, {"role": "system", "content": self.system})

    def add_user(self, text: str) -> None:
        """Append a user message."""
        self.messages.append({"role": "user", "content": text})

    async def step(self, tools: Sequence[dict[str, Any]]) -> ModelStep:
        """Send the conversation; append the assistant message; return its text and tool calls.

        Raises:
            ProviderStreamError: The stream reported an error, or ended before it finished.
            ProviderResponseError: The completion has no choices.
        """
        request: dict[str, Any] = {"model": self.model, "messages": self.messages, **self.options}
        if tools:
            request["tools"] = chat_tools(list(tools), strict=self.strict)
        if not self.stream:
            completion = await self.client.chat.completions.create(**request)
            message = _message_of(completion)
            finish_reason = field(field(completion, "choices")[0], "finish_reason")
            calls = chat_tool_calls(message)
            refusal = field(message, "refusal")
            text = field(message, "content") or ""
            usage = chat_usage(field(completion, "usage"))
            response_id = field(completion, "id")
        else:
            if self.stream_usage and "stream_options" not in request:
                request["stream_options"] = {"include_usage": True}
            accumulator = ChatStreamAccumulator()
            on_text = self.on_text

            def add(chunk: Any) -> None:
                before = len(accumulator.text)
                accumulator.add(chunk)
                if on_text is not None and len(accumulator.text) > before:
                    on_text(accumulator.text[before:])

            done = await feed_stream(
                self.client.chat.completions.with_streaming_response.create(**request, stream=True),
                add,
            )
            if not (done or accumulator.complete):
                raise ProviderStreamError(
                    "the stream ended before the reply finished (no finish_reason, no [DONE])"
                )
            message = accumulator.message()
            finish_reason = accumulator.finish_reason
            calls = accumulator.tool_calls()
            refusal = accumulator.refusal or None
            text = accumulator.text
            usage = chat_usage(accumulator.usage)
            response_id = accumulator.id
        finish = chat_finish(finish_reason, refusal=bool(refusal), calls=bool(calls))
        cut: list[ToolCallBlock] = []
        if finish in CUT and calls:
            cut, calls = calls, []
        stored = chat_assistant_message(message, keep_calls=not cut)
        self.messages.append(stored)
        return ModelStep(
            text=text,
            tool_calls=tuple(calls),
            stop_reason=finish_reason,
            raw=stored,
            finish=finish,
            refusal=refusal,
            cut_calls=tuple(cut),
            usage=usage,
            response_id=response_id,
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
    _custom: set[str] = attrs.field(factory=set, init=False)

    def add_user(self, text: str) -> None:
        """Append a user message item."""
        self.input.append({"role": "user", "content": text})

    async def step(self, tools: Sequence[dict[str, Any]]) -> ModelStep:
        """Send the input; append the output items; return the text and ``function_call`` s.

        Raises:
            ProviderResponseError: The response failed (``status: "failed"``).
            ProviderStreamError: The stream reported an error, or ended before its final event.
        """
        request: dict[str, Any] = {"model": self.model, "input": self.input, **self.options}
        if self.instructions is not None:
            request["instructions"] = self.instructions
        if tools:
            request["tools"] = responses_tools(list(tools), strict=self.strict)
        if not self.stream:
            response = await self.client.responses.create(**request)
            output = list(field(response, "output", ()))
        else:
            accumulator = ResponsesStreamAccumulator()
            await feed_stream(
                self.client.responses.with_streaming_response.create(**request, stream=True),
                accumulator.add,
            )
            if not accumulator.complete:
                raise ProviderStreamError(
                    "the stream ended before its final event (response.completed, "
                    "response.incomplete or response.failed)"
                )
            response = accumulator.response
            output = accumulator.output()
        finish = responses_finish(response)
        text, refusal = _output_text(output)
        if self.stream and not text:
            text = accumulator.text
        calls = responses_tool_calls(output)
        cut: list[ToolCallBlock] = []
        stored = [dump(item) for item in output]
        if finish in CUT and calls:
            cut, calls = calls, []
            stored = [item for item in stored if item.get("type") not in _CALL_ITEMS]
        self._custom = {
            item["call_id"] for item in stored if item.get("type") == "custom_tool_call"
        }
        self.input.extend(stored)
        return ModelStep(
            text=text,
            tool_calls=tuple(calls),
            stop_reason=field(response, "status"),
            raw=stored,
            finish=finish,
            refusal=refusal,
            cut_calls=tuple(cut),
            usage=responses_usage(field(response, "usage")),
            response_id=field(response, "id"),
        )

    def add_tool_results(self, results: Sequence[StepResult]) -> None:
        """Append the step's results as ``function_call_output`` (or
        ``custom_tool_call_output``) items."""
        self.input.extend(responses_tool_outputs(results, custom=self._custom))
