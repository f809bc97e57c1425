"""When a streamed step ends: waiting for the whole response vs streaming dispatch.

Run: ``.venv/bin/python bench/bench_streaming.py``.

A scripted model stream completes five calls at 0.5, 1.0, 1.5, 2.0 and 2.5 s; their bodies take
3, 1, 1, 1 and 0.2 s. Both variants run the real ``ToolRuntime`` (a ``define_tool`` tool that
sleeps) under ``trio.testing.MockClock``, so the times are virtual and exact:

* ``whole response``: the calls are handed to ``execute_tool_calls`` as a list once the stream
  ended (what a loop that reads the response to its end does);
* ``streaming dispatch``: the receive end of the channel the stream writes to is the step's
  ``tool_calls``; each call starts as soon as it is complete.

The limit: no call ends before it arrived and ran (``max(arrival + body)``), and an exclusive
call starts no earlier than every earlier call ended, later calls no earlier than it ended. Two
scripts: five safe calls, and the same with the middle call exclusive.

The same scripts through the ready models (``ChatCompletionsModel``, ``ResponsesModel`` and
``MessagesModel`` with ``stream=True``) and ``run_turn``: a stand-in client streams the reply as
server-sent events on the same virtual clock (a Chat call is complete when the next call begins,
the last at the finish chunk; a Responses ``function_call`` item at its
``response.output_item.done``; a Messages ``tool_use`` block when it stops), and the step ends
at its ``StepFinished`` event: ``run_turn(..., stream_calls=False)`` (the whole response first)
vs the default (each call starts when the model's stream accumulator hands it over).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

import trio_harness as th
from trio_harness.providers import anthropic as anth
from trio_harness.providers import openai as oai

ARRIVALS = (0.5, 1.0, 1.5, 2.0, 2.5)
BODIES = (3.0, 1.0, 1.0, 1.0, 0.2)
SCRIPTS = {"5 safe calls": (), "exclusive in the middle": (2,)}


def _runtime() -> th.ToolRuntime:
    async def execute(args: Any, ctx: Any) -> str:
        await trio.sleep(args["seconds"])
        return "done"

    runtime = th.ToolRuntime()
    runtime.register(
        th.define_tool(
            name="work",
            description="works for a while",
            parameters={"seconds": {"type": "number"}, "alone": {"type": "boolean"}},
            output=th.ToolOutput(
                schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
            ),
            execute=execute,
            is_concurrency_safe=lambda args: not args.get("alone", False),
        )
    )
    return runtime


def _calls(exclusive: tuple[int, ...]) -> list[th.ToolCallBlock]:
    return [
        th.ToolCallBlock(
            f"c{i}",
            "work",
            f'{{"seconds": {body}, "alone": {"true" if i in exclusive else "false"}}}',
        )
        for i, body in enumerate(BODIES)
    ]


async def _stream(
    send: trio.MemorySendChannel[th.ToolCallBlock], calls: list[th.ToolCallBlock]
) -> None:
    start = trio.current_time()
    async with send:
        for at, call in zip(ARRIVALS, calls, strict=True):
            await trio.sleep_until(start + at)
            await send.send(call)


async def whole_response(calls: list[th.ToolCallBlock]) -> float:
    """Seconds until the step ended when it starts once the stream ended."""
    start = trio.current_time()
    send, receive = trio.open_memory_channel[th.ToolCallBlock](math.inf)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stream, send, calls)
        received = [call async for call in receive]
    await th.execute_tool_calls(_runtime(), th.Session(), received)
    return trio.current_time() - start


async def streaming_dispatch(calls: list[th.ToolCallBlock]) -> float:
    """Seconds until the step ended when it is fed the stream itself."""
    start = trio.current_time()
    send, receive = trio.open_memory_channel[th.ToolCallBlock](0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stream, send, calls)
        await th.execute_tool_calls(_runtime(), th.Session(), receive)
    return trio.current_time() - start


def limit(exclusive: tuple[int, ...]) -> float:
    """The earliest any scheduler could end the step (see the module docstring)."""
    ends: list[float] = []
    barrier = 0.0  # later calls start no earlier than this
    for index, (at, body) in enumerate(zip(ARRIVALS, BODIES, strict=True)):
        if index in exclusive:
            barrier = max(at, *ends) + body if ends else at + body
            ends.append(barrier)
        else:
            ends.append(max(at, barrier) + body)
    return max(ends)


# -- through the ready models -------------------------------------------------------------------

# (seconds from the request, SSE event name, data) of one streamed reply.
_Timed = list[tuple[float, str | None, Any]]


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _chat_script(calls: list[th.ToolCallBlock]) -> _Timed:
    # Call i begins when call i-1 is complete (its arrival); the last ends at the finish chunk.
    out: _Timed = [(0.0, None, _chat_chunk({"role": "assistant", "content": ""}))]
    begins = (0.0, *ARRIVALS[:-1])
    for index, (at, call) in enumerate(zip(begins, calls, strict=True)):
        head = {"index": index, "id": call.id, "type": "function"}
        head["function"] = {"name": call.name, "arguments": ""}
        out.append((at, None, _chat_chunk({"tool_calls": [head]})))
        piece = {"index": index, "function": {"arguments": call.arguments}}
        out.append((at, None, _chat_chunk({"tool_calls": [piece]})))
    out.append((ARRIVALS[-1], None, _chat_chunk({}, "tool_calls")))
    out.append((ARRIVALS[-1], None, "[DONE]"))
    return out


def _messages_script(calls: list[th.ToolCallBlock]) -> _Timed:
    # Each tool_use block stops at its call's arrival; the next starts right after.
    message: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "c",
        "content": [],
    }
    message["usage"] = {"input_tokens": 1, "output_tokens": 1}
    out: _Timed = [(0.0, "message_start", {"type": "message_start", "message": message})]
    begins = (0.0, *ARRIVALS[:-1])
    for index, (start, end, call) in enumerate(zip(begins, ARRIVALS, calls, strict=True)):
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        out.append(
            (
                start,
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        )
        delta = {"type": "input_json_delta", "partial_json": call.arguments}
        out.append(
            (
                start,
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        )
        out.append((end, "content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use"},
        "usage": {"output_tokens": 1},
    }
    out.append((ARRIVALS[-1], "message_delta", stop))
    out.append((ARRIVALS[-1], "message_stop", {"type": "message_stop"}))
    return out


def _response(output: list[dict[str, Any]], status: str = "completed") -> dict[str, Any]:
    response = {"id": "resp_1", "object": "response", "status": status, "model": "m"}
    return response | {"output": output, "usage": {"input_tokens": 1, "output_tokens": 1}}


def _responses_script(calls: list[th.ToolCallBlock]) -> _Timed:
    # Each function_call item is done at its call's arrival; the next is added right after.
    created = {"type": "response.created", "response": _response([], "in_progress")}
    out: _Timed = [(0.0, "response.created", created)]
    begins = (0.0, *ARRIVALS[:-1])
    items: list[dict[str, Any]] = []
    for index, (start, end, call) in enumerate(zip(begins, ARRIVALS, calls, strict=True)):
        item = {"type": "function_call", "id": f"fc_{index}", "call_id": call.id}
        item |= {"name": call.name, "arguments": call.arguments, "status": "completed"}
        items.append(item)
        added = {**item, "arguments": "", "status": "in_progress"}
        out.append(
            (
                start,
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": index, "item": added},
            )
        )
        delta = {"item_id": item["id"], "output_index": index, "delta": call.arguments}
        out.append(
            (
                start,
                "response.function_call_arguments.delta",
                {"type": "response.function_call_arguments.delta", **delta},
            )
        )
        out.append(
            (
                end,
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            )
        )
    completed = {"type": "response.completed", "response": _response(items)}
    out.append((ARRIVALS[-1], "response.completed", completed))
    return out


_SCRIPTS = {"chat": _chat_script, "responses": _responses_script, "messages": _messages_script}


def _final_script(api: str) -> _Timed:
    if api == "chat":
        return [
            (0.0, None, _chat_chunk({"role": "assistant", "content": "done"}, "stop")),
            (0.0, None, "[DONE]"),
        ]
    if api == "responses":
        content = [{"type": "output_text", "text": "done", "annotations": []}]
        item: dict[str, Any] = {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
        }
        item["content"] = content
        done = {"type": "response.output_item.done", "output_index": 0, "item": item}
        created = _response([], "in_progress")
        return [
            (0.0, "response.created", {"type": "response.created", "response": created}),
            (0.0, "response.output_item.done", done),
            (
                0.0,
                "response.completed",
                {"type": "response.completed", "response": _response([item])},
            ),
        ]
    message: dict[str, Any] = {
        "id": "msg_2",
        "type": "message",
        "role": "assistant",
        "model": "c",
        "content": [],
    }
    message["usage"] = {"input_tokens": 1, "output_tokens": 1}
    block = {"type": "text", "text": "done"}
    return [
        (0.0, "message_start", {"type": "message_start", "message": message}),
        (
            0.0,
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        (0.0, "content_block_stop", {"type": "content_block_stop", "index": 0}),
        (0.0, "message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        (0.0, "message_stop", {"type": "message_stop"}),
    ]


class _Lines:
    """A streamed HTTP response as the models read it: each event's lines at its time."""

    def __init__(self, script: _Timed) -> None:
        self._script = list(script)
        self._start = trio.current_time()
        self._lines: list[str] = []

    def aiter_lines(self) -> _Lines:
        return self

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        if not self._lines:
            if not self._script:
                raise StopAsyncIteration
            at, event, data = self._script.pop(0)
            await trio.sleep_until(self._start + at)
            text = data if isinstance(data, str) else json.dumps(data)
            self._lines = [*([f"event: {event}"] if event else []), f"data: {text}", ""]
        return self._lines.pop(0)

    async def aclose(self) -> None:
        self._script.clear()
        self._lines.clear()


