"""The OpenAI Responses API, as plain data: tools, ``function_call`` items, call outputs (with
images and PDFs in the API's own parts), finish reasons, usage, the stream accumulator and the
ready model (public in :mod:`trio_harness.providers.openai`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, Final

import attrs

from .._apps import FinishReason, ModelStep, StepStreaming, Usage
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
    split_cut,
    text_feed,
    tool_specs,
)
from ._strict import function_tool

__all__ = [
    "ResponsesModel",
    "ResponsesStreamAccumulator",
    "responses_finish",
    "responses_tool_calls",
    "responses_tool_outputs",
    "responses_tools",
    "responses_usage",
]


def responses_tools(tools: ToolSource, *, strict: bool | None = None) -> list[dict[str, Any]]:
    """The Responses API ``tools`` parameter: ``[{"type": "function", "name", ...}]``.

    ``strict`` works as in :func:`chat_tools`; every tool says ``"strict"`` explicitly, because
    this API makes a function tool strict when the field is absent (then optional parameters
    become required and the model invents values for them).
    """
    specs = tool_specs(tools)
    check_tool_names(specs)
    return [{"type": "function", **function_tool(spec, strict, True)} for spec in specs]


_CALL_ITEMS: Final = ("function_call", "custom_tool_call")


def indexed_calls(items: dict[int, Any]) -> list[tuple[int, ToolCallBlock]]:
    """``(output index, call)`` for the call items among ``items`` (keyed by output index)."""
    return [
        (index, responses_tool_calls([item])[0])
        for index, item in sorted(items.items())
        if field(item, "type") in _CALL_ITEMS
    ]


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

    With ``on_call``, each ``function_call`` (or ``custom_tool_call``) item is handed to it the
    moment its ``response.output_item.done`` arrives (an item whose ``status`` is not
    ``"completed"`` never is); calls that only the final response lists are handed over then,
    unless the response is incomplete.

    Calls are told apart by their place in the output, not by id: a model (or a compatible
    server) may give two calls one id (``""``, a fixed one), and each is handed over once.

    Attributes:
        text: The streamed output text so far.
        response: The final event's response, once it arrived.
        on_call: Called with each complete call (see above), or ``None``.
        reported: The call ids handed to ``on_call``, in order (an id twice for two calls).
        handed: The output indices of the call items handed to ``on_call``.
    """

    text: str = ""
    response: Any = None
    on_call: Callable[[ToolCallBlock], object] | None = attrs.field(default=None, kw_only=True)
    reported: list[str] = attrs.field(factory=list, init=False)
    handed: set[int] = attrs.field(factory=set, init=False)
    _items: dict[int, Any] = attrs.field(factory=dict)

    def add(self, event: Any) -> None:
        """Merge one stream event."""
        kind = field(event, "type")
        if kind == "response.output_text.delta":
            self.text += field(event, "delta", "")
        elif kind == "response.output_item.done":
            item = field(event, "item")
            index = field(event, "output_index", len(self._items))
            self._items[index] = item
            if (
                self.on_call is not None
                and field(item, "type") in _CALL_ITEMS
                and field(item, "status", "completed") == "completed"
            ):
                self._report(indexed_calls({index: item}))
        elif kind in _TERMINAL:
            self.response = field(event, "response")
            if self.on_call is not None and field(self.response, "status") == "completed":
                self.finish()

    def finish(self) -> None:
        """The response completed: hand the calls not handed over yet to ``on_call``."""
        if self.on_call is not None:
            self._report(indexed_calls(dict(enumerate(self.output()))))

    def _report(self, calls: Sequence[tuple[int, ToolCallBlock]]) -> None:
        on_call = self.on_call
        assert on_call is not None
        for index, call in calls:
            if index not in self.handed:
                on_call(call)
                self.handed.add(index)
                self.reported.append(call.id)

    def handed_output(self) -> list[Any]:
        """The items done so far, ``function_call`` items only those handed over (the output
        of a stream that broke off after handing them over)."""
        return [
            item
            for index, item in sorted(self._items.items())
            if field(item, "type") not in _CALL_ITEMS or index in self.handed
        ]

    def done_output(self, calls: Collection[str]) -> list[Any]:
        """The items done so far, ``function_call`` items only those in ``calls`` (the output of
        a stream that broke off after handing those calls over)."""
        return [
            item
            for _, item in sorted(self._items.items())
            if field(item, "type") not in _CALL_ITEMS or field(item, "call_id") in calls
        ]

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
        stream: Stream the reply (read to the end, then closed); :func:`~trio_harness.run_turn`
            then starts each tool call as soon as it is complete (:attr:`step_streaming`).
        strict: Passed to :func:`responses_tools`.
        options: Extra keyword arguments for every ``create`` call.
        on_text: Called with each streamed text fragment (streaming only; inside
            :func:`~trio_harness.run_turn` each fragment is also a
            :class:`~trio_harness.turn.TextDelta` event).
    """

    client: Any
    model: str
    input: list[Any] = attrs.field(factory=list)
    instructions: str | None = attrs.field(default=None, kw_only=True)
    stream: bool = attrs.field(default=False, kw_only=True)
    strict: bool | None = attrs.field(default=None, kw_only=True)
    options: dict[str, Any] = attrs.field(factory=dict, kw_only=True)
    on_text: Callable[[str], object] | None = attrs.field(default=None, kw_only=True)
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
        return await self._step(tools, None)

    @property
    def step_streaming(self) -> StepStreaming | None:
        """With ``stream=True``: :meth:`step`, handing each call item to ``on_call`` when it is
        done (see :class:`~trio_harness.turn.StreamingTurnModel`); else ``None``."""
        return self._step if self.stream else None

    async def _step(
        self, tools: Sequence[dict[str, Any]], on_call: Callable[[ToolCallBlock], object] | None
    ) -> ModelStep:
        request: dict[str, Any] = {"model": self.model, "input": self.input, **self.options}
        if self.instructions is not None:
            request["instructions"] = self.instructions
        if tools:
            request["tools"] = responses_tools(list(tools), strict=self.strict)
        handed: set[int] | None = None
        if not self.stream:
            response = await self.client.responses.create(**request)
            output = list(field(response, "output", ()))
        else:
            accumulator = ResponsesStreamAccumulator(on_call=on_call)
            try:
                await feed_stream(
                    self.client.responses.with_streaming_response.create(**request, stream=True),
                    text_feed(accumulator, self.on_text),
                )
                if not accumulator.complete:
                    raise ProviderStreamError(
                        "the stream ended before its final event (response.completed, "
                        "response.incomplete or response.failed)"
                    )
                finish = responses_finish(accumulator.response)
            except BaseException:
                if accumulator.handed:
                    # Calls already run: the conversation keeps them (and the items done), so
                    # their results answer a call item.
                    self._store(accumulator.handed_output())
                raise
            response = accumulator.response
            output = accumulator.output()
            if on_call is not None:
                handed = accumulator.handed
        finish = responses_finish(response)
        text, refusal = _output_text(output)
        if self.stream and not text:
            text = accumulator.text
        calls = responses_tool_calls(output)
        if handed is not None:
            # Streamed: the calls handed over ran, cut short or not; the rest never run.
            indexed = indexed_calls(dict(enumerate(output)))
            cut = [call for index, call in indexed if index not in handed]
            calls = [call for index, call in indexed if index in handed]
            stored = self._store(
                [
                    item
                    for index, item in enumerate(output)
                    if field(item, "type") not in _CALL_ITEMS or index in handed
                ]
            )
        else:
            calls, cut = split_cut(finish, calls)
            stored = self._store(
                [item for item in output if field(item, "type") not in _CALL_ITEMS]
                if cut
                else output
            )
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

    def _store(self, output: Sequence[Any]) -> list[dict[str, Any]]:
        stored = [dump(item) for item in output]
        self._custom = {
            item["call_id"] for item in stored if item.get("type") == "custom_tool_call"
        }
        self.input.extend(stored)
        return stored

    def add_tool_results(self, results: Sequence[StepResult]) -> None:
        """Append the step's results as ``function_call_output`` (or
        ``custom_tool_call_output``) items."""
        self.input.extend(responses_tool_outputs(results, custom=self._custom))
