"""An ``on_event`` callback that raises: one rule for every event type, list and streamed steps.

The rule (docs/porting.md, "An on_event callback that raises"): the callback's exception is the
app's bug, not a tool's result. It is not called again; the step it happened in runs as it
would have (every body runs, every call is answered with its own result, logged and handed to
the model); then ``run_turn`` raises that exception, bare, before asking the model again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

import trio_harness as th
from trio_harness.lowlevel import check_log

from .scripted_model import ScriptedModel, StreamedReply, StreamingModel
from .tools import file_tools, runtime_with

IN_STEP = [th.turn.ModelReplied, th.turn.StepStarted, th.turn.ToolStarted, th.turn.ToolCommitted]
EVERY = [th.turn.ModelRequested, *IN_STEP, th.turn.StepFinished]


class UiBroke(Exception):
    pass


class Raising:
    """An ``on_event`` that records every event and raises at the first one of type ``kind``."""

    def __init__(self, kind: type) -> None:
        self.kind = kind
        self.seen: list[object] = []

    def __call__(self, event: th.turn.TurnEvent) -> None:
        self.seen.append(event)
        if isinstance(event, self.kind):
            raise UiBroke(type(event).__name__)


def list_model() -> ScriptedModel:
    calls = [("c1", "read", '{"path":"a"}'), ("c2", "write", '{"path":"b","text":"B"}')]
    return ScriptedModel([("", calls), ("done", [])])


def streaming_model() -> StreamingModel:
    step: StreamedReply = (
        "",
        [(1, ("c1", "read", '{"path":"a"}')), (2, ("c2", "write", '{"path":"b","text":"B"}'))],
        3,
        None,
    )
    return StreamingModel([step, ("done", [], 1, None)])


def answered(session: th.Session) -> list[tuple[str, str]]:
    results = [
        e.to_json()["data"]["message"]["content"][0]
        for e in session.events
        if e.type == "tool/result"
    ]
    return [(block["toolCallId"], "error" if block["isError"] else "ok") for block in results]


@pytest.mark.parametrize("streamed", [False, True], ids=["list", "streamed"])
@pytest.mark.parametrize("kind", EVERY, ids=lambda kind: kind.__name__)
async def test_a_raising_callback_is_raised_after_its_step_and_never_a_tool_result(
    autojump_clock: trio.testing.MockClock, kind: type, streamed: bool
) -> None:
    files = {"a": "A"}
    model: ScriptedModel | StreamingModel = streaming_model() if streamed else list_model()
    session = th.Session()
    on_event = Raising(kind)
    with pytest.raises(UiBroke, match=kind.__name__):
        await th.run_turn(model, runtime_with(files), session, on_event=on_event)
    # Called up to the event that raised, never after it.
    assert isinstance(on_event.seen[-1], kind)
    assert [e for e in on_event.seen if isinstance(e, kind)] == [on_event.seen[-1]]
    if kind is th.turn.ModelRequested:
        # Nothing ran: the model was never asked.
        assert session.events == []
        assert (model.tools_seen if isinstance(model, ScriptedModel) else model.conversation) == []
        return
    # The step ran as it would have: both bodies, each answered with its own result, logged and
    # handed to the model; the model was not asked again.
    assert files == {"a": "A", "b": "B"}
    assert answered(session) == [("c1", "ok"), ("c2", "ok")]
    assert [[(r.call_id, r.result.is_error) for r in s] for s in model.results_seen] == [
        [("c1", False), ("c2", False)]
    ]
    assert model.results_seen[0][0].result.content[0]["text"] == "A"
    assert len(model.replies) == 1
    assert check_log([event.to_json() for event in session.events]) == []


async def test_a_raising_callback_on_a_reply_without_calls_is_raised_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    model = ScriptedModel([("done", [])])
    with pytest.raises(UiBroke):
        await th.run_turn(
            model, runtime_with({}), th.Session(), on_event=Raising(th.turn.ModelReplied)
        )


async def test_an_abort_after_a_raising_callback_ends_the_step_then_the_callback_error_goes_on(
    autojump_clock: trio.testing.MockClock,
) -> None:
    files = {"a": "A"}
    abort = trio.Event()
    model = ScriptedModel([("", [("c1", "write", '{"path":"b","text":"B"}')]), ("done", [])])
    session = th.Session()

    async def abort_at_1() -> None:
        await trio.sleep(1)
        abort.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(abort_at_1)
        with pytest.raises(UiBroke):
            await th.run_turn(
                model,
                runtime_with(files, write_delay=5),
                session,
                abort=abort,
                on_event=Raising(th.turn.ToolStarted),
            )
    assert trio.current_time() == 1
    assert [r.result.error.info.code for r in model.results_seen[0]] == ["ABORTED"]
    assert check_log([event.to_json() for event in session.events]) == []


@pytest.mark.parametrize("kind", IN_STEP, ids=lambda kind: kind.__name__)
async def test_an_agent_logs_the_step_and_ends_the_turn_as_error(
    autojump_clock: trio.testing.MockClock, tmp_path: Path, kind: type
) -> None:
    files = {"a": "A"}
    log = tmp_path / "agent.jsonl"

    class Model(ScriptedModel):
        def __init__(self) -> None:
            super().__init__(list_model().replies)
            self.messages: list[object] = []

        def add_user(self, text: str) -> None:
            self.messages.append({"role": "user", "content": text})

    async with th.open_agent(log, Model(), file_tools(files)) as agent:
        with pytest.raises(UiBroke):
            await agent.run("go", on_event=Raising(kind))
    assert files["b"] == "B"
    events = th.log.load_session_log(log).events
    assert check_log([event.to_json() for event in events]) == []
    ends = [e.data for e in events if e.type == th.agent.TURN_END_EVENT]
    assert ends == [{"turn": 0, "stop": "error", "steps": 0}]
    resumed = th.agent.open_agent_log(log)
    try:
        # Nothing to repair: the step's calls and their hand-over are all in the log.
        assert (resumed.recovery.repaired, resumed.recovery.pending) == ((), None)
    finally:
        resumed.close()


@pytest.mark.parametrize("kind", [th.turn.ModelReplied, th.turn.StepStarted, th.turn.ToolStarted])
async def test_a_keyboard_interrupt_from_the_callback_still_answers_the_reply(
    autojump_clock: trio.testing.MockClock, kind: type
) -> None:
    # A BaseException is not kept for later: it goes on at once, as a Ctrl-C would, and the
    # reply's calls are answered first (found by the attack: ModelReplied left them open).
    def on_event(event: th.turn.TurnEvent) -> None:
        if isinstance(event, kind):
            raise KeyboardInterrupt

    model = list_model()
    session = th.Session()
    with pytest.raises(KeyboardInterrupt):
        await th.run_turn(model, runtime_with({"a": "A"}), session, on_event=on_event)
    assert [[r.call_id for r in step] for step in model.results_seen] == [["c1", "c2"]]
    assert [c for c, _ in answered(session)] == ["c1", "c2"]
    assert check_log([event.to_json() for event in session.events]) == []


@pytest.mark.parametrize("streamed", [False, True], ids=["list", "streamed"])
async def test_tool_committed_comes_after_the_log_has_the_result(
    autojump_clock: trio.testing.MockClock, streamed: bool
) -> None:
    # Issue 32 item 12: an event that says *committed* is emitted once the log holds the
    # call's tool/result (the pool tells its tracer ``committed`` after the recorder wrote it).
    files = {"a": "A"}
    model: ScriptedModel | StreamingModel = streaming_model() if streamed else list_model()
    session = th.Session()
    logged_at_commit: list[tuple[str, bool]] = []

    def on_event(event: th.turn.TurnEvent) -> None:
        if isinstance(event, th.turn.ToolCommitted):
            ids = [call_id for call_id, _ in answered(session)]
            logged_at_commit.append((event.call_id, event.call_id in ids))

    await th.run_turn(model, runtime_with(files), session, on_event=on_event)
    assert logged_at_commit == [("c1", True), ("c2", True)]
