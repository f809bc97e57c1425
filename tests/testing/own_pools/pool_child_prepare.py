"""A second pool of my own, written from the docs: each call is *prepared in a child task*.

Still one prepare at a time, in model order: the driver logs the ``tool/call``, spawns a
prepare task, and does nothing but take messages (settles of running bodies) until that task
reports back; then it spawns the body's dispatch task. Every group (a run of parallel calls,
or one exclusive call) has a nursery of its own, closed once the group's results committed.
"""

from __future__ import annotations

import math

import trio

import trio_harness as th
from trio_harness.log import ToolCallData, ToolResultData
from trio_harness.lowlevel import validate_cap


class _Silent:
    def begin(self, calls, cap):
        pass

    def phase(self, name, index, detail):
        pass


class _Step:
    def __init__(
        self, runtime, session, blocks, turn, step, abort, cap, accept_context, agent, tracer
    ):
        self.runtime, self.session, self.blocks = runtime, session, blocks
        self.turn, self.step, self.abort, self.cap = turn, step, abort, cap
        self.accept_context, self.tr = accept_context, tracer
        self.scheduler = runtime.scheduler
        self.inputs = [
            th.ToolExecutionInput(b.id, b.name, th.parse_arguments(b.arguments), abort, agent=agent)
            for b in blocks
        ]
        self.send, self.receive = trio.open_memory_channel(math.inf)
        self.limiter = trio.CapacityLimiter(cap)
        self.next = 0  # the next call to start
        self.cursor = 0  # the commit cursor
        self.running = 0  # dispatches in flight
        self.preparing = False
        self.ready = {}  # index -> (exec, kind, result)
        self.seqs = {}
        self.results = []
        self.failure = None
        self.concluded = False
        self.saw_abort = False

    # ---- messages
    def _take(self, message):
        what, i, payload = message
        if what == "prepared":
            self.preparing = False
            if payload.kind == "dispatch" and self.failure is not None:
                # Prepared after the step's scheduler failure: abandoned, never dispatched
                # (as upstream; docs/monitoring-your-pool.md).
                pass
            elif payload.kind == "dispatch":
                self.running += 1
                self.group_nursery.start_soon(self._dispatch, i, payload.exec)
            else:
                self.ready[i] = (payload.exec, payload.kind, payload.result)
        elif what == "prepare-failed":
            self.preparing = False
            self._fail(payload)
        elif what == "settled":
            self.running -= 1
            self.mode = None
            self.tr.phase("settled", i, None)
            self.ready[i] = (self.execs.pop(i), payload.kind, payload.result)
        elif what == "dispatch-failed":
            self.running -= 1
            self.mode = None
            self.execs.pop(i)
            self.tr.phase("settled", i, payload)
            self._fail(payload)

    def _fail(self, error):
        if self.failure is None:
            self.failure = error

    async def _wait(self):
        self._take(await self.receive.receive())

    def _drain(self):
        while True:
            try:
                self._take(self.receive.receive_nowait())
            except trio.WouldBlock:
                break
        if self.abort.is_set() and not self.saw_abort:
            self.saw_abort = True
            self.tr.phase("abort", -1, None)

    # ---- tasks
    async def _prepare(self, i):
        try:
            preparation = await self.scheduler.prepare(self.inputs[i])
        except Exception as error:
            self.send.send_nowait(("prepare-failed", i, error))
        else:
            # traced at the instant prepare returned (not when the driver takes the message:
            # an abort set in between would look as if it came during the policy phase)
            self.tr.phase("prepared", i, preparation.kind)
            self.send.send_nowait(("prepared", i, preparation))

    async def _dispatch(self, i, exec):
        self.execs[i] = exec
        async with self.limiter:
            self.tr.phase("body-started", i, None)
            try:
                outcome = await self.scheduler.dispatch(exec)
            except Exception as error:
                message = ("dispatch-failed", i, error)
            else:
                message = ("settled", i, outcome)
        self.send.send_nowait(message)

    async def _watch_abort(self):
        await self.abort.wait()
        self.send.send_nowait(("abort", -1, None))

    # ---- driver
    def _classify(self, i):
        try:
            kind = self.runtime.execution_mode(self.inputs[i]).kind
        except Exception as error:
            self._fail(error)
            return None
        self.tr.phase("classified", i, kind)
        return kind

    def _start(self, i):
        b = self.blocks[i]
        self.next += 1
        self.mode = None
        self.seqs[i] = self.session.append(
            "tool/call", ToolCallData(self.turn, self.step, b.id, b.name, b.arguments)
        ).seq
        self.tr.phase("started", i, None)
        self.preparing = True
        self.group_nursery.start_soon(self._prepare, i)

    async def _commit(self, i):
        exec, kind, result = self.ready.pop(i)
        try:
            result = (
                await self.scheduler.finalize(exec, result)
                if kind == "post-result"
                else self.scheduler.finish(exec, result)
            )
            data = ToolResultData.from_result(self.turn, self.step, self.blocks[i].id, result)
            self.session.append("tool/result", data, source_event_seqs=[self.seqs[i]])
            self.tr.phase("committed", i, result)
            if self.accept_context is not None:
                for context in result.additional_contexts:
                    self.accept_context(context)
        except Exception as error:
            self._fail(error)
            return
        self.cursor += 1
        self.mode = None
        self.concluded = self.concluded or result.concludes_turn
        self.results.append(th.StepResult(self.blocks[i].id, self.blocks[i].name, result))

    async def _group(self, parallel, first_mode):
        """Run one group; returns once it holds nothing uncommitted (or the step failed)."""
        self.mode = first_mode
        opened = False
        while True:
            self._drain()
            if self.preparing:
                await self._wait()
            elif self.failure is not None:
                if self.running == 0:
                    return
                await self._wait()
            elif self.cursor < self.next and self.cursor in self.ready:
                await self._commit(self.cursor)
            elif self.cursor == self.next and (
                self.next == len(self.blocks) or self.abort.is_set() or (opened and not parallel)
            ):
                return
            elif (
                self.next < len(self.blocks)
                and not self.abort.is_set()
                and (parallel or not opened)
            ):
                if self.mode is None:
                    self.mode = self._classify(self.next)
                    if self.mode is None:
                        continue
                if self.mode == "exclusive" and parallel:
                    if self.cursor == self.next:
                        return  # the barrier: the group is done, the exclusive call opens its own
                    await self._wait()
                elif self.running < self.cap:
                    opened = True
                    self._start(self.next)
                else:
                    await self._wait()
            else:
                await self._wait()

    async def run(self):
        self.execs = {}
        self.tr.begin(self.inputs, self.cap)
        async with trio.open_nursery() as step_nursery:
            step_nursery.start_soon(self._watch_abort)
            while self.failure is None and self.next < len(self.blocks):
                self._drain()
                if self.abort.is_set():
                    break
                mode = self._classify(self.next)
                if mode is None:
                    break
                first = self.next
                async with trio.open_nursery() as self.group_nursery:
                    self.tr.phase("group-open", first, mode == "parallel")
                    await self._group(mode == "parallel", mode)
                    self.tr.phase("group-close", first, None)
            step_nursery.cancel_scope.cancel()
        if self.failure is not None:
            raise self.failure
        for i in range(self.next, len(self.blocks)):
            b = self.blocks[i]
            result = th.aborted_before_dispatch_result()
            seq = self.session.append(
                "tool/call", ToolCallData(self.turn, self.step, b.id, b.name, b.arguments)
            ).seq
            self.session.append(
                "tool/result",
                ToolResultData.from_result(self.turn, self.step, b.id, result),
                source_event_seqs=[seq],
            )
            self.tr.phase("aborted", i, result.error.info.code)
            self.results.append(th.StepResult(b.id, b.name, result))
        self._drain()
        self.tr.phase("done", -1, self.abort.is_set())
        return th.StepOutcome(
            concluded=self.concluded, aborted=self.abort.is_set(), results=tuple(self.results)
        )


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
):
    cap = validate_cap(10 if max_parallel_tool_calls is None else max_parallel_tool_calls)
    blocks = list(tool_calls)
    for b in blocks:
        if not all(isinstance(v, str) for v in (b.id, b.name, b.arguments)):
            raise TypeError("a call's id, name and arguments must be str")
    step_run = _Step(
        runtime,
        session,
        blocks,
        turn,
        step,
        abort if abort is not None else trio.Event(),
        cap,
        accept_context,
        agent,
        tracer if tracer is not None else _Silent(),
    )
    return await step_run.run()
