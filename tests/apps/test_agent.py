"""``open_agent`` / ``Agent``: the whole conversation in the durable log, resumed from any prefix
of it as a conversation a strict provider accepts (in-process, virtual time, the real
``ChatCompletionsModel`` over a fake client that enforces the real API's rules)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
import trio.testing

import trio_harness as th
from trio_harness.lowlevel import check_log
from trio_harness.providers import openai as oai

from .server import chat_chunks
from .strict_server import Policy, conversation_problems
from .tools import runtime_with

POLICY = Policy(
    first=[
        ("read", '{"path": "a"}'),
        ("list", "{}"),
        ("write", '{"path": "x", "text": "X"}'),
        ("read", '{"path": "x"}'),
        ("read", '{"path": "missing"}'),
    ],
    second=[("write", '{"path": "y", "text": "Y"}')],
    answer="Wrote x and y.",
)


class Rejected(Exception):
    """What the real API answers 400 for."""


@attrs.define(eq=False)
class StrictClient:
    """Stands for ``openai.AsyncOpenAI``: ``chat.completions.create`` checks the conversation as
    the real API does, then answers with ``policy`` (after ``delay`` virtual seconds). With
    ``stream``, the model streams (``with_streaming_response``): the reply comes as SSE chunks,
    one every ``tick`` virtual seconds, each call's arguments in two fragments, so its calls
    run while it streams."""

    policy: Policy
    delay: float = 0.5
    requests: list[Any] = attrs.field(factory=list)
    stream: bool = False
    tick: float = 0.1

    @property
    def chat(self) -> StrictClient:
        return self

    @property
    def completions(self) -> StrictClient:
        return self

    @property
    def with_streaming_response(self) -> StrictClient:
        return self

    def _check(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = json.loads(json.dumps(request["messages"]))  # the wire
        self.requests.append(messages)
        problems = conversation_problems(messages)
        if problems:
            raise Rejected(problems)
        return messages

    def create(self, **request: Any) -> Any:
        if request.pop("stream", False):
            return self._streamed(request)
        return self._create(request)

    async def _create(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = self._check(request)
        await trio.sleep(self.delay)
        return self.policy.reply(messages)

    @asynccontextmanager
    async def _streamed(self, request: dict[str, Any]) -> AsyncIterator[ChunkLines]:
        body = self.policy.reply(self._check(request))
        message = body["choices"][0]["message"]
        calls = [
            (call["id"], call["function"]["name"], _halves(call["function"]["arguments"]))
            for call in message.get("tool_calls", ())
        ]
        content = [message["content"]] if message.get("content") else []
        yield ChunkLines(chat_chunks(content=content, tool_calls=calls), self.tick)


def _halves(text: str) -> list[str]:
    return [text[: len(text) // 2], text[len(text) // 2 :]]


@attrs.define(eq=False)
class ChunkLines:
    """A streamed HTTP response as ``sse_events`` reads it: one ``data:`` line every ``tick``."""

    events: list[tuple[str | None, Any]]
    tick: float
    closed: bool = False
    _lines: list[str] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        for _, data in self.events:
            self._lines += ["data: " + (data if isinstance(data, str) else json.dumps(data)), ""]

    def aiter_lines(self) -> ChunkLines:
        return self

    def __aiter__(self) -> ChunkLines:
        return self

    async def __anext__(self) -> str:
        if self.closed or not self._lines:
            raise StopAsyncIteration
        line = self._lines.pop(0)
        if line:
            await trio.sleep(self.tick)
        return line

    async def aclose(self) -> None:
        self.closed = True


def model(client: StrictClient) -> oai.ChatCompletionsModel:
    return oai.ChatCompletionsModel(client, "m", system="You keep files.", stream=client.stream)


async def run_scenario(
    path: Path, client: StrictClient, *, abort_at: float | None = None
) -> th.agent.Agent:
    """Two turns; with ``abort_at``, the first is aborted then (mid-write: skipped pairs)."""
    runtime = runtime_with({"a": "A"}, write_delay=1)
    async with th.open_agent(path, model(client), runtime) as agent:
        abort = trio.Event()
        async with trio.open_nursery() as nursery:
            if abort_at is not None:
                nursery.start_soon(_set_after, abort, abort_at)
            first = await agent.run("write x", abort=abort)
            nursery.cancel_scope.cancel()
        if abort_at is None:
            assert (first.stop, first.steps, first.text) == ("done", 2, "Wrote x and y.")
        else:
            assert first.stop == "aborted"
        second = await agent.run("and again")
        assert second.stop == "done"
    return agent


def assert_valid_log(path: Path) -> None:
    loaded = th.log.load_session_log(path)
    assert th.log.check_replay(loaded.events).valid
    assert check_log([event.to_json() for event in loaded.events]) == []


async def test_the_log_holds_the_conversation_and_resumes_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    path = tmp_path / "agent.jsonl"
    client = StrictClient(POLICY)
    agent = await run_scenario(path, client)
    messages = agent.model.messages
    assert [m["role"] for m in messages[:9]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "tool",
        "tool",
        "assistant",
    ]
    loaded = th.log.load_session_log(path)
    kinds = [e.type for e in loaded.events]
    assert kinds.count(th.timeline.TRACE_EVENT) == 4  # every step of both turns
    assert kinds.count(th.agent.TURN_END_EVENT) == 2
    assert_valid_log(path)
    # Reopened, the model gets the whole conversation back, and the turn numbers go on.
    again = StrictClient(POLICY)
    async with th.open_agent(path, model(again), runtime_with({})) as resumed:
        assert resumed.model.messages == messages
        assert resumed.next_turn == 2
        assert str(resumed.recovery) == f"{path}: resumed {len(messages)} messages"
        result = await resumed.run("once more")
    assert result.stop == "done"
    assert again.requests[0][: len(messages)] == messages
    # Each step can be drawn.
    trace = resumed.trace(2, 0)
    assert trace is not None
    position = len(messages) + 1  # the reply after the resumed messages and the new prompt
    assert [call_id for call_id, _ in trace.calls] == [f"call_{position}_{i}" for i in range(5)]
    th.timeline.render_timeline_svg(trace)


def test_a_fresh_log_starts_with_the_models_system_prompt(tmp_path: Path) -> None:
    async def main() -> list[Any]:
        async with th.open_agent(
            tmp_path / "a.jsonl", model(StrictClient(POLICY)), th.ToolRuntime()
        ) as agent:
            assert str(agent.recovery) == f"{tmp_path / 'a.jsonl'}: new conversation"
        return [e.data for e in th.log.load_session_log(tmp_path / "a.jsonl").events]

    assert trio.run(main) == [
        {
            "kind": "input",
            "turn": 0,
            "step": None,
            "messages": [{"role": "system", "content": "You keep files."}],
        }
    ]


def cuts(data: bytes) -> list[int]:
    """Every line boundary of a log, and the middle of every line (a crash mid-write)."""
    out = []
    start = 0
    while start < len(data):
        end = data.index(b"\n", start) + 1
        out += [start, (start + end) // 2]
        start = end
    return [*out, len(data)]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("abort_at", [None, 1.0])
async def test_resuming_after_a_crash_at_any_instant_gives_an_accepted_conversation(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, abort_at: float | None, stream: bool
) -> None:
    full = tmp_path / "full.jsonl"
    if stream and abort_at is not None:
        # Streamed, the write starts at 1.1 s (when the next call begins): abort it mid-body,
        # with the read behind it received and the last call still streaming (never run).
        abort_at = 1.5
    await run_scenario(full, StrictClient(POLICY, stream=stream), abort_at=abort_at)
    if abort_at is not None:
        assert b'"code":"ABORTED_BEFORE_DISPATCH"' in full.read_bytes()
    if stream:
        # Streamed: the first calls ran before the reply was recorded, so the cuts below
        # include crashes between a step's tool events and its reply's record.
        types = [(e.type, e.data) for e in th.log.load_session_log(full).events]
        first_call = next(i for i, (kind, _) in enumerate(types) if kind == "tool/call")
        first_reply = next(
            i
            for i, (kind, data) in enumerate(types)
            if kind == th.agent.CONVERSATION_EVENT and data["kind"] == "reply"
        )
        assert first_call < first_reply
    data = full.read_bytes()
    instants = cuts(data)
    assert len(instants) > 70
    reports: set[str] = set()
    for offset in instants:
        path = tmp_path / f"cut-{offset}.jsonl"
        path.write_bytes(data[:offset])
        client = StrictClient(POLICY)
        async with th.open_agent(path, model(client), runtime_with({"a": "A"})) as agent:
            reports.add(str(agent.recovery).split(": ", 1)[1].split(";")[0][:7])
            result = await agent.run("carry on")  # Rejected if the conversation is not valid
        assert result.stop == "done", offset
        assert conversation_problems(client.requests[0]) == []
        assert_valid_log(path)
        path.unlink()
    assert reports == {"new con", "resumed"}


async def test_calls_waiting_behind_a_barrier_are_answered_as_never_started(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # Cut while the exclusive write runs: the read after it never started, so it left no
    # tool/call; the recorded reply still names it.
    full = tmp_path / "full.jsonl"
    await run_scenario(full, StrictClient(POLICY))
    lines = full.read_bytes().splitlines(keepends=True)
    write_started = next(
        i for i, line in enumerate(lines) if b'"type":"tool/call"' in line and b"call_2_2" in line
    )
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"".join(lines[: write_started + 1]))
    client = StrictClient(POLICY)
    async with th.open_agent(path, model(client), runtime_with({})) as agent:
        assert str(agent.recovery) == (
            f"{path}: resumed 3 messages; answered 3 calls a crash left open "
            "(1 ABORTED, 2 ABORTED_BEFORE_DISPATCH)"
        )
        tool_messages = [m for m in agent.model.messages if m["role"] == "tool"]
        assert [(m["tool_call_id"], m["content"]) for m in tool_messages] == [
            ("call_2_0", "A"),
            ("call_2_1", '["a"]'),
            ("call_2_2", "Error: tool call aborted"),
            ("call_2_3", "Error: tool call aborted before dispatch"),
            ("call_2_4", "Error: tool call aborted before dispatch"),
        ]
    assert_valid_log(path)


def test_the_recovery_line_counts_one_message_and_one_call_in_the_singular() -> None:
    session = th.Session()
    th.agent.settle_step(session, 0, 0, [th.ToolCallBlock("c1", "read", "{}")])
    recovery = th.agent.Recovery("agent.jsonl", 1, None, tuple(session.events), None)
    assert str(recovery) == (
        "agent.jsonl: resumed 1 message; answered 1 call a crash left open "
        "(1 ABORTED_BEFORE_DISPATCH)"
    )


async def test_a_step_limit_is_recorded_and_resumes(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    path = tmp_path / "agent.jsonl"
    client = StrictClient(POLICY)
    async with th.open_agent(path, model(client), runtime_with({}), max_steps=1) as agent:
        result = await agent.run("go")
    assert (result.stop, result.steps) == ("step_limit", 1)
    assert_valid_log(path)
    again = StrictClient(POLICY)
    async with th.open_agent(path, model(again), runtime_with({})) as agent:
        assert agent.recovery.repaired == ()
        assert (await agent.run("go on")).stop == "done"


@pytest.mark.parametrize("stream", [False, True])
async def test_an_abort_and_an_outside_cancellation_leave_a_resumable_log(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, stream: bool
) -> None:
    path = tmp_path / "agent.jsonl"
    async with th.open_agent(
        path, model(StrictClient(POLICY, stream=stream)), runtime_with({}, write_delay=5)
    ) as agent:
        abort = trio.Event()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_set_after, abort, 2)
            result = await agent.run("go", abort=abort)
        assert result.stop == "aborted"
        with trio.move_on_after(2):
            await agent.run("again")
    assert_valid_log(path)
    ends = [
        e.data for e in th.log.load_session_log(path).events if e.type == th.agent.TURN_END_EVENT
    ]
    assert [end["stop"] for end in ends] == ["aborted", "interrupted"]
    client = StrictClient(POLICY)
    async with th.open_agent(path, model(client), runtime_with({})) as agent:
        assert agent.recovery.repaired == ()
        assert (await agent.run("go on")).stop == "done"


async def first_turn_times(path: Path, **options: Any) -> list[tuple[str, str | None, float]]:
    """The first scenario turn through a streaming model (a chunk every 0.25 s: exact virtual
    times): ``(event, call id, time)`` of its first step's reply and body starts."""
    times: list[tuple[str, str | None, float]] = []

    def on_event(event: th.turn.TurnEvent) -> None:
        if event.step != 0:
            return
        if isinstance(event, th.turn.ModelReplied):
            times.append(("replied", None, trio.current_time()))
        elif isinstance(event, th.turn.ToolStarted):
            times.append(("started", event.call_id, event.time))

    client = StrictClient(POLICY, stream=True, tick=0.25)
    runtime = runtime_with({"a": "A"}, write_delay=1)
    async with th.open_agent(path, model(client), runtime, **options) as agent:
        result = await agent.run("write x", on_event=on_event)
    assert (result.stop, result.steps, result.text) == ("done", 2, "Wrote x and y.")
    return times