class _Client:
    """Stands for ``openai.AsyncOpenAI`` / ``anthropic.AsyncAnthropic`` streaming replies."""

    def __init__(self, scripts: list[_Timed]) -> None:
        self._scripts = scripts

    def __getattr__(self, name: str) -> _Client:
        if name in ("chat", "completions", "responses", "messages", "with_streaming_response"):
            return self
        raise AttributeError(name)

    @asynccontextmanager
    async def create(self, **request: Any) -> AsyncIterator[_Lines]:
        yield _Lines(self._scripts.pop(0))


async def through_model(api: str, calls: list[th.ToolCallBlock], *, stream_calls: bool) -> float:
    """Seconds from the request until the step's ``StepFinished`` in ``run_turn``."""
    client = _Client([_SCRIPTS[api](calls), _final_script(api)])
    model: Any
    if api == "chat":
        model = oai.ChatCompletionsModel(client, "m", stream=True, stream_usage=False)
    elif api == "responses":
        model = oai.ResponsesModel(client, "m", stream=True)
    else:
        model = anth.MessagesModel(client, "c", stream=True)
    model.add_user("work")
    start = trio.current_time()
    ended: list[float] = []

    def on_event(event: th.turn.TurnEvent) -> None:
        if isinstance(event, th.turn.StepFinished):
            ended.append(trio.current_time() - start)

    result = await th.run_turn(
        model, _runtime(), th.Session(), on_event=on_event, stream_calls=stream_calls
    )
    assert (result.stop, result.steps) == ("done", 1), result
    return ended[0]


