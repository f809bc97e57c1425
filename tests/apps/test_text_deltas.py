"""Streamed text reaches the app from every ready model (issue 29): each piece is a ``TextDelta``
turn event (and the model's own ``on_text``), through the real SDKs against a scripted server on
127.0.0.1; ``StepStarted`` of a streamed step says it knows only the calls so far; and nothing is
built for an event nobody listens to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anthropic
import openai
import pytest
import trio
import trio.testing

import trio_harness as th
from trio_harness.providers import anthropic as anth
from trio_harness.providers import openai as oai

from .scripted_model import ScriptedModel, StreamingModel
from .sdk_types import check_chat, check_messages, check_responses
from .server import ScriptedServer, Sse, anthropic_events, chat_chunks, response_events

APIS = ["chat", "responses", "anthropic"]
FIRST = ["Let me ", "look ", "it up."]
FINAL = ["All ", "done."]
CALLS = [("call_1", "work", '{"n": 1}'), ("call_2", "work", '{"n": 2}')]


def split_text_delta(events: list[tuple[str | None, Any]], pieces: Sequence[str]) -> list[Any]:
    """The Responses stream with its one ``response.output_text.delta`` sent as ``pieces``."""
    out: list[tuple[str | None, Any]] = []
    for name, data in events:
        if name == "response.output_text.delta":
            assert data["delta"] == "".join(pieces)
            out += [(name, {**data, "delta": piece}) for piece in pieces]
        else:
            out.append((name, data))
    for number, (_, data) in enumerate(out):
        data["sequence_number"] = number
    return out


def script(api: str) -> list[Sse]:
    """Two streamed replies: text then two calls; then text alone."""
    if api == "chat":
        pieces = [(c, n, [a[:4], a[4:]]) for c, n, a in CALLS]
        return [
            Sse(chat_chunks(content=FIRST, tool_calls=pieces)),
            Sse(chat_chunks(content=FINAL)),
        ]
    if api == "responses":
        first = response_events(text="".join(FIRST), tool_calls=CALLS)
        final = response_events(text="".join(FINAL))
        return [Sse(split_text_delta(first, FIRST)), Sse(split_text_delta(final, FINAL))]
    uses = [(c, n, [a[:4], a[4:]]) for c, n, a in CALLS]
    return [Sse(anthropic_events(text=FIRST, tool_uses=uses)), Sse(anthropic_events(text=FINAL))]


def make_model(api: str, server: ScriptedServer, stream: bool, on_text: Any) -> tuple[Any, Any]:
    if api == "anthropic":
        client: Any = anthropic.AsyncAnthropic(base_url=server.url, api_key="t", max_retries=0)
        model: Any = anth.MessagesModel(client, "claude-test", stream=stream, on_text=on_text)
    else:
        client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="t", max_retries=0)
        kind = oai.ChatCompletionsModel if api == "chat" else oai.ResponsesModel
        model = kind(client, "m", stream=stream, on_text=on_text)
    model.add_user("work")
    return client, model


def work_runtime() -> th.ToolRuntime:
    @th.tool(parallel=True)
    async def work(n: int) -> str:
        """Work on ``n``."""
        return f"did {n}"

    runtime = th.ToolRuntime()
    runtime.register(work)
    return runtime


async def run_over_sdk(
    api: str, *, stream_calls: bool = True
) -> tuple[list[th.turn.TurnEvent], list[str], th.TurnResult]:
    seen: list[th.turn.TurnEvent] = []
    own: list[str] = []
    with ScriptedServer(script(api)) as server:
        client, model = make_model(api, server, True, own.append)
        async with client:
            result = await th.run_turn(
                model,
                work_runtime(),
                th.Session(),
                on_event=seen.append,
                stream_calls=stream_calls,
            )
        for request in server.requests:
            {"anthropic": check_messages, "chat": check_chat, "responses": check_responses}[api](
                request.body
            )
            assert request.body["stream"] is True
    return seen, own, result


@pytest.mark.parametrize("stream_calls", [True, False], ids=["stream_calls", "whole_reply"])
@pytest.mark.parametrize("api", APIS)
async def test_streamed_text_reaches_the_app_as_text_delta_events(
    api: str, stream_calls: bool
) -> None:
    seen, own, result = await run_over_sdk(api, stream_calls=stream_calls)
    deltas = [(e.step, e.text) for e in seen if isinstance(e, th.turn.TextDelta)]
    assert deltas == [(0, piece) for piece in FIRST] + [(1, piece) for piece in FINAL]
    assert own == FIRST + FINAL  # the model's own callback gets the same pieces
    assert (result.stop, result.steps, result.text) == ("done", 1, "All done.")
    # Each reply's pieces come before its ModelReplied, and joined they are its text.
    for step in (0, 1):
        replied = next(
            i for i, e in enumerate(seen) if isinstance(e, th.turn.ModelReplied) and e.step == step
        )
        before = [e for e in seen[:replied] if isinstance(e, th.turn.TextDelta) and e.step == step]
        reply = seen[replied]
        assert isinstance(reply, th.turn.ModelReplied)
        assert "".join(e.text for e in before) == reply.reply.text
        assert not any(isinstance(e, th.turn.TextDelta) and e.step == step for e in seen[replied:])


@pytest.mark.parametrize("api", APIS)
async def test_step_started_of_a_streamed_step_says_it_knows_the_calls_so_far(api: str) -> None:
    seen, _, _ = await run_over_sdk(api)
    started = [e for e in seen if isinstance(e, th.turn.StepStarted)]
    assert [(e.step, e.complete) for e in started] == [(0, False)]
    assert [[c.id for c in group] for group in started[0].groups] == [["call_1"]]
    # The reply, once complete, holds every call.
    replied = next(e for e in seen if isinstance(e, th.turn.ModelReplied) and e.step == 0)
    assert [c.id for c in replied.reply.tool_calls] == ["call_1", "call_2"]


@pytest.mark.parametrize("api", APIS)
async def test_step_started_of_a_whole_reply_lists_every_call(api: str) -> None:
    seen, _, _ = await run_over_sdk(api, stream_calls=False)
    started = [e for e in seen if isinstance(e, th.turn.StepStarted)]
    assert [(e.step, e.complete) for e in started] == [(0, True)]
    assert [[c.id for c in group] for group in started[0].groups] == [["call_1", "call_2"]]


@pytest.mark.parametrize("api", APIS)
async def test_a_model_not_streaming_reports_no_text_delta(api: str) -> None:
    from .server import Json, anthropic_message, chat_completion, response

    bodies = {
        "chat": chat_completion(content="All done."),
        "responses": response(text="All done."),
        "anthropic": anthropic_message(text="All done."),
    }
    seen: list[th.turn.TurnEvent] = []
    own: list[str] = []
    with ScriptedServer([Json(bodies[api])]) as server:
        client, model = make_model(api, server, False, own.append)
        async with client:
            result = await th.run_turn(model, work_runtime(), th.Session(), on_event=seen.append)
    assert result.text == "All done."
    assert [type(e).__name__ for e in seen] == ["ModelRequested", "ModelReplied"]
    assert own == []


class TextModel(ScriptedModel):
    """A scripted model that streams each reply's text in two pieces through ``report_text``."""

    async def step(self, tools: Sequence[dict[str, Any]]) -> th.ModelStep:
        text = self.replies[0][0]
        th.turn.report_text(text[:3])
        await trio.sleep(1)
        th.turn.report_text("")  # nothing to report: no event
        th.turn.report_text(text[3:])
        return await super().step(tools)


