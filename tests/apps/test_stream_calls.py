"""Streaming dispatch from the ready models (issue 21): each stream accumulator hands a tool call
over the moment it is complete (``on_call``), and ``run_turn`` starts it while the reply still
streams, with the session log event for event the one the same calls get as a list.

Scripted streams (the event shapes of ``server.py``) are fed to the accumulators on virtual time,
one event every 0.1 s. Through the real SDKs against a scripted server on 127.0.0.1, a held
stream shows the first call running before the reply has ended.
"""

from __future__ import annotations

import json
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

from .sdk_types import check_chat, check_messages, check_responses
from .server import (
    Json,
    ScriptedServer,
    Sse,
    anthropic_events,
    chat_chunks,
    chat_completion,
    response_events,
)

TICK = 0.1
CALLS = [("call_1", "work", ['{"n": ', "1}"]), ("call_2", "work", ['{"n": 2}'])]
RESPONSES_CALLS = [("call_1", "work", '{"n": 1}'), ("call_2", "work", '{"n": 2}')]

Events = list[tuple[str | None, Any]]


def work_runtime(
    started: list[tuple[str, float]],
    *,
    body: float = 1.0,
    running: trio.Event | None = None,
    exclusive: bool = False,
    first_waits: bool = False,
) -> th.ToolRuntime:
    """One tool, ``work(n)``: records when it starts, then takes ``body`` seconds (``inf``: until
    cancelled). With ``first_waits``, ``work(1)`` also waits until ``work(2)`` started."""
    second = trio.Event()

    @th.tool(parallel=not exclusive)
    async def work(n: int) -> str:
        """Work on ``n``."""
        started.append((f"n={n}", trio.current_time()))
        if running is not None:
            running.set()
        if n == 2:
            second.set()
        elif first_waits:
            await second.wait()
        await trio.sleep(body)
        return f"did {n}"

    runtime = th.ToolRuntime()
    runtime.register(work)
    return runtime


async def stream_through(
    make: Callable[[Callable[[th.ToolCallBlock], object]], Any], events: Events
) -> tuple[list[tuple[str, int]], Any, th.StepOutcome]:
    """Feed ``events`` (one per tick) to an accumulator whose ``on_call`` feeds a step."""
    started: list[tuple[str, float]] = []
    send, receive = trio.open_memory_channel[th.ToolCallBlock](math.inf)
    accumulator = make(send.send_nowait)
    outcome: list[th.StepOutcome] = []

    async def step() -> None:
        outcome.append(await th.execute_tool_calls(work_runtime(started), th.Session(), receive))

    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(step)
        with send:
            for _, data in events:
                await trio.sleep(TICK)
                if data != "[DONE]":
                    accumulator.add(data)
            accumulator.finish()
    ticks = [(name, round((at - start) / TICK)) for name, at in started]
    return ticks, accumulator, outcome[0]


def ticks_of(events: Events, complete: Callable[[Any], bool]) -> list[int]:
    """The tick (1-based event number) of every event ``complete`` matches."""
    return [index + 1 for index, (_, data) in enumerate(events) if complete(data)]


def is_chunk(data: Any) -> bool:
    return isinstance(data, dict)


def error_code(result: th.ToolExecutionResult) -> str | None:
    info = result.error.info if result.error is not None else None
    return None if info is None else info.code


# -- the accumulators --------------------------------------------------------------------------


async def test_messages_calls_start_when_the_next_block_begins_or_the_message_stops(
    autojump_clock: trio.abc.Clock,
) -> None:
    # Not at a block's own content_block_stop: a block max_tokens cuts stops too.
    events = anthropic_events(text=["Working."], tool_uses=CALLS)
    started, accumulator, outcome = await stream_through(
        lambda on_call: anth.MessagesStreamAccumulator(on_call=on_call), events
    )
    second = ticks_of(events, lambda d: d["type"] == "content_block_start" and d["index"] == 2)
    stop = ticks_of(events, lambda d: d["type"] == "message_delta")
    assert started == [("n=1", second[0]), ("n=2", stop[0])]
    assert [r.call_id for r in outcome.results] == ["call_1", "call_2"]
    assert accumulator.reported == 2
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
    started, _, _ = await stream_through(
        lambda on_call: anth.MessagesStreamAccumulator(on_call=on_call), events
    )
    second = ticks_of(events, lambda d: d["type"] == "content_block_start" and d["index"] == 1)
    assert started[0] == ("n=1", second[0])


