"""Anthropic Messages adapters, as plain data (no ``anthropic`` import at runtime).

* :func:`tools_param` — the ``tools=[{"name", "description", "input_schema"}]`` parameter;
* :func:`tool_calls` — ``tool_use`` blocks as ``ToolCallBlock`` s; the parsed ``input`` is turned
  back into argument text exactly as ``JSON.stringify`` would write it;
* :func:`assistant_message` — the assistant turn to append to ``messages``;
* :func:`tool_result_message` — step results as ONE user message of ``tool_result`` blocks
  (model order, ``is_error`` set on failures);
* :class:`MessagesStreamAccumulator` — rebuilds the message from stream events
  (``input_json_delta`` fragments joined per block);
* :class:`MessagesModel` — a ready :class:`~trio_harness.TurnModel` over an
  ``anthropic.AsyncAnthropic`` client the application created.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from .._apps import ModelStep
from .._json import js_json, parse_arguments
from .._pool import StepResult, ToolCallBlock
from ._common import (
    ToolSource,
    dump,
    feed_stream,
    field,
    js_argument_text,
    tool_specs,
)

__all__ = [
    "MessagesModel",
    "MessagesStreamAccumulator",
    "assistant_message",
    "tool_calls",
    "tool_result_message",
    "tools_param",
]


def tools_param(tools: ToolSource) -> list[dict[str, Any]]:
    """The Messages API ``tools`` parameter."""
    return [
        {
            "name": spec["name"],
            "description": spec["description"],
            "input_schema": spec["parameters"],
        }
        for spec in tool_specs(tools)
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


def assistant_message(message: Any) -> dict[str, Any]:
    """``{"role": "assistant", "content": [...]}`` with the message's blocks as plain dicts.

    Every block is kept (text, ``tool_use``, thinking blocks with their signatures), as the API
    requires them to be sent back unchanged.
    """
    return {"role": "assistant", "content": [dump(block) for block in _content(message)]}


def _result_blocks(item: StepResult) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in item.result.content:
        if isinstance(block, dict) and block.get("type") in ("text", "image"):
            blocks.append(dict(block))
        else:
            blocks.append({"type": "text", "text": js_json(block)})
    return blocks


def tool_result_message(results: Sequence[StepResult]) -> dict[str, Any]:
    """The user message answering a step: one ``tool_result`` block per result, in model order."""
    content = []
    for item in results:
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": item.call_id,
            "content": _result_blocks(item),
        }
        if item.result.is_error:
            block["is_error"] = True
        content.append(block)
    return {"role": "user", "content": content}


@attrs.define(eq=False)
class _Block:
    data: dict[str, Any]
    json: list[str] = attrs.field(factory=list)


@attrs.define(eq=False)
class MessagesStreamAccumulator:
    """Rebuilds a message from Messages stream events (SDK event objects or dicts).

    ``tool_use`` blocks collect their ``input_json_delta`` fragments; the joined text is the
    call's argument text as the model streamed it (``"{}"`` when it streamed none).

    Attributes:
        text: The streamed text so far.
        stop_reason: From the ``message_delta`` event.
        on_call: Called with each ``tool_use`` block as a ``ToolCallBlock`` as soon as it is
            complete (its block closed, a later block began, or the message ended), in order,
            once each; e.g. a memory channel's ``send_nowait`` feeding
            ``execute_tool_calls`` (streaming dispatch). Call :meth:`finish` at the stream's end.
    """

    text: str = ""
    stop_reason: str | None = None
    on_call: Callable[[ToolCallBlock], object] | None = attrs.field(default=None, kw_only=True)
    _blocks: dict[int, _Block] = attrs.field(factory=dict)
    _sent: set[int] = attrs.field(factory=set)

    def add(self, event: Any) -> None:
        """Merge one stream event."""
        kind = field(event, "type")
        if kind == "content_block_start":
            index = field(event, "index", 0)
            self._complete(index - 1)  # a block began: every earlier one is complete
            self._blocks[index] = _Block(dump(field(event, "content_block")))
        elif kind == "content_block_delta":
            block = self._blocks[field(event, "index", 0)]
            delta = field(event, "delta")
            delta_kind = field(delta, "type")
            if delta_kind == "text_delta":
                piece = field(delta, "text", "")
                block.data["text"] = block.data.get("text", "") + piece
                self.text += piece
            elif delta_kind == "input_json_delta":
                block.json.append(field(delta, "partial_json", ""))
            elif delta_kind == "thinking_delta":
                block.data["thinking"] = block.data.get("thinking", "") + field(
                    delta, "thinking", ""
                )
            elif delta_kind == "signature_delta":
                block.data["signature"] = field(delta, "signature", "")
        elif kind == "content_block_stop":
            self._complete(field(event, "index", 0))
        elif kind == "message_delta":
            self.stop_reason = field(field(event, "delta"), "stop_reason", self.stop_reason)
            self.finish()

    def finish(self) -> None:
        """The stream ended: report every ``tool_use`` block not reported yet (see ``on_call``)."""
        self._complete(max(self._blocks, default=-1))

    def _complete(self, through: int) -> None:
        on_call = self.on_call
        if on_call is None:
            return
        for index, block in sorted(self._blocks.items()):
            if index > through:
                break
            if index not in self._sent and block.data.get("type") == "tool_use":
                self._sent.add(index)
                on_call(self._block(block))

    def _block(self, block: _Block) -> ToolCallBlock:
        return ToolCallBlock(
            block.data.get("id", ""), block.data.get("name", ""), self._arguments(block)
        )

    def _arguments(self, block: _Block) -> str:
        return "".join(block.json) or "{}"

    def tool_calls(self) -> list[ToolCallBlock]:
        """The streamed ``tool_use`` blocks, in order."""
        return [
            self._block(block)
            for _, block in sorted(self._blocks.items())
            if block.data.get("type") == "tool_use"
        ]

    def message(self) -> dict[str, Any]:
        """The assistant message (``tool_use`` inputs parsed from the streamed text)."""
        content = []
        for _, block in sorted(self._blocks.items()):
            data = dict(block.data)
            if data.get("type") == "tool_use":
                data["input"] = parse_arguments(self._arguments(block))
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
        stream: Stream the reply (read to the end, then closed).
        options: Extra keyword arguments for every ``create`` call.
    """

    client: Any
    model: str
    messages: list[dict[str, Any]] = attrs.field(factory=list)
    max_tokens: int = attrs.field(default=1024, kw_only=True)
    system: str | None = attrs.field(default=None, kw_only=True)
    stream: bool = attrs.field(default=False, kw_only=True)
    options: dict[str, Any] = attrs.field(factory=dict, kw_only=True)

    def add_user(self, text: str) -> None:
        """Append a user message."""
        self.messages.append({"role": "user", "content": text})

    async def step(
        self,
        tools: Sequence[dict[str, Any]],
        *,
        on_call: Callable[[ToolCallBlock], object] | None = None,
    ) -> ModelStep:
        """Send the conversation; append the assistant message; return its text and calls.

        ``on_call`` gets each tool call, in order: while the reply streams (``stream=True``) as
        soon as its block is complete, otherwise once the reply arrived.
        """
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
            reply = assistant_message(message)
            stop = field(message, "stop_reason")
            if on_call is not None:
                for call in calls:
                    on_call(call)
        else:
            accumulator = MessagesStreamAccumulator(on_call=on_call)
            await feed_stream(
                self.client.messages.with_streaming_response.create(**request, stream=True),
                accumulator.add,
            )
            accumulator.finish()
            calls = accumulator.tool_calls()
            reply = accumulator.message()
            stop = accumulator.stop_reason
        self.messages.append(reply)
        text = "".join(
            block.get("text", "") for block in reply["content"] if block.get("type") == "text"
        )
        return ModelStep(text=text, tool_calls=tuple(calls), stop_reason=stop, raw=reply)

    def add_tool_results(self, results: Sequence[StepResult]) -> None:
        """Append the step's results as one user message of ``tool_result`` blocks."""
        if results:
            self.messages.append(tool_result_message(results))
