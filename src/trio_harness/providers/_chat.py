"""OpenAI Chat Completions, as plain data: tools, tool calls, the assistant message, results,
finish reasons, usage, the stream accumulator and the ready model (public in
:mod:`trio_harness.providers.openai`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs

from .._apps import FinishReason, ModelStep, StepStreaming, Usage
from .._pool import StepResult, ToolCallBlock
from ._common import (
    CUT,
    ProviderResponseError,
    ProviderStreamError,
    ToolSource,
    arguments_text,
    check_tool_names,
    dump,
    feed_stream,
    field,
    result_text,
    split_cut,
    text_feed,
    tool_specs,
)
from ._strict import function_tool

__all__ = [
    "ChatCompletionsModel",
    "ChatStreamAccumulator",
    "chat_assistant_message",
    "chat_finish",
    "chat_tool_calls",
    "chat_tool_messages",
    "chat_tools",
    "chat_usage",
]


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
    return [{"type": "function", "function": function_tool(spec, strict, False)} for spec in specs]


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


def _extra_of(obj: Any) -> dict[str, Any] | None:
    extra = field(obj, "extra_content")
    if extra is None:
        return None
    return extra if isinstance(extra, dict) else dump(extra)


def _stored_entry(
    call_id: str, kind: str, name: str, arguments: str, extra: dict[str, Any] | None
) -> dict[str, Any]:
    # One tool call of a stored assistant message (a whole reply's or a streamed one's).
    out: dict[str, Any]
    if kind == "custom":
        out = {"id": call_id, "type": "custom", "custom": {"name": name, "input": arguments}}
    else:
        out = {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
    if extra is not None:  # Gemini's thought signature: sent back exactly as received
        out["extra_content"] = extra
    return out


def _stored_call(call: Any) -> dict[str, Any]:
    block = _call_block(call)
    kind = "custom" if field(call, "type") == "custom" else "function"
    return _stored_entry(block.id, kind, block.name, block.arguments, _extra_of(call))


def _assistant(
    content: Any,
    refusal: Any,
    reasoning: Any,
    extra: dict[str, Any] | None,
    calls: list[dict[str, Any]],
) -> dict[str, Any]:
    # The stored assistant message (a whole reply's or a streamed one's): never ``content: null``
    # without tool calls.
    out: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        out["reasoning_content"] = reasoning
    if extra is not None:
        out["extra_content"] = extra
    if calls:
        out["tool_calls"] = calls
    elif content is None:
        out["content"] = [{"type": "refusal", "refusal": refusal}] if refusal else ""
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
    reasoning = field(message, "reasoning_content")
    extra = _extra_of(message)
    calls = [_stored_call(call) for call in field(message, "tool_calls", ())] if keep_calls else []
    return _assistant(content, refusal, reasoning, extra, calls)


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
    position: int = 0
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

    With ``on_call``, each call is handed to it the moment it is complete: when the next call
    begins, or when the choice finishes (a ``finish_reason``, or :meth:`finish` at ``[DONE]``).
    A reply cut short (``length``, ``content_filter``, a refusal) never hands over the call it
    was cut in. A delta for a call already handed over is a :class:`ProviderStreamError` then
    (its arguments would differ from those the tool ran with).

    Attributes:
        text: The streamed assistant text so far.
        reasoning: The streamed ``reasoning_content`` so far (DeepSeek).
        refusal: The streamed refusal text so far.
        finish_reason: The choice's finish reason, once streamed.
        usage: The ``usage`` of the final chunk, when the stream sent one.
        id: The completion id of the chunks.
        on_call: Called with each complete call (see above), or ``None``.
        reported: How many calls were handed to ``on_call`` (the first ones, in order).
    """

    text: str = ""
    reasoning: str = ""
    refusal: str = ""
    finish_reason: str | None = None
    usage: Any = None
    id: str | None = None
    on_call: Callable[[ToolCallBlock], object] | None = attrs.field(default=None, kw_only=True)
    reported: int = attrs.field(default=0, init=False)
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
        if self.finish_reason is not None and self.on_call is not None:
            self.finish()

    def finish(self) -> None:
        """The choice finished (or the stream ended at ``[DONE]``): hand the calls not handed
        over yet to ``on_call``, unless the reply was cut short."""
        if self.on_call is None or self._cut():
            return
        self._report(len(self._calls))

    def _cut(self) -> bool:
        finish = chat_finish(self.finish_reason, refusal=bool(self.refusal), calls=True)
        return finish in CUT

    def _report(self, count: int) -> None:
        on_call = self.on_call
        assert on_call is not None
        while self.reported < count:
            call = self._calls[self.reported]
            on_call(ToolCallBlock(call.id, call.name, "".join(call.arguments)))
            self.reported += 1

    def _add_call(self, call: Any) -> None:
        index = field(call, "index")
        call_id = field(call, "id", "")
        partial = self._by_index.get(index) if index is not None else None
        if index is None and self._calls:
            partial = self._calls[-1]
        if partial is None or (call_id and partial.id and call_id != partial.id):
            if self.on_call is not None:
                self._report(len(self._calls))  # the next call begins: the earlier are complete
            partial = _PartialCall(len(self._calls))
            self._calls.append(partial)
            if index is not None:
                self._by_index[index] = partial
        elif self.on_call is not None and partial.position < self.reported:
            raise ProviderStreamError(
                f"the stream continued tool call {partial.id or index!r} after the next call began"
            )
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

    def message(self, *, keep_calls: bool = True, calls: int | None = None) -> dict[str, Any]:
        """The assistant message (as :func:`chat_assistant_message` builds it for the whole reply).

        Args:
            keep_calls: ``False`` leaves the tool calls out.
            calls: Keep only the first ``calls`` tool calls (e.g. :attr:`reported`).
        """
        kept = self._calls if keep_calls else []
        if calls is not None:
            kept = kept[:calls]
        stored = []
        for call in kept:
            arguments = "".join(call.arguments)
            stored.append(
                _stored_entry(call.id, call.type, call.name, arguments, call.extra_content)
            )
        return _assistant(
            self.text or None, self.refusal or None, self.reasoning or None, self._extra, stored
        )


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
        stream: Stream the reply (read to the end, then closed); :func:`~trio_harness.run_turn`
            then starts each tool call as soon as it is complete (:attr:`step_streaming`).
        strict: Passed to :func:`chat_tools`.
        options: Extra keyword arguments for every ``create`` call (e.g. ``temperature``).
        on_text: Called with each streamed text fragment (streaming only; inside
            :func:`~trio_harness.run_turn` each fragment is also a
            :class:`~trio_harness.turn.TextDelta` event).
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
    on_text: Callable[[str], object] | None = attrs.field(default=None, kw_only=True)
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
        return await self._step(tools, None)

    @property
    def step_streaming(self) -> StepStreaming | None:
        """With ``stream=True``: :meth:`step`, handing each tool call to ``on_call`` the moment
        it is complete (see :class:`~trio_harness.turn.StreamingTurnModel`); else ``None``."""
        return self._step if self.stream else None

    async def _step(
        self, tools: Sequence[dict[str, Any]], on_call: Callable[[ToolCallBlock], object] | None
    ) -> ModelStep:
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
            accumulator = ChatStreamAccumulator(on_call=on_call)
            try:
                done = await feed_stream(
                    self.client.chat.completions.with_streaming_response.create(
                        **request, stream=True
                    ),
                    text_feed(accumulator, self.on_text),
                )
                if not (done or accumulator.complete):
                    raise ProviderStreamError(
                        "the stream ended before the reply finished (no finish_reason, no [DONE])"
                    )
                accumulator.finish()
            except BaseException:
                if accumulator.reported:
                    # Calls already run: the conversation keeps them (and the text so far), so
                    # their results answer a call message.
                    partial = accumulator.message(calls=accumulator.reported)
                    self.messages.append(chat_assistant_message(partial))
                raise
            message = accumulator.message()
            finish_reason = accumulator.finish_reason
            calls = accumulator.tool_calls()
            refusal = accumulator.refusal or None
            text = accumulator.text
            usage = chat_usage(accumulator.usage)
            response_id = accumulator.id
        finish = chat_finish(finish_reason, refusal=bool(refusal), calls=bool(calls))
        if on_call is not None:
            # Streamed: the calls handed over ran, cut short or not; the rest never run.
            calls, cut = calls[: accumulator.reported], calls[accumulator.reported :]
            stored = chat_assistant_message(accumulator.message(calls=len(calls)))
        else:
            calls, cut = split_cut(finish, calls)
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