async def test_messages_a_block_cut_by_max_tokens_is_never_handed_over(
    autojump_clock: trio.abc.Clock,
) -> None:
    # The cut block still gets its content_block_stop; its input is no whole object.
    events = anthropic_events(tool_uses=[CALLS[0], ("call_2", "work", ['{"n": '])])
    for _, data in events:
        if data["type"] == "message_delta":
            data["delta"]["stop_reason"] = "max_tokens"
    started, accumulator, outcome = await stream_through(
        lambda on_call: anth.MessagesStreamAccumulator(on_call=on_call), events
    )
    assert [name for name, _ in started] == ["n=1"]
    assert [r.call_id for r in outcome.results] == ["call_1"]
    assert accumulator.reported == 1
    message = accumulator.message(calls=accumulator.reported)
    assert [block["id"] for block in message["content"]] == ["call_1"]


async def test_chat_calls_start_when_the_next_call_begins_or_the_choice_finishes(
    autojump_clock: trio.abc.Clock,
) -> None:
    events = chat_chunks(content=["Working."], tool_calls=CALLS)

    def begins(index: int) -> Callable[[Any], bool]:
        def check(data: Any) -> bool:
            if not is_chunk(data):
                return False
            calls = data["choices"][0]["delta"].get("tool_calls", ())
            return any(call["index"] == index and "id" in call for call in calls)

        return check

    started, accumulator, outcome = await stream_through(
        lambda on_call: oai.ChatStreamAccumulator(on_call=on_call), events
    )
    second = ticks_of(events, begins(1))[0]
    finished = ticks_of(events, lambda d: is_chunk(d) and d["choices"][0]["finish_reason"])[0]
    assert started == [("n=1", second), ("n=2", finished)]
    assert [r.call_id for r in outcome.results] == ["call_1", "call_2"]
    assert [c.arguments for c in accumulator.tool_calls()] == ['{"n": 1}', '{"n": 2}']


async def test_chat_the_call_a_length_cut_ends_in_is_never_handed_over(
    autojump_clock: trio.abc.Clock,
) -> None:
    events = chat_chunks(tool_calls=[CALLS[0], ("call_2", "work", ['{"n": 2'])])
    events[-2][1]["choices"][0]["finish_reason"] = "length"
    started, accumulator, outcome = await stream_through(
        lambda on_call: oai.ChatStreamAccumulator(on_call=on_call), events
    )
    assert [name for name, _ in started] == ["n=1"]
    assert [r.call_id for r in outcome.results] == ["call_1"]
    assert [call["id"] for call in accumulator.message(calls=1)["tool_calls"]] == ["call_1"]


def test_chat_a_delta_for_a_call_handed_over_is_a_stream_error() -> None:
    events = chat_chunks(tool_calls=CALLS)
    late = {
        **events[-3][1],
        "choices": [
            {
                "index": 0,
                "delta": {"tool_calls": [{"index": 0, "function": {"arguments": " "}}]},
                "finish_reason": None,
            }
        ],
    }
    accumulator = oai.ChatStreamAccumulator(on_call=lambda call: None)
    for _, data in events[:-2]:
        accumulator.add(data)
    with pytest.raises(th.providers.ProviderStreamError, match="after the next call began"):
        accumulator.add(late)
    # Without on_call the same stream is merged as before.
    plain = oai.ChatStreamAccumulator()
    for _, data in [*events[:-2], (None, late)]:
        plain.add(data)
    assert plain.tool_calls()[0].arguments == '{"n": 1} '


