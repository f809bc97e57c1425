"""Two tool calls with one id in one reply (issue 32): models and compatible servers send ``""``
or fixed ids, and the pool runs both. Every ready model hands both over, streamed or not, and a
step cut short answers each with its own result (calls are matched by id *and* place)."""

from __future__ import annotations

import math
from typing import Any

import pytest
import trio
import trio.testing

import trio_harness as th

from .scripted_model import ScriptedModel
from .server import (
    Json,
    ScriptedServer,
    Sse,
    anthropic_events,
    anthropic_message,
    chat_chunks,
    chat_completion,
    response,
    response_events,
)
from .test_stream_calls import final_events, make_model, sdk, work_runtime

SAME = "call_same"


def reply_events(api: str) -> list[tuple[str | None, Any]]:
    if api == "anthropic":
        return anthropic_events(
            tool_uses=[(SAME, "work", ['{"n": 1}']), (SAME, "work", ['{"n": 2}'])]
        )
    if api == "chat":
        return chat_chunks(tool_calls=[(SAME, "work", ['{"n": 1}']), (SAME, "work", ['{"n": 2}'])])
    return response_events(tool_calls=[(SAME, "work", '{"n": 1}'), (SAME, "work", '{"n": 2}')])


def json_final(api: str) -> Any:
    if api == "anthropic":
        return Json(anthropic_message(text="All done."))
    if api == "chat":
        return Json(chat_completion(content="All done."))
    return Json(response(text="All done."))


def json_reply(api: str) -> Any:
    calls = [(SAME, "work", '{"n": 1}'), (SAME, "work", '{"n": 2}')]
    if api == "anthropic":
        return Json(
            anthropic_message(tool_uses=[(SAME, "work", {"n": 1}), (SAME, "work", {"n": 2})])
        )
    if api == "chat":
        return Json(chat_completion(tool_calls=calls))
    return Json(response(tool_calls=calls))


def sent_outputs(api: str, body: Any) -> list[str]:
    """The texts of the results in the next request, in order."""
    if api == "anthropic":
        return [
            block["content"][0]["text"] if isinstance(block["content"], list) else block["content"]
            for message in body["messages"]
            if message["role"] == "user" and isinstance(message["content"], list)
            for block in message["content"]
            if block["type"] == "tool_result"
        ]
    if api == "chat":
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]
    return [i["output"] for i in body["input"] if i.get("type") == "function_call_output"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_two_calls_with_one_id_both_run_and_are_both_answered(api: str, stream: bool) -> None:
    started: list[tuple[str, float]] = []
    session = th.Session()
    script = (
        [Sse(reply_events(api)), Sse(final_events(api))]
        if stream
        else [json_reply(api), json_final(api)]
    )
    with ScriptedServer(script) as server:
        async with sdk(api, server) as client:
            model = make_model(api, client, stream=stream)
            model.add_user("work")
            with trio.fail_after(10):
                result = await th.run_turn(model, work_runtime(started, body=0), session)
        # (Not run through the SDK-type checks: they pair each result with an unanswered call
        # by id, as a strict API would; whether a provider takes repeated ids is its own call.)
        sent = server.requests[1].body
    assert result.stop == "done"
    assert sorted(name for name, _ in started) == ["n=1", "n=2"]
    assert [e.data.call_id for e in session.events if e.type == "tool/call"] == [SAME, SAME]
    outputs = sent_outputs(api, sent)
    assert [o if isinstance(o, str) else o[0]["text"] for o in outputs] == ["did 1", "did 2"]


async def test_a_step_cut_short_answers_each_same_id_call_with_its_own_result(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # "x" n=1 finishes at t=1; "x" n=2 runs until the cancellation at t=2: it was started, so it
    # is ABORTED, and the model is told so, not "did 1" a second time.
    @th.tool(parallel=True)
    async def work(n: int) -> str:
        """Work."""
        await trio.sleep(1 if n == 1 else math.inf)
        return f"did {n}"

    runtime = th.ToolRuntime()
    runtime.register(work)
    model = ScriptedModel([("", [("x", "work", '{"n": 1}'), ("x", "work", '{"n": 2}')])])
    session = th.Session()
    with trio.move_on_after(2):
        await th.run_turn(model, runtime, session)
    (results,) = model.results_seen
    assert [r.result.content[0]["text"] for r in results] == ["did 1", "Error: tool call aborted"]
    calls = [e.seq for e in session.events if e.type == "tool/call"]
    cited = [e.source_event_seqs for e in session.events if e.type == "tool/result"]
    assert sorted(cited) == [(calls[0],), (calls[1],)]
