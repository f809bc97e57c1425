"""My own Trio pool, written from the docs: each body is started with ``await nursery.start``.

Same contract as ``trio_harness.execute_tool_calls`` (list steps only). The driver (the
caller's task) classifies, prepares, commits and logs, in model order; bodies run in dispatch
tasks holding a ``trio.CapacityLimiter`` token; a memory channel carries settled slots (and the
abort) back to the driver. The scheduler handles the abort of a body itself (its dispatch cuts
the body short, its finalize turns a late success into ``ABORTED``), so the pool only stops
starting and records synthetic pairs.
"""

from __future__ import annotations

import math

import trio

import trio_harness as th
from trio_harness.log import ToolCallData, ToolResultData
from trio_harness.lowlevel import validate_cap


class _NoTracer:
    def begin(self, calls, cap):
        pass

    def phase(self, name, index, detail):
        pass


async def execute_tool_calls(
    runtime,
    session,
    tool_calls,
    *,
    turn=0,
    step=0,
    abort=None,
    max_parallel_tool_calls=10,
    accept_context=None,
    agent=None,
    tracer=None,
    reclassify_after_settle=True,
):
    cap = validate_cap(10 if max_parallel_tool_calls is None else max_parallel_tool_calls)
    blocks = list(tool_calls)
    for b in blocks:
        if not all(isinstance(v, str) for v in (b.id, b.name, b.arguments)):
            raise TypeError("a call's id, name and arguments must be str")
    abort = abort if abort is not None else trio.Event()
    tr = tracer if tracer is not None else _NoTracer()
    scheduler = runtime.scheduler
    n = len(blocks)
    inputs = [
        th.ToolExecutionInput(b.id, b.name, th.parse_arguments(b.arguments), abort, agent=agent)
        for b in blocks
    ]
    tr.begin(inputs, cap)
    send, receive = trio.open_memory_channel(math.inf)
    limiter = trio.CapacityLimiter(cap)
    call_seq: dict[int, int] = {}
    slots: dict[int, tuple] = {}  # index -> (exec, kind, result) once ready to commit
    results: list[th.StepResult] = []
    st = {
        "started": 0,
        "committed": 0,
        "in_flight": 0,
        "group": None,
        "failure": None,
        "mode": None,
        "gopen": -1,
        "saw_abort": False,
        "concluded": False,
    }

    def fail(error):
        if st["failure"] is None:
            st["failure"] = error

    def take(msg):
        kind, i, payload = msg
        if kind == "abort":
            return
        st["in_flight"] -= 1
        if reclassify_after_settle:
            st["mode"] = None  # a settle may be followed by a commit: reclassify the next call
        if kind == "failed":
            tr.phase("settled", i, payload)
            fail(payload)
        else:
            tr.phase("settled", i, None)
            slots[i] = (slots[i][0], payload.kind, payload.result)

    async def body_task(i, exec, *, task_status=trio.TASK_STATUS_IGNORED):
        async with limiter:
            task_status.started()
            tr.phase("body-started", i, None)
            try:
                outcome = await scheduler.dispatch(exec)
            except Exception as error:  # a scheduler failure, deferred
                msg = ("failed", i, error)
            else:
                msg = ("settled", i, outcome)
        send.send_nowait(msg)

    async def commit(i):
        exec, kind, result = slots.pop(i)
        try:
            if kind == "post-result":
                result = await scheduler.finalize(exec, result)
            else:
                result = scheduler.finish(exec, result)
            session.append(
                "tool/result",
                ToolResultData.from_result(turn, step, blocks[i].id, result),
                source_event_seqs=[call_seq[i]],
            )
            tr.phase("committed", i, result)
            for context in result.additional_contexts:
                if accept_context is not None:
                    accept_context(context)
        except Exception as error:
            fail(error)
            return
        st["committed"] += 1
        st["concluded"] = st["concluded"] or result.concludes_turn
        results.append(th.StepResult(blocks[i].id, blocks[i].name, result))
        st["mode"] = None
        if st["group"] == "exclusive":
            close_group()

    def close_group():
        tr.phase("group-close", st["gopen"], None)
        st["group"] = None

    async def start(nursery, i):
        st["started"] += 1
        st["mode"] = None
        call_seq[i] = session.append(
            "tool/call", ToolCallData(turn, step, blocks[i].id, blocks[i].name, blocks[i].arguments)
        ).seq
        tr.phase("started", i, None)
        try:
            prep = await scheduler.prepare(inputs[i])
        except Exception as error:
            fail(error)
            return
        tr.phase("prepared", i, prep.kind)
        slots[i] = (prep.exec, prep.kind, prep.result)
        if prep.kind == "dispatch":
            st["in_flight"] += 1
            await nursery.start(body_task, i, prep.exec)

    async def watch_abort():
        await abort.wait()
        send.send_nowait(("abort", -1, None))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch_abort)
        while True:
            while True:  # everything already sent, before every decision
                try:
                    take(receive.receive_nowait())
                except trio.WouldBlock:
                    break
            if abort.is_set() and not st["saw_abort"]:
                st["saw_abort"] = True
                tr.phase("abort", -1, None)
            c = st["committed"]
            if st["failure"] is not None:
                if st["in_flight"] == 0:
                    if st["group"] is not None:
                        close_group()
                    break
            elif c < st["started"] and c in slots and slots[c][1] != "dispatch":
                await commit(c)
                continue
            elif c == st["started"] and (c == n or abort.is_set()):
                if st["group"] is not None:
                    close_group()
                break
            elif st["started"] < n and not abort.is_set():
                i = st["started"]
                if st["mode"] is None:
                    try:
                        st["mode"] = runtime.execution_mode(inputs[i]).kind
                    except Exception as error:
                        fail(error)
                        continue
                    tr.phase("classified", i, st["mode"])
                if st["mode"] == "exclusive":
                    if st["group"] == "parallel" and c == i:
                        close_group()
                        st["mode"] = None
                        continue
                    if st["group"] is None:
                        st["group"], st["gopen"] = "exclusive", i
                        tr.phase("group-open", i, False)
                        await start(nursery, i)
                        continue
                else:
                    if st["group"] is None:
                        st["group"], st["gopen"] = "parallel", i
                        tr.phase("group-open", i, True)
                    if st["group"] == "parallel" and st["in_flight"] < cap:
                        await start(nursery, i)
                        continue
            take(await receive.receive())
        nursery.cancel_scope.cancel()  # the abort watcher
    if st["failure"] is not None:
        raise st["failure"]
    for i in range(st["started"], n):  # aborted before they started: synthetic pairs
        result = th.aborted_before_dispatch_result()
        seq = session.append(
            "tool/call", ToolCallData(turn, step, blocks[i].id, blocks[i].name, blocks[i].arguments)
        ).seq
        session.append(
            "tool/result",
            ToolResultData.from_result(turn, step, blocks[i].id, result),
            source_event_seqs=[seq],
        )
        tr.phase("aborted", i, result.error.info.code)
        results.append(th.StepResult(blocks[i].id, blocks[i].name, result))
    tr.phase("done", -1, abort.is_set())
    return th.StepOutcome(concluded=st["concluded"], aborted=abort.is_set(), results=tuple(results))