async def test_responses_calls_start_when_their_item_is_done(
    autojump_clock: trio.abc.Clock,
) -> None:
    events = response_events(text="Working.", tool_calls=RESPONSES_CALLS)
    started, accumulator, outcome = await stream_through(
        lambda on_call: oai.ResponsesStreamAccumulator(on_call=on_call), events
    )
    done = ticks_of(
        events,
        lambda d: d["type"] == "response.output_item.done" and d["item"]["type"] == "function_call",
    )
    assert started == [("n=1", done[0]), ("n=2", done[1])]
    assert [r.call_id for r in outcome.results] == ["call_1", "call_2"]
    assert accumulator.reported == ["call_1", "call_2"]


def test_without_on_call_nothing_is_reported() -> None:
    accumulator = anth.MessagesStreamAccumulator()
    for _, data in anthropic_events(tool_uses=CALLS):
        accumulator.add(data)
    accumulator.finish()  # no hook: nothing to do
    assert accumulator.reported == 0
    assert len(accumulator.tool_calls()) == 2


# -- run_turn through the real SDKs ------------------------------------------------------------

APIS = ["anthropic", "chat", "responses"]


def first_call_events(api: str) -> tuple[Events, int]:
    """A reply of two ``work`` calls and where to hold it: after the first call is complete and
    before the second is (the index of the first event held back)."""
    if api == "anthropic":
        events = anthropic_events(text=["Working."], tool_uses=CALLS)
        begins = next(
            i
            for i, (_, d) in enumerate(events)
            if d["type"] == "content_block_start" and d["index"] == 2
        )
        return events, begins + 1
    if api == "chat":
        events = chat_chunks(content=["Working."], tool_calls=CALLS)
        begins = next(
            i
            for i, (_, d) in enumerate(events)
            if is_chunk(d)
            and d["choices"][0]["delta"].get("tool_calls", [{}])[0].get("id") == "call_2"
        )
        return events, begins + 1
    events = response_events(text="Working.", tool_calls=RESPONSES_CALLS)
    done = next(
        i
        for i, (_, d) in enumerate(events)
        if d["type"] == "response.output_item.done" and d["item"]["type"] == "function_call"
    )
    return events, done + 1


def final_events(api: str) -> Events:
    if api == "anthropic":
        return anthropic_events(text=["All done."])
    if api == "chat":
        return chat_chunks(content=["All done."])
    return response_events(text="All done.")


def sdk(api: str, server: ScriptedServer) -> Any:
    if api == "anthropic":
        return anthropic.AsyncAnthropic(base_url=server.url, api_key="test", max_retries=0)
    return openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)


def make_model(api: str, client: Any, *, stream: bool = True) -> Any:
    if api == "anthropic":
        return anth.MessagesModel(client, "claude-test", stream=stream)
    if api == "chat":
        return oai.ChatCompletionsModel(client, "m", stream=stream)
    return oai.ResponsesModel(client, "m", stream=stream)


def check_request(api: str, body: Any) -> None:
    {"anthropic": check_messages, "chat": check_chat, "responses": check_responses}[api](body)


def conversation(model: Any) -> list[Any]:
    return list(model.input if isinstance(model, oai.ResponsesModel) else model.messages)


def log_of(session: th.Session) -> list[Any]:
    return [(event.type, event.data, event.source_event_seqs) for event in session.events]


