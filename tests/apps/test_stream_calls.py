"""Streaming dispatch from the provider adapters: each stream accumulator reports a tool call the
moment it is complete (``on_call``), so ``execute_tool_calls`` fed by a channel starts it while the
reply still streams.

Scripted streams (the recorded event shapes of ``server.py``) are fed to the accumulators on
virtual time: one event every 0.1 s. Through the real SDKs, a held stream shows the first call
reaching the channel before the reply has ended.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import anthropic
import openai
import pytest
import trio
import trio.testing

import trio_harness as th
from trio_harness.providers import anthropic as anth
from trio_harness.providers import openai as oai

from .server import (
    Json,
    ScriptedServer,
    Sse,
    anthropic_events,
    anthropic_message,
    chat_chunks,
    response_events,
)

TICK = 0.1
CALLS = [("call_1", "work", ['{"n": ', "1}"]), ("call_2", "work", ['{"n": 2}'])]
RESPONSES_CALLS = [("call_1", "work", '{"n": 1}'), ("call_2", "work", '{"n": 2}')]


def _runtime(started: list[tuple[str, float]]) -> th.ToolRuntime:
    async def execute(args: Any, ctx: Any) -> str:
        started.append((ctx.call_id, trio.current_time()))
        await trio.sleep(1)
        return "done"

    runtime = th.ToolRuntime()
    runtime.register(
        th.define_tool(
            name="work",
            description="works",
            parameters={"n": {"type": "integer"}},
            output=th.ToolOutput(
                schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
            ),
            execute=execute,
            is_concurrency_safe=lambda args: True,
        )
    )
    return runtime


async def _stream_through(
    make: Callable[[Callable[[th.ToolCallBlock], object]], Any],
    events: Sequence[tuple[str | None, Any]],
) -> tuple[list[tuple[str, float]], Any, th.StepOutcome]:
    """Feed ``events`` (one per tick) to an accumulator whose ``on_call`` sends to the step."""
    started: list[tuple[str, float]] = []
    send, receive = trio.open_memory_channel[th.ToolCallBlock](math.inf)
    accumulator = make(send.send_nowait)
    outcome: list[th.StepOutcome] = []

    async def step() -> None:
        outcome.append(await th.execute_tool_calls(_runtime(started), th.Session(), receive))

    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(step)
        with send:
            for _, data in events:
                await trio.sleep(TICK)
                if data != "[DONE]":
                    accumulator.add(data)
            accumulator.finish()
    return (
        [(call_id, round((at - start) / TICK)) for call_id, at in started],
        accumulator,
        outcome[0],
    )


def _ticks(events: Sequence[tuple[str | None, Any]], complete: Callable[[Any], bool]) -> list[int]:
    # The tick (1-based event number) of every event that completes a call.
    return [index + 1 for index, (_, data) in enumerate(events) if complete(data)]


async def test_messages_calls_start_when_their_block_closes(
    autojump_clock: trio.abc.Clock,
) -> None:
    events = anthropic_events(text=["Working."], tool_uses=CALLS)
    started, accumulator, outcome = await _stream_through(
        lambda on_call: anth.MessagesStreamAccumulator(on_call=on_call), events
    )
    stops = _ticks(
        events,
        lambda data: data["type"] == "content_block_stop" and data["index"] > 0,  # tool blocks
    )
    assert started == [("call_1", stops[0]), ("call_2", stops[1])]
    assert [r.call_id for r in outcome.results] == ["call_1", "call_2"]
    assert accumulator.tool_calls() == [
        th.ToolCallBlock("call_1", "work", '{"n": 1}'),
        th.ToolCallBlock("call_2", "work", '{"n": 2}'),
    ]


async def test_messages_a_block_that_never_closes_is_complete_when_the_next_begins(
    autojump_clock: trio.abc.Clock,
) -> None:
    events = [
        e
        for e in anthropic_events(tool_uses=CALLS)
        if not (e[1]["type"] == "content_block_stop" and e[1]["index"] == 0)
    ]
    started, _, _ = await _stream_through(
        lambda on_call: anth.MessagesStreamAccumulator(on_call=on_call), events
    )
    second_start = _ticks(events, lambda d: d["type"] == "content_block_start" and d["index"] == 1)[
        0
    ]
    assert started[0] == ("call_1", second_start)


async def test_chat_calls_start_when_the_next_call_begins_or_the_choice_finishes(
    autojump_clock: trio.abc.Clock,
) -> None:
    events = chat_chunks(content=["Working."], tool_calls=CALLS)

    def begins(index: int) -> Callable[[Any], bool]:
        def check(data: Any) -> bool:
            if data == "[DONE]":
                return False
            calls = data["choices"][0]["delta"].get("tool_calls", ())
            return any(call["index"] == index and "id" in call for call in calls)

        return check

    started, accumulator, outcome = await _stream_through(
        lambda on_call: oai.ChatStreamAccumulator(on_call=on_call), events
    )
    second = _ticks(events, begins(1))[0]
    finished = _ticks(events, lambda d: d != "[DONE]" and d["choices"][0]["finish_reason"])[0]
    assert started == [("call_1", second), ("call_2", finished)]
    assert [r.call_id for r in outcome.results] == ["call_1", "call_2"]
    assert [c.arguments for c in accumulator.tool_calls()] == ['{"n": 1}', '{"n": 2}']


async def test_responses_calls_start_when_their_item_is_done(
    autojump_clock: trio.abc.Clock,
) -> None:
    events = response_events(text="Working.", tool_calls=RESPONSES_CALLS)
    started, accumulator, outcome = await _stream_through(
        lambda on_call: oai.ResponsesStreamAccumulator(on_call=on_call), events
    )
    done = _ticks(
        events,
        lambda d: d["type"] == "response.output_item.done" and d["item"]["type"] == "function_call",
    )
    assert started == [("call_1", done[0]), ("call_2", done[1])]
    assert [r.call_id for r in outcome.results] == ["call_1", "call_2"]
    assert [c.id for c in accumulator.tool_calls()] == ["call_1", "call_2"]


def test_without_on_call_nothing_is_reported() -> None:
    accumulator = anth.MessagesStreamAccumulator()
    for _, data in anthropic_events(tool_uses=CALLS):
        accumulator.add(data)
    accumulator.finish()  # no hook: nothing to do
    assert len(accumulator.tool_calls()) == 2


@pytest.mark.parametrize("stream", [True, False])
async def test_the_messages_model_hands_each_call_on_while_the_reply_streams(stream: bool) -> None:
    events = anthropic_events(text=["Working."], tool_uses=CALLS)
    second = next(
        i
        for i, (_, d) in enumerate(events)
        if d["type"] == "content_block_start" and d["index"] == 2
    )
    reply: Any = Sse(events, hold_before=second + 1) if stream else None
    if not stream:
        reply = Json(anthropic_message(tool_uses=[("call_1", "work", {"n": 1})]))
    send, receive = trio.open_memory_channel[th.ToolCallBlock](math.inf)
    with ScriptedServer([reply]) as server:
        async with anthropic.AsyncAnthropic(
            base_url=server.url, api_key="test", max_retries=0
        ) as sdk:
            model = anth.MessagesModel(sdk, "claude-test", stream=stream)
            model.add_user("work")
            async with trio.open_nursery() as nursery:
                result: list[Any] = []

                async def ask() -> None:
                    result.append(await model.step([], on_call=send.send_nowait))

                nursery.start_soon(ask)
                with trio.fail_after(10):
                    first = await receive.receive()
                # The stream is held before its second call is complete: the first came early.
                assert not result or not stream
                server.release()
    (step,) = result
    assert first.id == "call_1"
    rest = []
    while True:
        try:
            rest.append(receive.receive_nowait())
        except trio.WouldBlock:
            break
    assert [first, *rest] == list(step.tool_calls)


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_the_openai_models_hand_each_call_on(api: str) -> None:
    if api == "chat":
        events = chat_chunks(tool_calls=CALLS)
    else:
        events = response_events(tool_calls=RESPONSES_CALLS)
    send, receive = trio.open_memory_channel[th.ToolCallBlock](math.inf)
    with ScriptedServer([Sse(events)]) as server:
        async with openai.AsyncOpenAI(base_url=server.url, api_key="test", max_retries=0) as sdk:
            model: Any = (
                oai.ChatCompletionsModel(sdk, "m", stream=True)
                if api == "chat"
                else oai.ResponsesModel(sdk, "m", stream=True)
            )
            model.add_user("work")
            step = await model.step([], on_call=send.send_nowait)
    sent = []
    while True:
        try:
            sent.append(receive.receive_nowait())
        except trio.WouldBlock:
            break
    assert sent == list(step.tool_calls)
    assert [call.id for call in sent] == ["call_1", "call_2"]