async def test_any_model_streams_its_text_with_report_text(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[th.turn.TurnEvent] = []
    model = TextModel([("Working.", [("c1", "work", '{"n": 1}')]), ("Done now.", [])])
    result = await th.run_turn(model, work_runtime(), th.Session(), on_event=seen.append)
    assert result.text == "Done now."
    assert [(type(e).__name__, e.step) for e in seen] == [
        ("ModelRequested", 0),
        ("TextDelta", 0),
        ("TextDelta", 0),
        ("ModelReplied", 0),
        ("StepStarted", 0),
        ("ToolStarted", 0),
        ("ToolCommitted", 0),
        ("StepFinished", 0),
        ("ModelRequested", 1),
        ("TextDelta", 1),
        ("TextDelta", 1),
        ("ModelReplied", 1),
    ]
    texts = [e.text for e in seen if isinstance(e, th.turn.TextDelta)]
    assert texts == ["Wor", "king.", "Don", "e now."]


async def test_report_text_outside_a_turn_or_without_a_listener_does_nothing(
    autojump_clock: trio.testing.MockClock,
) -> None:
    th.turn.report_text("nobody asked")  # no turn: no error, nowhere to go
    model = TextModel([("Done now.", [])])
    result = await th.run_turn(model, work_runtime(), th.Session())
    assert result.text == "Done now."


async def test_a_tool_body_never_reports_into_the_turn_that_runs_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The sink is set around the model's request only: text a tool body reports (say, a nested
    # agent's model without a turn of its own) is not the outer reply's text.
    @th.tool
    async def chatty() -> str:
        """Reports text from a tool body."""
        th.turn.report_text("from the tool")
        return "ok"

    runtime = th.ToolRuntime()
    runtime.register(chatty)
    seen: list[th.turn.TurnEvent] = []
    for streams in (False, True):
        model = StreamingModel(
            [("", [(0.5, ("c1", "chatty", "{}"))], 1.0, None), ("done", [], 0.5, None)],
            streams=streams,
        )
        await th.run_turn(model, runtime, th.Session(), on_event=seen.append)
    assert [e for e in seen if isinstance(e, th.turn.TextDelta)] == []


class CountingRuntime(th.ToolRuntime):
    """A ``ToolRuntime`` counting how often each call is classified."""

    def __init__(self) -> None:
        super().__init__()
        self.classified: list[str] = []

    def execution_mode(self, input: Any, /) -> Any:
        self.classified.append(input.call_id)
        return super().execution_mode(input)


def counting_runtime() -> CountingRuntime:
    @th.tool(parallel=True)
    async def work(n: int) -> str:
        """Work on ``n``."""
        return f"did {n}"

    runtime = CountingRuntime()
    runtime.register(work)
    return runtime


@pytest.mark.parametrize("streams", [False, True], ids=["whole_reply", "streamed"])
async def test_without_on_event_the_step_started_groups_are_never_computed(
    autojump_clock: trio.testing.MockClock, streams: bool
) -> None:
    # plan_groups classifies the calls (execution_mode) for StepStarted only: the pool's own
    # classification is one per call; a listener adds StepStarted's for a whole reply. A
    # streamed step's StepStarted holds its first call alone: one group, nothing classified.
    def model() -> StreamingModel:
        calls = [(0.5, ("c1", "work", '{"n": 1}')), (1.0, ("c2", "work", '{"n": 2}'))]
        return StreamingModel([("", calls, 1.5, None), ("done", [], 0.5, None)], streams=streams)

    quiet = counting_runtime()
    await th.run_turn(model(), quiet, th.Session())
    assert quiet.classified == ["c1", "c2"]

    heard = counting_runtime()
    await th.run_turn(model(), heard, th.Session(), on_event=lambda event: None)
    planned = [] if streams else ["c1", "c2"]
    assert sorted(heard.classified) == sorted(["c1", "c2", *planned])