async def run_held(api: str, *, stream_calls: bool) -> tuple[list[Any], th.Session, Any, Any]:
    """One turn over the held two-call reply; returns the events, the log, the result and the
    model. Streamed, the first call runs while the server holds the rest of the reply."""
    events, hold = first_call_events(api)
    session = th.Session()
    seen: list[Any] = []
    running = trio.Event()
    started: list[tuple[str, float]] = []
    with ScriptedServer([Sse(events, hold_before=hold), Sse(final_events(api))]) as server:
        async with sdk(api, server) as client:
            model = make_model(api, client)
            model.add_user("work")
            runtime = work_runtime(started, body=0, running=running, first_waits=True)
            result: list[Any] = []

            async def turn() -> None:
                result.append(
                    await th.run_turn(
                        model, runtime, session, on_event=seen.append, stream_calls=stream_calls
                    )
                )

            async with trio.open_nursery() as nursery:
                nursery.start_soon(turn)
                if stream_calls:
                    with trio.fail_after(10):
                        await running.wait()  # the first call runs; the reply is held
                    assert not any(isinstance(e, th.turn.ModelReplied) for e in seen)
                else:
                    await trio.to_thread.run_sync(server.wait_held)
                    assert not running.is_set()
                server.release()
        for request in server.requests:
            check_request(api, request.body)
    return seen, session, result[0], model


@pytest.mark.parametrize("api", APIS)
async def test_run_turn_starts_a_call_while_the_reply_streams_with_the_list_runs_log(
    api: str,
) -> None:
    seen, session, result, model = await run_held(api, stream_calls=True)
    kinds = [type(e).__name__ for e in seen]
    # The text first ("Working."); call_1 started before the reply ended; call_2 (complete at
    # the finish) around its end.
    assert kinds[:4] == ["ModelRequested", "TextDelta", "StepStarted", "ToolStarted"]
    assert sorted(kinds[4:9]) == sorted(
        ["ToolStarted", "ToolCommitted", "ToolCommitted", "ModelReplied", "StepFinished"]
    )
    assert kinds.index("ModelReplied") < kinds.index("StepFinished")
    assert kinds[9:] == ["ModelRequested", "TextDelta", "ModelReplied"]
    step_started = seen[2]
    assert [[c.id for c in g] for g in step_started.groups] == [["call_1"]]
    assert step_started.complete is False
    assert (result.stop, result.steps, result.text) == ("done", 1, "All done.")
    # The log, and the conversation, are those of the same reply run whole.
    whole_seen, whole_session, whole_result, whole_model = await run_held(api, stream_calls=False)
    assert log_of(session) == log_of(whole_session)
    assert conversation(model) == conversation(whole_model)
    assert [type(e).__name__ for e in whole_seen][:4] == [
        "ModelRequested",
        "TextDelta",  # the text streams whether or not the calls do
        "ModelReplied",
        "StepStarted",
    ]
    assert whole_result.steps == 1


async def test_a_model_without_streaming_or_with_stream_false_is_unchanged() -> None:
    with ScriptedServer(
        [
            Json(chat_completion(tool_calls=[("call_1", "work", '{"n": 1}')])),
            Json(chat_completion(content="ok")),
        ]
    ) as server:
        async with sdk("chat", server) as client:
            model = make_model("chat", client, stream=False)
            assert model.step_streaming is None
            model.add_user("work")
            seen: list[Any] = []
            result = await th.run_turn(
                model, work_runtime([], body=0), th.Session(), on_event=seen.append
            )
    assert result.stop == "done"
    assert [type(e).__name__ for e in seen][:3] == ["ModelRequested", "ModelReplied", "StepStarted"]


@pytest.mark.parametrize("api", APIS)
async def test_the_step_at_the_limit_is_never_streamed(api: str) -> None:
    events, _ = first_call_events(api)
    session = th.Session()
    seen: list[Any] = []
    started: list[tuple[str, float]] = []
    with ScriptedServer([Sse(events)]) as server:
        async with sdk(api, server) as client:
            model = make_model(api, client)
            model.add_user("work")
            result = await th.run_turn(
                model, work_runtime(started), session, max_steps=0, on_event=seen.append
            )
    assert (result.stop, result.steps) == ("step_limit", 0)
    assert started == []
    assert [type(e).__name__ for e in seen] == ["ModelRequested", "TextDelta", "ModelReplied"]
    codes = [e.data.error and e.data.error.code for e in session.events if e.type == "tool/result"]
    assert codes == [th.TOOL_ABORTED_BEFORE_DISPATCH] * 2