# Names in the rows.
MODELS = {
    "chat": "ChatCompletionsModel",
    "responses": "ResponsesModel",
    "messages": "MessagesModel",
}


def measure() -> dict[str, dict[str, float]]:
    """Per script: ``whole``, ``streamed`` and ``limit`` (seconds of virtual time); then the
    same through each ready model (``"<model>, <script>"``)."""
    out: dict[str, dict[str, float]] = {}

    async def main() -> None:
        for name, exclusive in SCRIPTS.items():
            calls = _calls(exclusive)
            out[name] = {
                "whole": await whole_response(calls),
                "streamed": await streaming_dispatch(calls),
                "limit": limit(exclusive),
            }
        for api, model in MODELS.items():
            for name, exclusive in SCRIPTS.items():
                calls = _calls(exclusive)
                out[f"{model}, {name}"] = {
                    "whole": await through_model(api, calls, stream_calls=False),
                    "streamed": await through_model(api, calls, stream_calls=True),
                    "limit": limit(exclusive),
                }

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return out


def main() -> int:
    print("arrivals", ARRIVALS, "bodies", BODIES, "(virtual seconds)")
    print(f"{'script':<52}{'whole response':>16}{'streaming':>11}{'limit':>7}")
    for name, row in measure().items():
        print(f"{name:<52}{row['whole']:>15.2f}s{row['streamed']:>10.2f}s{row['limit']:>6.2f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main() if len(sys.argv) == 1 else 2)
