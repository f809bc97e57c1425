"""execute_tool_calls: the upstream scheduler cases (catalogue §7, §8).

Each shared case runs twice through the ``pool_backend`` fixture: on ``FakeRuntime``, whose
timeline exposes the pool's own bookkeeping, and on the real ``ToolRuntime`` with ``define_tool``
tools, so a divergence between the fake and the runtime cannot hide a pool bug. Assertions that
only one runtime can make (the fake's timeline, the real runtime's exact texts) are guarded by
``pool_backend.fake``.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from tests.support.pool_backends import (
    ABORTED,
    BACKENDS,
    BEFORE_DISPATCH,
    PoolBackend,
    assert_paired,
    block,
    call_ids,
    errors,
    result_ids,
    result_wire,
    start,
    texts,
    timeline,
    wire,
    xs,
)
from tests.support.pool_fakes import FakeExec, FakeRuntime, FakeTool, Gates, gated_body, success
from tests.support.runtime_helpers import text_blocks
from trio_harness import (
    DEFAULT_MAX_PARALLEL_TOOL_CALLS,
    HarnessError,
    Session,
    StepOutcome,
    ToolCallBlock,
    ToolExecutionResult,
    execute_tool_calls,
)


@pytest.fixture(params=BACKENDS)
def pool_backend(request: pytest.FixtureRequest) -> PoolBackend:
    """A fresh runtime of each kind: ``fake`` (``FakeRuntime``) and ``real`` (``ToolRuntime``)."""
    return PoolBackend(request.param)


def gated_runtime(parallel: bool = True) -> tuple[FakeRuntime, Gates, list[str]]:
    gates = Gates()
    started: list[str] = []
    runtime = FakeRuntime(FakeTool("x", gated_body(gates, started), parallel=parallel))
    return runtime, gates, started


# ---------------------------------------------------------------------------------------------
# grouping and barriers
# ---------------------------------------------------------------------------------------------


async def test_parallel_safe_siblings_run_concurrently(pool_backend: PoolBackend) -> None:
    # upstream #198
    gates, started = pool_backend.gated()
    session = Session()
    async with trio.open_nursery() as nursery:
        box = await start(nursery, pool_backend.runtime, session, xs(3))
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2", "3"]
        gates.release("3", "2", "1")
    assert box == [StepOutcome(concluded=False, aborted=False)]
    assert result_ids(session) == ["c1", "c2", "c3"]
    assert texts(session) == ["done-1", "done-2", "done-3"]
    assert_paired(session)


async def test_exclusive_call_between_parallel_calls_forms_three_groups(
    pool_backend: PoolBackend,
) -> None:
    # upstream #199
    order: list[str] = []

    async def read(args: Any, ctx: Any) -> str:
        order.append("r-start-" + args["id"])
        await trio.lowlevel.checkpoint()
        order.append("r-end-" + args["id"])
        return "r"

    async def write(args: Any, ctx: Any) -> str:
        order.append("w-" + args["id"])
        return "w"

    pool_backend.add_tool("r", read, parallel=True)
    pool_backend.add_tool("w", write)
    session = Session()
    calls = [block("c1", "r", id="A1"), block("c2", "w", id="A2"), block("c3", "r", id="A3")]
    await execute_tool_calls(pool_backend.runtime, session, calls)
    assert order == ["r-start-A1", "r-end-A1", "w-A2", "r-start-A3", "r-end-A3"]
    assert result_ids(session) == ["c1", "c2", "c3"]


async def test_pending_calls_are_reclassified_after_a_barrier_replaces_their_tool(
    pool_backend: PoolBackend,
) -> None:
    # upstream #200
    gates, started = pool_backend.gated(parallel=True)

    async def replace(args: Any, ctx: Any) -> str:
        pool_backend.add_gated("x", gates, started, parallel=False)
        return "replaced"

    pool_backend.add_tool("replace", replace)
    session = Session()
    calls = [block("c0", "replace", id="0"), block("c1", "x", id="1"), block("c2", "x", id="2")]
    async with trio.open_nursery() as nursery:
        await start(nursery, pool_backend.runtime, session, calls)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1"]
        await gates.release_and_settle("1")
        assert started == ["1", "2"]
        gates.release("2")
    assert result_ids(session) == ["c0", "c1", "c2"]
    if pool_backend.fake:
        assert pool_backend.runtime.max_running == 1


async def test_result_observer_making_the_next_call_exclusive_stops_replenishing(
    pool_backend: PoolBackend,
) -> None:
    # upstream #201
    gates, started = pool_backend.gated()
    replacement: list[str] = []

    def observer(call_id: str) -> None:
        if call_id == "c1":
            pool_backend.add_gated("x", gates, replacement, parallel=False)

    pool_backend.on_result(observer)
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, pool_backend.runtime, session, xs(3), max_parallel_tool_calls=2)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        await gates.release_and_settle("1")
        assert result_ids(session) == ["c1"]
        assert replacement == []
        await gates.release_and_settle("2")
        assert replacement == ["3"]
        gates.release("3")
    assert result_ids(session) == ["c1", "c2", "c3"]
    if pool_backend.fake:
        assert not pool_backend.runtime.exclusive_overlap


async def test_barrier_is_reclassified_again_when_the_registry_changes_back() -> None:
    # Upstream reclassifies on every fill attempt: a call that stopped the filling starts in the
    # same group if it is parallel again when the next dispatch settles.
    runtime, gates, started = gated_runtime()
    flips = {"c1": False, "c2": True}

    def observer(exec: FakeExec, result: ToolExecutionResult) -> None:
        if exec.call_id in flips:
            runtime.tools["x"].parallel = flips[exec.call_id]

    runtime.observers.append(observer)
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, runtime, session, xs(4), max_parallel_tool_calls=3)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2", "3"]
        await gates.release_and_settle("1")
        assert started == ["1", "2", "3"]
        await gates.release_and_settle("2")
        assert started == ["1", "2", "3", "4"]
        assert len(runtime.running) == 2  # c3 and c4 overlap: same parallel group
        gates.release("3", "4")
    assert runtime.classified == ["c1", "c2", "c3", "c4", "c4"]


# ---------------------------------------------------------------------------------------------
# model-order results
# ---------------------------------------------------------------------------------------------


async def test_results_commit_in_model_order_when_a_later_call_settles_first(
    pool_backend: PoolBackend,
) -> None:
    # upstream #202, #203
    gates, _ = pool_backend.gated()
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, pool_backend.runtime, session, xs(2))
        await trio.testing.wait_all_tasks_blocked()
        await gates.release_and_settle("2")
        assert result_ids(session) == []
        gates.release("1")
    assert result_ids(session) == ["c1", "c2"]
    assert [d["message"]["content"][0]["toolCallId"] for d in result_wire(session)] == [
        "c1",
        "c2",
    ]
    assert texts(session) == ["done-1", "done-2"]


# ---------------------------------------------------------------------------------------------
# rolling pool honors the cap
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cap", [0, -1, 1.5, 2.0, True, False, "2"])
async def test_invalid_caps_are_rejected(pool_backend: PoolBackend, cap: Any) -> None:
    # upstream #204, #205 (bool is rejected too: it is not an integer here)
    _, started = pool_backend.gated()
    session = Session()
    with pytest.raises(ValueError, match=r"^max_parallel_tool_calls must be a positive integer$"):
        await execute_tool_calls(pool_backend.runtime, session, xs(2), max_parallel_tool_calls=cap)
    assert session.events == []
    assert started == []


def _recording_tool(pool_backend: PoolBackend) -> list[str]:
    started: list[str] = []

    async def body(args: Any, ctx: Any) -> str:
        started.append(ctx.call_id)
        return "ok"

    pool_backend.add_tool("x", body)
    return started


@pytest.mark.parametrize(
    ("calls", "message"),
    [
        (
            [ToolCallBlock("c1", "x", "{}"), ToolCallBlock(2, "x", "{}")],  # type: ignore[arg-type]
            r"tool_calls\[1\]\.id must be a str, got int",
        ),
        ([ToolCallBlock("c1", None, "{}")], r"tool_calls\[0\]\.name must be a str, got NoneType"),  # type: ignore[arg-type]
        (
            [ToolCallBlock("c1", "x", {"a": 1})],
            r"tool_calls\[0\]\.arguments must be a str, got dict",
        ),  # type: ignore[arg-type]
        ([ToolCallBlock("c1", "x", b"{}")], r"tool_calls\[0\]\.arguments must be a str, got bytes"),  # type: ignore[arg-type]
        (
            [ToolCallBlock("c1", "x", "{}"), {"id": "c2", "name": "x", "arguments": "{}"}],
            r"tool_calls\[1\] must be a ToolCallBlock \(id, name, arguments\), got dict",
        ),
    ],
)
async def test_mistyped_call_blocks_are_rejected_before_anything_is_logged(
    pool_backend: PoolBackend, calls: list[Any], message: str
) -> None:
    started = _recording_tool(pool_backend)
    session = Session()
    with pytest.raises(TypeError, match=f"^execute_tool_calls: {message}$"):
        await execute_tool_calls(pool_backend.runtime, session, calls)
    assert session.events == []
    assert started == []


@pytest.mark.parametrize(
    ("option", "value", "name"),
    [
        ("turn", True, "bool"),
        ("turn", "1", "str"),
        ("step", 1.0, "float"),
        ("step", None, "NoneType"),
    ],
)
async def test_mistyped_turn_and_step_are_rejected_before_anything_is_logged(
    pool_backend: PoolBackend, option: str, value: Any, name: str
) -> None:
    started = _recording_tool(pool_backend)
    session = Session()
    with pytest.raises(
        TypeError, match=f"^execute_tool_calls: {option} must be an int, got {name}$"
    ):
        await execute_tool_calls(pool_backend.runtime, session, xs(2), **{option: value})
    assert session.events == []
    assert started == []


class _Text(str):
    pass


class _Number(int):
    pass


async def test_str_and_int_subclasses_are_logged_as_plain_values(pool_backend: PoolBackend) -> None:
    started = _recording_tool(pool_backend)
    session = Session()
    calls = [ToolCallBlock(_Text("c1"), _Text("x"), _Text('{"id":"1"}'))]
    await execute_tool_calls(pool_backend.runtime, session, calls, turn=_Number(3), step=_Number(4))
    assert started == ["c1"]
    assert type(started[0]) is str
    call = session.events[0].data
    assert [type(v) for v in (call.turn, call.step, call.call_id, call.name, call.arguments)] == [
        int,
        int,
        str,
        str,
        str,
    ]
    assert (call.turn, call.step, call.call_id) == (3, 4, "c1")
    assert Session.from_jsonl(session.to_jsonl()).events == session.events


async def test_default_cap_is_ten(pool_backend: PoolBackend) -> None:
    # upstream #206
    assert DEFAULT_MAX_PARALLEL_TOOL_CALLS == 10
    gates, started = pool_backend.gated()
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, pool_backend.runtime, session, xs(12))
        await trio.testing.wait_all_tasks_blocked()
        assert started == [str(i) for i in range(1, 11)]
        gates.release(*[str(i) for i in range(1, 13)])
    assert result_ids(session) == [f"c{i}" for i in range(1, 13)]
    if pool_backend.fake:
        assert pool_backend.runtime.max_running == 10


async def test_a_none_cap_is_not_given_and_means_the_default(pool_backend: PoolBackend) -> None:
    # Upstream resolves its config as ``value ?? DEFAULT_MAX_PARALLEL_TOOL_CALLS``: null is absent.
    gates, started = pool_backend.gated()
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, pool_backend.runtime, session, xs(12), max_parallel_tool_calls=None)
        await trio.testing.wait_all_tasks_blocked()
        assert started == [str(i) for i in range(1, 11)]
        gates.release(*[str(i) for i in range(1, 13)])
    assert result_ids(session) == [f"c{i}" for i in range(1, 13)]


async def test_starts_at_most_the_cap_and_replenishes_as_calls_settle(
    pool_backend: PoolBackend,
) -> None:
    # upstream #207
    gates, started = pool_backend.gated()
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, pool_backend.runtime, session, xs(4), max_parallel_tool_calls=2)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        await gates.release_and_settle("1")
        assert started == ["1", "2", "3"]
        assert timeline(session)[:4] == [
            "tool/call:c1",
            "tool/call:c2",
            "tool/result:c1",
            "tool/call:c3",
        ]
        gates.release("4", "3", "2")
    assert result_ids(session) == ["c1", "c2", "c3", "c4"]
    assert texts(session) == ["done-1", "done-2", "done-3", "done-4"]
    if pool_backend.fake:
        assert pool_backend.runtime.max_running == 2


async def test_cap_of_one_is_fully_serial(pool_backend: PoolBackend) -> None:
    # upstream #208, #209 (the per-agent config is the caller's: the cap is an argument here)
    gates, started = pool_backend.gated()
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, pool_backend.runtime, session, xs(3), max_parallel_tool_calls=1)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1"]
        await gates.release_and_settle("1")
        assert started == ["1", "2"]
        gates.release("2", "3")
    assert result_ids(session) == ["c1", "c2", "c3"]
    if pool_backend.fake:
        assert pool_backend.runtime.max_running == 1


# ---------------------------------------------------------------------------------------------
# ordered middleware and additional contexts
# ---------------------------------------------------------------------------------------------


async def test_pre_and_post_execute_observe_model_call_order(pool_backend: PoolBackend) -> None:
    # upstream #210
    gates, _ = pool_backend.gated()
    pre_order: list[str] = []
    post_order: list[str] = []

    async def pre(call_id: str) -> None:
        pre_order.append(call_id)

    pool_backend.on_pre(pre)
    pool_backend.on_post(post_order)
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, pool_backend.runtime, session, xs(3))
        await trio.testing.wait_all_tasks_blocked()
        for key in ("3", "2", "1"):
            await gates.release_and_settle(key)
    assert pre_order == ["c1", "c2", "c3"]
    assert post_order == ["c1", "c2", "c3"]
    if pool_backend.fake:
        assert pool_backend.runtime.events("prepare") == ["c1", "c2", "c3"]
        assert pool_backend.runtime.events("post") == ["c1", "c2", "c3"]


async def test_additional_contexts_are_accepted_in_model_order(pool_backend: PoolBackend) -> None:
    # upstream #211, #223: each context reaches accept_context right after its own tool/result
    gates, _ = pool_backend.gated()
    pool_backend.on_post(add_context=True)
    session = Session()
    accepted: list[tuple[str, list[str]]] = []
    async with trio.open_nursery() as nursery:
        await start(
            nursery,
            pool_backend.runtime,
            session,
            xs(2),
            max_parallel_tool_calls=2,
            accept_context=lambda c: accepted.append(
                (pool_backend.context_text(c), result_ids(session))
            ),
        )
        await trio.testing.wait_all_tasks_blocked()
        await gates.release_and_settle("2")
        assert accepted == []
        gates.release("1")
    assert accepted == [("ctx-c1", ["c1"]), ("ctx-c2", ["c1", "c2"])]


async def test_pre_execute_denials_and_errors_are_ordered_without_dispatch(
    pool_backend: PoolBackend,
) -> None:
    # upstream #212, #225: a denial is a post-result (post runs), a throw a final-result (no post)
    gates, started = pool_backend.gated()
    post_seen: list[str] = []

    async def pre(call_id: str) -> str | None:
        if call_id == "c2":
            return "blocked by policy"
        if call_id == "c3":
            raise RuntimeError("pre exploded")
        return None

    pool_backend.on_pre(pre)
    pool_backend.on_post(post_seen)
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, pool_backend.runtime, session, xs(3))
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1"]
        gates.release("1")
    assert post_seen == ["c1", "c2"]
    assert result_ids(session) == ["c1", "c2", "c3"]
    assert texts(session) == ["done-1", "Error: blocked by policy", "Error: pre exploded"]
    assert [d["message"]["content"][0]["isError"] for d in result_wire(session)] == [
        False,
        True,
        True,
    ]
    assert all("error" not in d for d in result_wire(session))  # plain errors carry no info
    if pool_backend.fake:
        assert pool_backend.runtime.events("post") == ["c1", "c2"]


# ---------------------------------------------------------------------------------------------
# abort handling
# ---------------------------------------------------------------------------------------------


async def test_already_aborted_step_starts_nothing_and_balances_the_log(
    pool_backend: PoolBackend,
) -> None:
    # upstream #213, #232
    _, started = pool_backend.gated()
    observed: list[str] = []
    pool_backend.on_result(observed.append)
    abort = trio.Event()
    abort.set()
    session = Session()
    outcome = await execute_tool_calls(pool_backend.runtime, session, xs(2), abort=abort)
    assert outcome == StepOutcome(concluded=False, aborted=True)
    assert started == []
    assert observed == []  # synthetic pairs bypass tools/result
    if pool_backend.fake:
        assert pool_backend.runtime.log == []  # no prepare: synthetic pairs bypass the runtime
        assert pool_backend.runtime.classified == []
    assert timeline(session) == ["tool/call:c1", "tool/result:c1", "tool/call:c2", "tool/result:c2"]
    for data in result_wire(session):
        assert data["error"] == BEFORE_DISPATCH
        assert data["message"]["content"][0]["isError"] is True
        assert data["message"]["content"][0]["content"] == text_blocks(
            "Error: tool call aborted before dispatch"
        )
    assert session.events[1].to_json()["data"] == {
        "turn": 0,
        "step": 0,
        "message": {
            "role": "user",
            "source": {"kind": "tool", "callId": "c1"},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "content": [
                        {"type": "text", "text": "Error: tool call aborted before dispatch"}
                    ],
                    "isError": True,
                }
            ],
        },
        "error": {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"},
    }
    assert_paired(session)


async def test_abort_during_ordered_pre_execute_skips_dispatch_and_stops_starting(
    pool_backend: PoolBackend,
) -> None:
    # upstream #214
    _, started = pool_backend.gated()
    abort = trio.Event()
    pre_seen: list[str] = []

    async def pre(call_id: str) -> None:
        pre_seen.append(call_id)
        abort.set()

    pool_backend.on_pre(pre)
    session = Session()
    outcome = await execute_tool_calls(pool_backend.runtime, session, xs(2), abort=abort)
    assert outcome.aborted
    assert started == []
    assert pre_seen == ["c1"]
    assert call_ids(session) == ["c1", "c2"]
    assert errors(session) == [BEFORE_DISPATCH, BEFORE_DISPATCH]
    if pool_backend.fake:
        assert pool_backend.runtime.events("prepare") == ["c1"]


async def test_abort_stops_replenishing_commits_started_results_and_hands_contexts_on(
    pool_backend: PoolBackend,
) -> None:
    # upstream #215 (the inbox parking is the agent loop's; here: contexts reach accept_context)
    gates, started = pool_backend.gated()
    post_seen: list[str] = []
    pool_backend.on_post(post_seen, add_context=True)
    abort = trio.Event()
    session = Session()
    accepted: list[str] = []
    async with trio.open_nursery() as nursery:
        box = await start(
            nursery,
            pool_backend.runtime,
            session,
            xs(4),
            abort=abort,
            max_parallel_tool_calls=2,
            accept_context=lambda c: accepted.append(pool_backend.context_text(c)),
        )
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        abort.set()
        gates.release("1", "2")
    assert box[0].aborted
    assert started == ["1", "2"]
    assert call_ids(session) == ["c1", "c2", "c3", "c4"]
    assert result_ids(session) == ["c1", "c2", "c3", "c4"]
    assert errors(session) == [ABORTED, ABORTED, BEFORE_DISPATCH, BEFORE_DISPATCH]
    assert accepted == ["ctx-c1", "ctx-c2"]
    assert post_seen == ["c1", "c2"]


async def test_real_runtime_abort_after_an_invalid_arguments_call() -> None:
    # upstream #215 (shape), #219: a validation failure, then an abort with two calls in flight
    pool_backend = PoolBackend("real")
    _, started = pool_backend.gated()
    abort = trio.Event()
    session = Session()
    calls = [ToolCallBlock("c0", "x", "not json"), *xs(4)]
    async with trio.open_nursery() as nursery:
        box = await start(
            nursery, pool_backend.runtime, session, calls, abort=abort, max_parallel_tool_calls=2
        )
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        abort.set()
    assert box[0].aborted
    first = result_wire(session)[0]
    assert first["message"]["content"][0]["isError"] is True
    assert texts(session)[0] == 'Error: invalid arguments: "arguments" must be an object'
    assert errors(session)[1:] == [ABORTED, ABORTED, BEFORE_DISPATCH, BEFORE_DISPATCH]
    assert session.events[0].data.arguments == "not json"


async def test_exclusive_barrier_does_not_run_after_a_parallel_group_aborts(
    pool_backend: PoolBackend,
) -> None:
    # upstream #216
    gates = Gates()
    started: list[str] = []
    ran: list[str] = []

    async def exclusive(args: Any, ctx: Any) -> str:
        ran.append(ctx.call_id)
        return "x"

    pool_backend.add_gated("p", gates, started, parallel=True)
    pool_backend.add_tool("x", exclusive)
    abort = trio.Event()
    session = Session()
    calls = [block("c1", "p", id="1"), block("c2", "p", id="2"), block("c3", "x", id="3")]
    async with trio.open_nursery() as nursery:
        await start(
            nursery, pool_backend.runtime, session, calls, abort=abort, max_parallel_tool_calls=2
        )
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        abort.set()
    assert ran == []
    assert call_ids(session) == ["c1", "c2", "c3"]
    last = result_wire(session)[-1]
    assert last["message"]["source"]["callId"] == "c3"
    assert last["message"]["content"][0]["isError"] is True
    assert last["error"] == BEFORE_DISPATCH


async def test_abort_cancels_running_bodies_at_once(autojump_clock: trio.abc.Clock) -> None:
    # The abort relay cancels every in-flight body's scope: no body outlives the abort.
    async def slow(args: Any, ctx: FakeExec) -> str:
        await trio.sleep(100)
        return "slow"

    runtime = FakeRuntime(FakeTool("s", slow, parallel=True))
    abort = trio.Event()
    session = Session()
    async with trio.open_nursery() as nursery:
        box = await start(
            nursery,
            runtime,
            session,
            [block(f"c{i}", "s") for i in range(5)],
            abort=abort,
            max_parallel_tool_calls=3,
        )
        await trio.sleep(7)
        abort.set()
    assert trio.current_time() == 7
    assert box[0].aborted
    assert errors(session) == [ABORTED] * 3 + [BEFORE_DISPATCH] * 2


# ---------------------------------------------------------------------------------------------
# failure quiescence
# ---------------------------------------------------------------------------------------------


async def test_first_scheduler_failure_is_raised_after_started_bodies_drain(
    pool_backend: PoolBackend,
) -> None:
    # upstream #217, with a wrapper assigned to the runtime's ``scheduler``
    gates, started = pool_backend.gated()
    runtime = pool_backend.runtime
    real = runtime.scheduler
    c3_gate = trio.Event()
    c1_reject = trio.Event()

    class Wrapped:
        async def prepare(self, input: Any) -> Any:
            if input.call_id == "c3":
                await c3_gate.wait()
            return await real.prepare(input)

        async def dispatch(self, exec: Any) -> Any:
            if exec.call_id == "c1":
                await c1_reject.wait()
                raise RuntimeError("scheduler exploded")
            await real.dispatch(exec)
            raise RuntimeError("sibling failed while draining")

        async def finalize(self, exec: Any, result: Any) -> Any:
            return await real.finalize(exec, result)

        def finish(self, exec: Any, result: Any) -> Any:
            return real.finish(exec, result)

    runtime.scheduler = Wrapped()
    session = Session()
    raised: list[BaseException] = []

    async def runner() -> None:
        try:
            await execute_tool_calls(runtime, session, xs(3), max_parallel_tool_calls=3)
        except RuntimeError as exc:
            raised.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(runner)
        await trio.testing.wait_all_tasks_blocked()
        c1_reject.set()
        await trio.testing.wait_all_tasks_blocked()
        c3_gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert raised == []  # c2's body is still running
        assert started == ["2"]
        gates.release("2")
    assert [str(e) for e in raised] == ["scheduler exploded"]
    assert type(raised[0]) is RuntimeError
    assert started == ["2"]  # c3 was prepared but abandoned
    assert call_ids(session) == ["c1", "c2", "c3"]
    assert result_wire(session) == []  # nothing fabricated


# ---------------------------------------------------------------------------------------------
# §8: events of single calls
# ---------------------------------------------------------------------------------------------


async def test_non_json_arguments_pass_through_as_the_raw_string() -> None:
    # upstream #219: the pool hands the raw string on (the fake runtime's body sees it)
    seen: list[Any] = []

    async def body(args: Any, ctx: FakeExec) -> str:
        seen.append(args)
        return "ok"

    runtime = FakeRuntime(FakeTool("t", body))
    session = Session()
    await execute_tool_calls(runtime, session, [ToolCallBlock("c1", "t", "not json")])
    assert session.events[0].data.arguments == "not json"
    assert seen == ["not json"]
    assert result_ids(session) == ["c1"]


async def test_real_non_json_arguments_fail_validation_with_the_exact_message() -> None:
    # upstream #219: the real runtime's validation rejects the raw string
    pool_backend = PoolBackend("real")
    pool_backend.add_tool("t")
    session = Session()
    await execute_tool_calls(pool_backend.runtime, session, [ToolCallBlock("c1", "t", "not json")])
    assert wire(session)[0]["data"]["arguments"] == "not json"
    assert texts(session) == ['Error: invalid arguments: "arguments" must be an object']
    assert errors(session) == [{"name": "ToolArgsError", "code": "INVALID_ARGS"}]


async def test_empty_arguments_become_an_empty_object(pool_backend: PoolBackend) -> None:
    # upstream #220
    seen: list[Any] = []

    async def body(args: Any, ctx: Any) -> str:
        seen.append(args)
        return "ran"

    pool_backend.add_tool("t", body)
    session = Session()
    await execute_tool_calls(pool_backend.runtime, session, [ToolCallBlock("c1", "t", "")])
    assert seen == [{}]
    assert texts(session) == ["ran"]
    assert wire(session)[0]["data"]["arguments"] == ""


async def test_harness_error_info_is_forwarded_onto_the_result_event(
    pool_backend: PoolBackend,
) -> None:
    # upstream #221
    async def body(args: Any, ctx: Any) -> str:
        raise HarnessError("exploded", "BOOM")

    pool_backend.add_tool("t", body)
    session = Session()
    await execute_tool_calls(pool_backend.runtime, session, [block("c1", "t")])
    event = wire(session)[1]
    assert event["data"]["message"]["content"][0]["isError"] is True
    assert event["data"]["error"] == {"name": "HarnessError", "code": "BOOM"}
    assert event["sourceEventSeqs"] == [0]
    assert texts(session) == ["Error: exploded"]


async def test_plain_error_result_has_no_error_key(pool_backend: PoolBackend) -> None:
    async def body(args: Any, ctx: Any) -> str:
        raise ValueError("plain")

    pool_backend.add_tool("t", body)
    session = Session()
    await execute_tool_calls(pool_backend.runtime, session, [block("c1", "t")])
    assert "error" not in wire(session)[1]["data"]


async def test_presentation_meta_is_recorded_on_the_result_event(
    pool_backend: PoolBackend,
) -> None:
    # upstream #222
    pool_backend.add_tool("t", meta={"presentation": "diff-card"})
    session = Session()
    await execute_tool_calls(pool_backend.runtime, session, [block("c1", "t")])
    assert result_wire(session)[0]["meta"] == {"presentation": "diff-card"}


async def test_multiple_deferred_contexts_follow_the_outer_result_in_order(
    pool_backend: PoolBackend,
) -> None:
    # upstream #224
    async def composite(args: Any, ctx: Any) -> str:
        pool_backend.defer(ctx, "a")
        pool_backend.defer(ctx, "b")
        return "ok"

    pool_backend.add_tool("t", composite)
    session = Session()
    accepted: list[tuple[str, int]] = []
    await execute_tool_calls(
        pool_backend.runtime,
        session,
        [block("c1", "t")],
        accept_context=lambda c: accepted.append(
            (pool_backend.context_text(c), len(session.events))
        ),
    )
    assert accepted == [("a", 2), ("b", 2)]


async def test_post_context_finalized_after_the_body_aborts_the_step_is_kept(
    pool_backend: PoolBackend,
) -> None:
    # upstream #227: the body aborts the step then returns; post-execute still adds its context
    abort = trio.Event()

    async def aborter(args: Any, ctx: Any) -> str:
        abort.set()
        return "returned anyway"

    pool_backend.add_tool("t", aborter)
    pool_backend.on_post(add_context=True)
    session = Session()
    accepted: list[str] = []
    outcome = await execute_tool_calls(
        pool_backend.runtime,
        session,
        [block("c1", "t")],
        abort=abort,
        accept_context=lambda c: accepted.append(pool_backend.context_text(c)),
    )
    assert outcome.aborted
    assert [e["type"] for e in wire(session)] == ["tool/call", "tool/result"]
    assert errors(session) == [ABORTED]
    assert accepted == ["ctx-c1"]  # accepted exactly once


async def test_context_finalized_after_a_body_aborts_the_step_is_still_accepted(
    pool_backend: PoolBackend,
) -> None:
    # upstream #227, #228: the post context of the call before the aborter and of the aborter
    abort = trio.Event()

    async def first(args: Any, ctx: Any) -> str:
        return "first"

    async def aborter(args: Any, ctx: Any) -> str:
        abort.set()
        return "aborter"

    pool_backend.add_tool("first", first)
    pool_backend.add_tool("aborter", aborter)
    post_seen: list[str] = []
    pool_backend.on_post(post_seen, add_context=True)
    session = Session()
    accepted: list[str] = []
    outcome = await execute_tool_calls(
        pool_backend.runtime,
        session,
        [block("c1", "first"), block("c2", "aborter"), block("c3", "first")],
        abort=abort,
        accept_context=lambda c: accepted.append(pool_backend.context_text(c)),
    )
    assert outcome.aborted
    assert [e["type"] for e in wire(session)] == ["tool/call", "tool/result"] * 3
    assert texts(session)[0] == "first"
    assert errors(session)[1:] == [ABORTED, BEFORE_DISPATCH]
    assert post_seen == ["c1", "c2"]
    assert accepted == ["ctx-c1", "ctx-c2"]


async def test_result_keeps_the_model_call_id_when_post_execute_replaces_content(
    pool_backend: PoolBackend,
) -> None:
    # upstream #231
    pool_backend.add_tool("echo")
    pool_backend.on_post(content="rewritten")
    session = Session()
    await execute_tool_calls(pool_backend.runtime, session, [block("c1", "echo", text="hi")])
    data = result_wire(session)[0]
    assert data["message"]["source"] == {"kind": "tool", "callId": "c1"}
    assert data["message"]["content"][0]["toolCallId"] == "c1"
    assert texts(session) == ["rewritten"]


async def test_round_trips_a_tool_result(pool_backend: PoolBackend) -> None:
    # upstream #233
    async def echo(args: Any, ctx: Any) -> str:
        return "echo: " + str(args["text"])

    pool_backend.add_tool("echo", echo)
    session = Session()
    await execute_tool_calls(
        pool_backend.runtime, session, [block("c1", "echo", text="ping")], turn=3, step=2
    )
    data = result_wire(session)[0]
    assert data["turn"] == 3
    assert data["step"] == 2
    assert data["message"]["content"] == [
        {
            "type": "tool-result",
            "toolCallId": "c1",
            "content": [{"type": "text", "text": "echo: ping"}],
            "isError": False,
        }
    ]
    assert Session.from_jsonl(session.to_jsonl()).events == session.events


async def test_a_concluding_result_concludes_the_step_without_stopping_later_calls(
    pool_backend: PoolBackend,
) -> None:
    # upstream #234 (the single model request is the agent loop's; the step reports concluded)
    async def concluding(args: Any, ctx: Any) -> str:
        ctx.conclude_turn()
        return "done"

    pool_backend.add_tool("end", concluding)
    pool_backend.add_tool("echo")
    session = Session()
    outcome = await execute_tool_calls(
        pool_backend.runtime, session, [block("c1", "end"), block("c2", "echo", text="after")]
    )
    assert outcome == StepOutcome(concluded=True, aborted=False)
    assert result_ids(session) == ["c1", "c2"]
    assert texts(session) == ["done", "ok"]


async def test_no_calls_is_an_empty_step(pool_backend: PoolBackend) -> None:
    session = Session()
    assert await execute_tool_calls(pool_backend.runtime, session, []) == StepOutcome()
    assert session.events == []


async def test_agent_and_abort_reach_every_input() -> None:
    seen: list[Any] = []

    async def body(args: Any, ctx: FakeExec) -> str:
        seen.append((ctx.input.agent, ctx.input.abort, ctx.input.parent))
        return "ok"

    runtime = FakeRuntime(FakeTool("t", body, parallel=True))
    abort = trio.Event()
    agent = object()
    await execute_tool_calls(runtime, Session(), xs(2, "t"), abort=abort, agent=agent)
    assert seen == [(agent, abort, None)] * 2


async def test_success_helper_shape() -> None:
    assert success("v").content == ({"type": "text", "text": "v"},)