def broken_events(api: str) -> Events:
    """Both calls complete, then the stream reports an error (before its end)."""
    if api == "anthropic":
        events = anthropic_events(tool_uses=[*CALLS, ("call_3", "work", ['{"n": 3}'])])
        third = next(
            i
            for i, (_, d) in enumerate(events)
            if d["type"] == "content_block_start" and d["index"] == 2
        )
        error = (
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
        return [*events[: third + 1], error]
    if api == "chat":
        events = chat_chunks(tool_calls=[*CALLS, ("call_3", "work", ['{"n": 3}'])])
        third = next(
            i
            for i, (_, d) in enumerate(events)
            if is_chunk(d)
            and d["choices"][0]["delta"].get("tool_calls", [{}])[0].get("id") == "call_3"
        )
        return [
            *events[: third + 1],
            (None, {"error": {"message": "Overloaded", "type": "server_error"}}),
        ]
    events = response_events(tool_calls=RESPONSES_CALLS)
    done = [i for i, (_, d) in enumerate(events) if d["type"] == "response.output_item.done"]
    error = (
        "error",
        {"type": "error", "code": "server_error", "message": "Overloaded", "sequence_number": 99},
    )
    return [*events[: done[-1] + 1], error]


@pytest.mark.parametrize("api", APIS)
async def test_a_stream_error_after_calls_started_aborts_the_step_then_raises_itself(
    api: str,
) -> None:
    # call_1 is an exclusive body still running, call_2 waits behind it: the error aborts the
    # step (ABORTED, ABORTED_BEFORE_DISPATCH), both are answered, then the error goes on bare.
    session = th.Session()
    started: list[tuple[str, float]] = []
    running = trio.Event()
    events = broken_events(api)
    held = Sse(events, hold_before=len(events) - 1)  # the error waits until call_1 runs
    with ScriptedServer([held, Sse(final_events(api))]) as server:
        async with sdk(api, server) as client:
            model = make_model(api, client)
            model.add_user("work")
            runtime = work_runtime(started, body=math.inf, exclusive=True, running=running)

            async def release_when_running() -> None:
                await running.wait()
                server.release()

            with trio.fail_after(10):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(release_when_running)
                    with pytest.raises(th.providers.ProviderStreamError, match="Overloaded"):
                        await th.run_turn(model, runtime, session)
            results = {
                e.data.message.source.call_id: (e.data.error.code if e.data.error else None)
                for e in session.events
                if e.type == "tool/result"
            }
            assert results == {
                "call_1": th.TOOL_ABORTED,
                "call_2": th.TOOL_ABORTED_BEFORE_DISPATCH,
            }
            assert th.log.check_replay(session).valid
            # The model kept a partial reply with exactly those calls, then their results:
            # the next request is one the API accepts.
            model.add_user("again")
            result = await th.run_turn(model, work_runtime([], body=0), th.Session())
            assert result.text == "All done."
        sent = server.requests[1].body
        check_request(api, sent)
    assert started == [("n=1", started[0][1])]
    assert_answered(api, sent, ["call_1", "call_2"])


def assert_answered(api: str, body: Any, ids: Sequence[str]) -> None:
    """The request holds one call message with exactly ``ids`` and a result for each."""
    if api == "anthropic":
        messages = body["messages"]
        calls = [
            b["id"]
            for m in messages
            if m["role"] == "assistant"
            for b in m["content"]
            if b["type"] == "tool_use"
        ]
        answers = [
            b["tool_use_id"]
            for m in messages
            if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_result"
        ]
    elif api == "chat":
        messages = body["messages"]
        calls = [
            c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", ())
        ]
        answers = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    else:
        items = body["input"]
        calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
        answers = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert calls == list(ids)
    assert answers == list(ids)


@pytest.mark.parametrize("api", APIS)
async def test_an_abort_mid_stream_cancels_the_request_and_answers_the_calls_handed_over(
    api: str,
) -> None:
    events, hold = first_call_events(api)
    session = th.Session()
    running = trio.Event()
    abort = trio.Event()
    with ScriptedServer([Sse(events, hold_before=hold), Sse(final_events(api))]) as server:
        async with sdk(api, server) as client:
            model = make_model(api, client)
            model.add_user("work")
            runtime = work_runtime([], body=math.inf, running=running)
            result: list[Any] = []

            async def turn() -> None:
                result.append(await th.run_turn(model, runtime, session, abort=abort))

            with trio.fail_after(10):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(turn)
                    await running.wait()
                    abort.set()
            (aborted,) = result
            assert (aborted.stop, aborted.steps, aborted.reply) == ("aborted", 1, None)
            assert [(r.call_id, error_code(r.result)) for r in aborted.results] == [
                ("call_1", th.TOOL_ABORTED)
            ]
            server.release()
            model.add_user("again")
            again = await th.run_turn(model, work_runtime([], body=0), th.Session())
            assert again.text == "All done."
        sent = server.requests[1].body
        check_request(api, sent)
    # call_2 was still streaming: never run, never in the conversation.
    assert_answered(api, sent, ["call_1"])
    assert [e.data.call_id for e in session.events if e.type == "tool/call"] == ["call_1"]


@pytest.mark.parametrize("api", ["anthropic", "chat"])
async def test_a_cut_reply_keeps_the_calls_that_ran_before_the_cut(api: str) -> None:
    # call_1 is complete (call_2 began) and runs; the reply is then cut in call_2's arguments.
    if api == "chat":
        events = chat_chunks(tool_calls=[CALLS[0], ("call_2", "work", ['{"n": 2'])])
        events[-2][1]["choices"][0]["finish_reason"] = "length"
    else:
        events = anthropic_events(tool_uses=[CALLS[0], ("call_2", "work", ['{"n": 2'])])
        for _, data in events:
            if data["type"] == "message_delta":
                data["delta"]["stop_reason"] = "max_tokens"
    session = th.Session()
    started: list[tuple[str, float]] = []
    with ScriptedServer([Sse(events), Sse(final_events(api))]) as server:
        async with sdk(api, server) as client:
            model = make_model(api, client)
            model.add_user("work")
            result = await th.run_turn(model, work_runtime(started, body=0), session)
            assert (result.stop, result.finish, result.steps) == ("done", "length", 1)
            assert [c.id for c in result.reply.tool_calls] == ["call_1"]
            assert [c.id for c in result.reply.cut_calls] == ["call_2"]
            assert [r.call_id for r in result.results] == ["call_1"]
            model.add_user("shorter please")
            await th.run_turn(model, work_runtime([], body=0), th.Session())
        sent = server.requests[1].body
        check_request(api, sent)
    assert [name for name, _ in started] == ["n=1"]
    assert_answered(api, sent, ["call_1"])


def whole_looking_last_call_cut(api: str) -> Events:
    """call_1 complete (call_2 begins after it); call_2's arguments look whole (Messages: no
    input delta at all, so ``{}``), and then the reply is cut by the token limit."""
    if api == "anthropic":
        events = anthropic_events(tool_uses=[CALLS[0], ("call_2", "work", [])])
        for _, data in events:
            if data["type"] == "message_delta":
                data["delta"]["stop_reason"] = "max_tokens"
    elif api == "chat":
        events = chat_chunks(tool_calls=[CALLS[0], ("call_2", "work", ['{"n": 2}'])])
        events[-2][1]["choices"][0]["finish_reason"] = "length"
    else:
        events = response_events(tool_calls=RESPONSES_CALLS)
        for _, data in events:
            if data["type"] == "response.output_item.done" and data["item"]["call_id"] == "call_2":
                data["item"] = {**data["item"], "status": "incomplete"}
            if data["type"] == "response.completed":
                data["type"] = "response.incomplete"
                body = data["response"]
                body["status"] = "incomplete"
                body["incomplete_details"] = {"reason": "max_output_tokens"}
                body["output"][1] = {**body["output"][1], "status": "incomplete"}
    return events


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_a_last_call_that_looks_whole_but_was_cut_never_runs(api: str) -> None:
    # The last call is complete only once the reply says it stopped for its calls: a block's
    # end (Messages), whole-looking arguments (all three) are not enough.
    session = th.Session()
    started: list[tuple[str, float]] = []
    with ScriptedServer([Sse(whole_looking_last_call_cut(api)), Sse(final_events(api))]) as server:
        async with sdk(api, server) as client:
            model = make_model(api, client)
            model.add_user("work")
            result = await th.run_turn(model, work_runtime(started, body=0), session)
            assert (result.stop, result.finish, result.steps) == ("done", "length", 1)
            assert [c.id for c in result.reply.tool_calls] == ["call_1"]
            assert [c.id for c in result.reply.cut_calls] == ["call_2"]
            model.add_user("again")
            await th.run_turn(model, work_runtime([], body=0), th.Session())
        sent = server.requests[1].body
        check_request(api, sent)
    assert [name for name, _ in started] == ["n=1"]
    assert [e.data.call_id for e in session.events if e.type == "tool/call"] == ["call_1"]
    assert_answered(api, sent, ["call_1"])


async def test_messages_a_block_without_input_deltas_cut_by_max_tokens_is_never_handed_over(
    autojump_clock: trio.abc.Clock,
) -> None:
    started, accumulator, outcome = await stream_through(
        lambda on_call: anth.MessagesStreamAccumulator(on_call=on_call),
        whole_looking_last_call_cut("anthropic"),
    )
    assert [name for name, _ in started] == ["n=1"]
    assert [r.call_id for r in outcome.results] == ["call_1"]
    assert accumulator.reported == 1


async def test_a_responses_item_done_incomplete_is_never_run() -> None:
    events = response_events(tool_calls=RESPONSES_CALLS)
    for _, data in events:
        if data["type"] == "response.output_item.done" and data["item"]["call_id"] == "call_2":
            data["item"] = {**data["item"], "status": "incomplete", "arguments": '{"n'}
        if data["type"] == "response.completed":
            data["type"] = "response.incomplete"
            body = data["response"]
            body["status"] = "incomplete"
            body["incomplete_details"] = {"reason": "max_output_tokens"}
            body["output"][1] = {**body["output"][1], "status": "incomplete", "arguments": '{"n'}
    started: list[tuple[str, float]] = []
    with ScriptedServer([Sse(events), Sse(final_events("responses"))]) as server:
        async with sdk("responses", server) as client:
            model = make_model("responses", client)
            model.add_user("work")
            result = await th.run_turn(model, work_runtime(started, body=0), th.Session())
            model.add_user("again")
            await th.run_turn(model, work_runtime([], body=0), th.Session())
        sent = server.requests[1].body
        check_request("responses", sent)
    assert (result.stop, result.finish) == ("done", "length")
    assert [name for name, _ in started] == ["n=1"]
    assert_answered("responses", sent, ["call_1"])


def test_the_stored_partial_anthropic_message_drops_unfinished_blocks() -> None:
    accumulator = anth.MessagesStreamAccumulator(on_call=lambda call: None)
    events = anthropic_events(text=["Working."], tool_uses=CALLS)
    thinking = (
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 9,
            "content_block": {"type": "thinking", "thinking": ""},
        },
    )
    for _, data in [*events[:-3], thinking]:
        accumulator.add(data)
    partial = accumulator.message(calls=accumulator.reported, partial=True)
    assert [block["type"] for block in partial["content"]] == ["text", "tool_use", "tool_use"]
    assert json.dumps(partial)  # plain data
