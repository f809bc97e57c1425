"""Anthropic Messages adapters, as plain data (no ``anthropic`` import at runtime).

* :func:`tools_param` — the ``tools=[{"name", "description", "input_schema"}]`` parameter;
* :func:`tool_calls` — ``tool_use`` blocks as ``ToolCallBlock`` s; the parsed ``input`` is turned
  back into argument text exactly as ``JSON.stringify`` would write it;
* :func:`assistant_message` — the assistant turn to append to ``messages``;
* :func:`tool_result_message` — step results as ONE user message of ``tool_result`` blocks
  (model order, ``is_error`` set on failures; MCP images become Anthropic image blocks);
* :func:`messages_finish` / :func:`messages_usage` — the neutral stop reason and usage;
* :class:`MessagesStreamAccumulator` — rebuilds the message from stream events
  (``input_json_delta`` fragments joined per block);
* :class:`MessagesModel` — a ready :class:`~trio_harness.TurnModel` over an
  ``anthropic.AsyncAnthropic`` client the application created.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs

from .._apps import FinishReason, ModelStep, StepStreaming, Usage
from .._json import js_json, parse_arguments
from .._pool import StepResult, ToolCallBlock
from ._common import (
    CUT,
    ProviderStreamError,
    ToolSource,
    check_tool_names,
    dump,
    feed_stream,
    field,
    js_argument_text,
    media_note,
    split_cut,
    text_feed,
    tool_specs,
)

__all__ = [
    "MessagesModel",
    "MessagesStreamAccumulator",
    "assistant_message",
    "messages_finish",
    "messages_usage",
    "tool_calls",
    "tool_result_message",
    "tools_param",
]


def tools_param(tools: ToolSource) -> list[dict[str, Any]]:
    """The Messages API ``tools`` parameter.

    Raises:
        ValueError: A tool name the API rejects (``^[a-zA-Z0-9_-]{1,64}$``).
    """
    specs = tool_specs(tools)
    check_tool_names(specs)
    return [
        {
            "name": spec["name"],
            "description": spec["description"],
            "input_schema": spec["parameters"],
        }
        for spec in specs
    ]


def _content(message: Any) -> list[Any]:
    content = field(message, "content", ())
    return [] if isinstance(content, str) else list(content)


def tool_calls(message: Any) -> list[ToolCallBlock]:
    """The ``tool_use`` blocks of a message (SDK ``Message`` or dict), in order.

    ``arguments`` is ``JSON.stringify(input)``: compact, non-ASCII kept, key order kept, numbers
    as JavaScript renders them.
    """
    return [
        ToolCallBlock(
            field(block, "id", ""),
            field(block, "name", ""),
            js_argument_text(field(block, "input", {})),
        )
        for block in _content(message)
        if field(block, "type") == "tool_use"
    ]


def assistant_message(message: Any, *, keep_calls: bool = True) -> dict[str, Any]:
    """``{"role": "assistant", "content": [...]}`` with the message's blocks as plain dicts.

    Every block is kept (text, ``tool_use``, thinking blocks with their signatures), as the API
    requires them to be sent back unchanged; a ``tool_use`` whose ``input`` is not an object
    (the API accepts only objects) is stored with ``input: {}``.

    Args:
        message: An SDK ``Message`` or a dict.
        keep_calls: ``False`` leaves the ``tool_use`` blocks out (a reply cut short: its calls
            are not run, so they must not be answered).
    """
    blocks = []
    for block in _content(message):
        data = dump(block)
        if data.get("type") == "tool_use":
            if not keep_calls:
                continue
            if not isinstance(data.get("input"), dict):
                data["input"] = {}
        blocks.append(data)
    return {"role": "assistant", "content": blocks}


#: The image types the Messages API takes (``base64`` sources).
_IMAGES: Final = ("image/jpeg", "image/png", "image/gif", "image/webp")


def _result_block(block: Any) -> dict[str, Any]:
    if not isinstance(block, dict):
        return {"type": "text", "text": js_json(block)}
    kind = block.get("type")
    if kind == "text" and type(block.get("text")) is str:
        return {"type": "text", "text": block["text"]}
    if kind == "image" and isinstance(block.get("source"), dict):
        return dict(block)  # already in the Messages API's form
    mime = block.get("mimeType") or block.get("mime_type")
    if kind == "image" and type(block.get("data")) is str and mime in _IMAGES:
        # MCP's wire form ({"type": "image", "data", "mimeType"}) in the API's form.
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": mime, "data": block["data"]},
        }
    resource = block.get("resource") if kind == "resource" else None
    if isinstance(resource, dict):
        if resource.get("mimeType") == "application/pdf" and type(resource.get("blob")) is str:
            return {
                "type": "document",
                "source": {
                    "type": "base64",
                    "media_type": "application/pdf",
                    "data": resource["blob"],
                },
            }
        if type(resource.get("text")) is str:
            return {"type": "text", "text": resource["text"]}
    note = media_note(block, "not supported in Anthropic tool results")
    if note is not None:
        return {"type": "text", "text": note}
    return {"type": "text", "text": js_json(block)}


def tool_result_message(results: Sequence[StepResult]) -> dict[str, Any]:
    """The user message answering a step: one ``tool_result`` block per result, in model order.

    Text blocks stay text; MCP images (PNG, JPEG, GIF, WebP) become Anthropic ``image`` blocks
    and PDF resources ``document`` blocks; text resources their text; other binary blocks a
    short note; anything else its compact JSON.
    """
    content = []
    for item in results:
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": item.call_id,
            "content": [_result_block(part) for part in item.result.content],
        }
        if item.result.is_error:
            block["is_error"] = True
        content.append(block)
    return {"role": "user", "content": content}


_STOP: Final[dict[str, FinishReason]] = {
    "end_turn": "end",
    "stop_sequence": "end",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
    "pause_turn": "pause",
}


def messages_finish(stop_reason: str | None) -> Any:
    """The neutral finish reason of a ``stop_reason`` (``None`` when unknown)."""
    return _STOP.get(stop_reason or "")


def messages_usage(usage: Any) -> Usage | None:
    """A message's ``usage`` as a :class:`~trio_harness.turn.Usage` (cache reads and writes count
    as input)."""
    if usage is None:
        return None
    cached = int(field(usage, "cache_read_input_tokens", 0))
    return Usage(
        input_tokens=int(field(usage, "input_tokens", 0))
        + int(field(usage, "cache_creation_input_tokens", 0))
        + cached,
        output_tokens=int(field(usage, "output_tokens", 0)),
        cached_input_tokens=cached,
    )


@attrs.define(eq=False)
class _Block:
    data: dict[str, Any]
    json: list[str] = attrs.field(factory=list)
    stopped: bool = False
    reported: bool = False


@attrs.define(eq=False)
class MessagesStreamAccumulator:
    """Rebuilds a message from Messages stream events (SDK event objects or dicts).

    ``tool_use`` blocks collect their ``input_json_delta`` fragments; the joined text is the
    call's argument text as the model streamed it (``"{}"`` when it streamed none).

    With ``on_call``, each ``tool_use`` block is handed to it the moment it is complete: when a
    later block starts, or when ``message_delta`` brings a stop reason that does not cut the
    reply (then every call not handed over yet is). Its own ``content_block_stop`` is not
    enough, whole JSON input or not: a block ``max_tokens`` cut right after it started stops
    with the input ``{}``. A block cut off by ``max_tokens`` (or a refusal) is never handed
    over.

    Attributes:
        text: The streamed text so far.
        stop_reason: From the ``message_delta`` event.
        id: The message id (``message_start``).
        usage: The usage so far (``message_start``, updated by ``message_delta``), as a dict.
        complete: Whether ``message_stop`` arrived.
        on_call: Called with each complete call (see above), or ``None``.
        reported: How many ``tool_use`` blocks were handed to ``on_call`` (the first ones).
    """

    text: str = ""
    stop_reason: str | None = None
    id: str | None = None
    usage: dict[str, Any] | None = None
    complete: bool = False
    on_call: Callable[[ToolCallBlock], object] | None = attrs.field(default=None, kw_only=True)
    reported: int = attrs.field(default=0, init=False)
    _blocks: dict[int, _Block] = attrs.field(factory=dict)
    # The tool_use blocks in stream order (block indices increase), and the reported ones.
    _tools: list[_Block] = attrs.field(factory=list)

    def add(self, event: Any) -> None:
        """Merge one stream event.

        Raises:
            ProviderStreamError: A delta for a block that never started.
        """
        kind = field(event, "type")
        if kind == "message_start":
            message = field(event, "message")
            self.id = field(message, "id", self.id)
            self._usage(field(message, "usage"))
        elif kind == "content_block_start":
            if self.on_call is not None:
                self._report(len(self._tools))  # a later block begins: the earlier are complete
            started = _Block(dump(field(event, "content_block")))
            self._blocks[field(event, "index", 0)] = started
            if started.data.get("type") == "tool_use":
                self._tools.append(started)
        elif kind == "content_block_stop":
            # Not yet complete for a tool_use block: a block with no input delta stops with
            # the whole-looking input `{}` when max_tokens cuts it right after its start. It is
            # complete when a later block starts, or when the message stops for its calls.
            stopped = self._blocks.get(field(event, "index", 0))
            if stopped is not None:
                stopped.stopped = True
        elif kind == "content_block_delta":
            index = field(event, "index", 0)
            block = self._blocks.get(index)
            if block is None:
                raise ProviderStreamError(
                    f"the stream sent a delta for content block {index}, which never started"
                )
            delta = field(event, "delta")
            delta_kind = field(delta, "type")
            if delta_kind == "text_delta":
                piece = field(delta, "text", "")
                block.data["text"] = block.data.get("text", "") + piece
                self.text += piece
            elif delta_kind == "input_json_delta":
                if block.reported:
                    raise ProviderStreamError(
                        f"the stream continued content block {index} after it was complete"
                    )
                block.json.append(field(delta, "partial_json", ""))
            elif delta_kind == "thinking_delta":
                block.data["thinking"] = block.data.get("thinking", "") + field(
                    delta, "thinking", ""
                )
            elif delta_kind == "signature_delta":
                block.data["signature"] = field(delta, "signature", "")
        elif kind == "message_delta":
            self.stop_reason = field(field(event, "delta"), "stop_reason", self.stop_reason)
            self._usage(field(event, "usage"))
            if self.stop_reason is not None:
                self.finish()
        elif kind == "message_stop":
            self.complete = True

    def finish(self) -> None:
        """The message ended: hand the calls not handed over yet to ``on_call``, unless the
        reply was cut short (``max_tokens``, a refusal)."""
        if self.on_call is None or messages_finish(self.stop_reason) in CUT:
            return
        self._report(len(self._tools))

    def _report(self, count: int) -> None:
        on_call = self.on_call
        assert on_call is not None
        while self.reported < count:
            block = self._tools[self.reported]
            block.reported = True
            on_call(
                ToolCallBlock(
                    block.data.get("id", ""), block.data.get("name", ""), self._arguments(block)
                )
            )
            self.reported += 1

    def _usage(self, usage: Any) -> None:
        if usage is None:
            return
        found = {key: value for key, value in dump(usage).items() if value is not None}
        self.usage = {**(self.usage or {}), **found}

    def _arguments(self, block: _Block) -> str:
        return "".join(block.json) or "{}"

    def tool_calls(self) -> list[ToolCallBlock]:
        """The streamed ``tool_use`` blocks, in order."""
        return [
            ToolCallBlock(
                block.data.get("id", ""), block.data.get("name", ""), self._arguments(block)
            )
            for _, block in sorted(self._blocks.items())
            if block.data.get("type") == "tool_use"
        ]

    def message(
        self, *, keep_calls: bool = True, calls: int | None = None, partial: bool = False
    ) -> dict[str, Any]:
        """The assistant message: ``tool_use`` inputs parsed from the streamed text (an input that
        is not a JSON object is stored as ``{}``, the only form the API takes back; the call's
        argument text keeps what was streamed, so the tool reports it).

        Args:
            keep_calls: ``False`` leaves the ``tool_use`` blocks out.
            calls: Keep only the first ``calls`` ``tool_use`` blocks (e.g. :attr:`reported`).
            partial: The stream broke off: keep text blocks (the text so far, when not empty)
                and other blocks only once they stopped (a thinking block without its
                signature is refused by the API).
        """
        content = []
        kept = {id(block) for block in (self._tools if calls is None else self._tools[:calls])}
        for _, block in sorted(self._blocks.items()):
            data = dict(block.data)
            if partial and data.get("type") != "tool_use":
                if data.get("type") == "text" and not data.get("text"):
                    continue
                if data.get("type") != "text" and not block.stopped:
                    continue
            if data.get("type") == "tool_use":
                if not keep_calls or id(block) not in kept:
                    continue
                parsed = parse_arguments(self._arguments(block))
                data["input"] = parsed if isinstance(parsed, dict) else {}
            content.append(data)
        return {"role": "assistant", "content": content}


@attrs.define(eq=False)
class MessagesModel:
    """A :class:`~trio_harness.TurnModel` over the Anthropic Messages API.

    Attributes:
        client: An ``anthropic.AsyncAnthropic`` (or anything with ``messages.create``).
        model: The model name.
        messages: The conversation so far (Messages format).
        max_tokens: Sent on every request (the API requires it).
        system: Optional system prompt.
        stream: Stream the reply (read to the end, then closed); :func:`~trio_harness.run_turn`
            then starts each tool call as soon as it is complete (:attr:`step_streaming`).
        options: Extra keyword arguments for every ``create`` call.
        on_text: Called with each streamed text fragment (streaming only; inside
            :func:`~trio_harness.run_turn` each fragment is also a
            :class:`~trio_harness.turn.TextDelta` event).
    """

    client: Any
    model: str
    messages: list[dict[str, Any]] = attrs.field(factory=list)
    max_tokens: int = attrs.field(default=1024, kw_only=True)
    system: str | None = attrs.field(default=None, kw_only=True)
    stream: bool = attrs.field(default=False, kw_only=True)
    options: dict[str, Any] = attrs.field(factory=dict, kw_only=True)
    on_text: Callable[[str], object] | None = attrs.field(default=None, kw_only=True)

    def add_user(self, text: str) -> None:
        """Append a user message."""
        self.messages.append({"role": "user", "content": text})

    async def step(self, tools: Sequence[dict[str, Any]]) -> ModelStep:
        """Send the conversation; append the assistant message; return its text and calls.

        A reply stopped by ``max_tokens`` or a refusal runs none of its calls (they are in
        ``cut_calls``); it is stored without its ``tool_use`` blocks, and not at all when nothing
        else is left (the API rejects empty content).

        Raises:
            ProviderStreamError: The stream reported an error, ended before ``message_stop``,
                or sent a delta for a block that never started.
        """
        return await self._step(tools, None)

    @property
    def step_streaming(self) -> StepStreaming | None:
        """With ``stream=True``: :meth:`step`, handing each ``tool_use`` block to ``on_call`` the
        moment it is complete (see :class:`~trio_harness.turn.StreamingTurnModel`); a reply cut
        short keeps the calls handed over before the cut; else ``None``."""
        return self._step if self.stream else None

    async def _step(
        self, tools: Sequence[dict[str, Any]], on_call: Callable[[ToolCallBlock], object] | None
    ) -> ModelStep:
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": self.messages,
            **self.options,
        }
        if self.system is not None:
            request["system"] = self.system
        if tools:
            request["tools"] = tools_param(list(tools))
        if not self.stream:
            message = await self.client.messages.create(**request)
            calls = tool_calls(message)
            stop = field(message, "stop_reason")
            finish = messages_finish(stop)
            reply = assistant_message(message, keep_calls=finish not in CUT)
            usage = messages_usage(field(message, "usage"))
            response_id = field(message, "id")
        else:
            accumulator = MessagesStreamAccumulator(on_call=on_call)
            try:
                await feed_stream(
                    self.client.messages.with_streaming_response.create(**request, stream=True),
                    text_feed(accumulator, self.on_text),
                )
                if not accumulator.complete:
                    raise ProviderStreamError("the stream ended before message_stop")
                accumulator.finish()
            except BaseException:
                if accumulator.reported:
                    # Calls already run: the conversation keeps them (and the text so far), so
                    # their results answer a call message.
                    self.messages.append(
                        accumulator.message(calls=accumulator.reported, partial=True)
                    )
                raise
            calls = accumulator.tool_calls()
            stop = accumulator.stop_reason
            finish = messages_finish(stop)
            if on_call is not None:
                reply = accumulator.message(calls=accumulator.reported)
            else:
                reply = accumulator.message(keep_calls=finish not in CUT)
            usage = messages_usage(accumulator.usage)
            response_id = accumulator.id
        if on_call is not None:
            # Streamed: the calls handed over ran, cut short or not; the rest never run.
            calls, cut = calls[: accumulator.reported], calls[accumulator.reported :]
        else:
            calls, cut = split_cut(finish, calls)
        if reply["content"]:
            self.messages.append(reply)
        text = "".join(
            block.get("text", "") for block in reply["content"] if block.get("type") == "text"
        )
        return ModelStep(
            text=text,
            tool_calls=tuple(calls),
            stop_reason=stop,
            raw=reply,
            finish=finish,
            refusal=text if finish == "refusal" else None,
            cut_calls=tuple(cut),
            usage=usage,
            response_id=response_id,
        )

    def add_tool_results(self, results: Sequence[StepResult]) -> None:
        """Append the step's results as one user message of ``tool_result`` blocks."""
        if results:
            self.messages.append(tool_result_message(results))