async def assert_resumes(path: Path) -> None:
    assert_valid_log(path)
    async with th.open_agent(path, model(StrictClient(POLICY)), runtime_with({})) as agent:
        assert agent.recovery.repaired == ()
        assert agent.next_turn == 1
        assert (await agent.run("go on")).stop == "done"


def record_order(path: Path) -> list[str]:
    """The first step's log: ``"call"`` per ``tool/call``, ``"reply"`` for its reply's record."""
    out = []
    for event in th.log.load_session_log(path).events:
        if event.type == "tool/call" and event.data.step == 0:
            out.append("call")
        elif event.type == th.agent.CONVERSATION_EVENT and event.data["kind"] == "reply":
            out.append("reply")
    return out[:6]


async def test_an_agent_with_stream_calls_false_starts_no_tool_before_the_reply_ends(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    path = tmp_path / "agent.jsonl"
    times = await first_turn_times(path, stream_calls=False)
    # The reply (18 chunks) ends at 4.5 s; then the reads and the write, the rest behind it.
    assert times == [
        ("replied", None, 4.5),
        ("started", "call_2_0", 4.5),
        ("started", "call_2_1", 4.5),
        ("started", "call_2_2", 4.5),
        ("started", "call_2_3", 5.5),
        ("started", "call_2_4", 5.5),
    ]
    assert record_order(path) == ["reply", "call", "call", "call", "call", "call"]
    await assert_resumes(path)


async def test_an_agent_streams_calls_by_default(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    path = tmp_path / "agent.jsonl"
    times = await first_turn_times(path)
    # Each call starts when the next one begins (the last at the finish chunk), before the
    # reply ends at 4.5 s; the write runs 1 s, the read of x waits behind it.
    assert times == [
        ("started", "call_2_0", 1.25),
        ("started", "call_2_1", 2.0),
        ("started", "call_2_2", 2.75),
        ("started", "call_2_3", 3.75),
        ("started", "call_2_4", 4.25),
        ("replied", None, 4.5),
    ]
    assert record_order(path) == ["call", "call", "call", "call", "call", "reply"]
    await assert_resumes(path)


async def _set_after(event: trio.Event, seconds: float) -> None:
    await trio.sleep(seconds)
    event.set()


async def test_a_model_error_comes_out_as_itself_and_the_log_stays_valid(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    class Broken(StrictClient):
        async def create(self, **request: Any) -> dict[str, Any]:
            raise Rejected(["model overloaded"])

    path = tmp_path / "agent.jsonl"
    async with th.open_agent(path, model(Broken(POLICY)), runtime_with({})) as agent:
        with pytest.raises(Rejected, match="model overloaded"):
            await agent.run("go")
    ends = [
        e.data for e in th.log.load_session_log(path).events if e.type == th.agent.TURN_END_EVENT
    ]
    assert ends == [{"turn": 0, "stop": "error", "steps": 0}]
    assert_valid_log(path)


@attrs.define(eq=False)
class ScriptedClient:
    """Stands for an SDK client: ``<api>.create(**request)`` answers the next body."""

    bodies: list[Any]
    requests: list[Any] = attrs.field(factory=list)

    def __getattr__(self, name: str) -> ScriptedClient:
        if name in ("messages", "responses"):
            return self
        raise AttributeError(name)

    async def create(self, **request: Any) -> Any:
        self.requests.append(json.loads(json.dumps(request)))
        return self.bodies.pop(0)


@pytest.mark.parametrize("api", ["anthropic", "responses"])
async def test_other_providers_conversations_are_recorded_and_resumed(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, api: str
) -> None:
    from trio_harness.providers import anthropic as anth

    from .server import anthropic_message, response

    if api == "anthropic":
        bodies = [
            anthropic_message(tool_uses=[("t1", "read", {"path": "a"}), ("t2", "list", {})]),
            anthropic_message(text="done"),
            anthropic_message(text="again"),
        ]

        def make(client: ScriptedClient) -> Any:
            return anth.MessagesModel(client, "claude", system="Keep files.")

        def conversation(model: Any) -> list[Any]:
            return list(model.messages)
    else:
        bodies = [
            response(tool_calls=[("t1", "read", '{"path": "a"}'), ("t2", "list", "{}")]),
            response(text="done"),
            response(text="again"),
        ]

        def make(client: ScriptedClient) -> Any:
            return oai.ResponsesModel(client, "m")

        def conversation(model: Any) -> list[Any]:
            return list(model.input)

    path = tmp_path / "agent.jsonl"
    client = ScriptedClient(bodies)
    async with th.open_agent(path, make(client), runtime_with({"a": "A"})) as agent:
        assert (await agent.run("read a")).text == "done"
        recorded = conversation(agent.model)
    assert_valid_log(path)
    again = ScriptedClient(client.bodies)
    async with th.open_agent(path, make(again), runtime_with({})) as agent:
        assert conversation(agent.model) == recorded
        assert (await agent.run("again?")).text == "again"
    sent = again.requests[0]["messages" if api == "anthropic" else "input"]
    assert sent[: len(recorded)] == recorded


async def test_one_turn_at_a_time(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    path = tmp_path / "a.jsonl"
    async with (
        th.open_agent(path, model(StrictClient(POLICY)), []) as agent,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(agent.run, "first")
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(trio.BusyResourceError, match="another turn of this agent"):
            await agent.run("second")
        nursery.cancel_scope.cancel()
    assert_valid_log(tmp_path / "a.jsonl")
