"""An agent: a model, its tools and a durable log that holds the whole conversation.

:func:`open_agent` opens (or resumes) the log and hands back an :class:`Agent`; each
:meth:`Agent.run` is one turn through :func:`~trio_harness.run_turn`. Everything the model sees
is recorded as it happens (the user's message, each reply *before* its calls run, the results
handed back), next to the pool's tool events and a trace of every step, so that the log alone
resumes the conversation after a crash at any instant, a Ctrl-C, a cancellation or a step
limit, and every step can be drawn (``python -m trio_harness timeline LOG --step N``).

Nothing is global: the agent owns no task and no signal handler. Ctrl-C is the app's choice
(``async with abort_on_sigint() as abort: await agent.run(prompt, abort=abort)``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal

import attrs
import trio
from trio.lowlevel import enable_ki_protection

from .._json import parse_arguments
from .._log import DurableSession, FsyncPolicy
from .._pool import DEFAULT_MAX_PARALLEL_TOOL_CALLS, PoolRuntime, StepResult, ToolCallBlock
from .._runtime import ToolRuntime, json_schema_validator
from .._timeline import TRACE_EVENT, StepTrace
from .._values import ToolDefinition
from .approval import (
    AgentApproval,
    ApprovalRule,
    DecisionCallback,
    PendingApprovalError,
)
from .approval_log import ApprovalDecision, PausedStep, PendingCall, record_decision
from .conversation import (
    TURN_END_EVENT,
    AgentLog,
    Kind,
    Recovery,
    conversation_of,
    open_agent_log,
    record_messages,
    settle_step,
)
from .turn import TurnEvent, TurnResult, run_turn
from .turn_model import ModelStep, StepStreaming, TurnModel

__all__ = ["Agent", "open_agent"]


class Agent:
    """A model and its tools, with the conversation kept in a durable log (see the module
    docstring). Made by :func:`open_agent`.

    Args:
        model: A :class:`~trio_harness.TurnModel` keeping its conversation in a list
            (``messages`` or ``input``: the ready provider models do) and with ``add_user``.
            A resumed log's conversation replaces the list's content.
        runtime: The tools: a runtime, or tool definitions to register on a new
            ``ToolRuntime`` (other tools, e.g. an MCP server's, can join ``agent.runtime``).
        log: The opened log (:func:`~trio_harness.agent.open_agent_log`).
        max_steps: Tool steps per turn (see ``run_turn``).
        max_parallel_tool_calls: The pool's window.
        trace: Record a ``trace/step`` event (a ``StepTrace``) after every step.
        accept_context: Passed to the pool.
        stream_calls: Start each tool call while the reply still streams, when the model
            offers ``step_streaming`` (see ``run_turn``); ``False`` waits for the whole reply.
        approval: How calls that need approval (``th.tool(needs_approval=...)``,
            :meth:`require_approval`) are decided: ``"defer"`` (the default) pauses the turn
            before the first undecided one (:attr:`pending`, :meth:`approve`, :meth:`reject`,
            then :meth:`run` resumes, in this process or another); an async callback
            ``decide(call) -> ApprovalDecision`` is asked inline, in model order, while the
            step waits (e.g. :class:`~trio_harness.agent.TerminalApproval`). See
            ``docs/approval.md``.

    Attributes:
        model: The model.
        runtime: The tools.
        log: The log (``log.session`` is the ``DurableSession``).
    """

    runtime: Any

    def __init__(
        self,
        model: Any,
        runtime: PoolRuntime | Iterable[ToolDefinition],
        log: AgentLog,
        *,
        max_steps: int = 10,
        max_parallel_tool_calls: int = DEFAULT_MAX_PARALLEL_TOOL_CALLS,
        trace: bool = True,
        accept_context: Callable[[Any], object] | None = None,
        stream_calls: bool = True,
        approval: DecisionCallback | Literal["defer"] = "defer",
    ) -> None:
        self.model = model
        self.log = log
        self._approval = AgentApproval(self, log.session, None if approval == "defer" else approval)
        self._own_runtime = not _is_runtime(runtime)
        self.runtime = (
            runtime if not self._own_runtime else _runtime_of(runtime, self._approval)  # type: ignore[arg-type]
        )
        self._hooked = False
        self._paused: PausedStep | None = log.conversation.paused
        self._max_steps = max_steps
        self._window = max_parallel_tool_calls
        self._trace_steps = trace
        self._accept_context = accept_context
        self._stream_calls = stream_calls
        self._trace: StepTrace | None = None
        self._running = False
        self._conversation = conversation_of(model)
        state = log.conversation
        self._next_turn = state.next_turn
        if state.messages:
            self._conversation[:] = state.messages
        self._logged = 0 if not state.messages else len(self._conversation)
        self._record("input", self._next_turn)  # a fresh log gets the model's system prompt
        pending = state.pending
        if pending is not None:
            # A crash came between the step and handing its results over: the results are in
            # the log (opening settled the step); the model gets them now.
            self._hand_over(pending.turn, pending.step, pending.calls)

    @property
    def session(self) -> DurableSession:
        """The durable session log (the pool's events, the conversation, the traces)."""
        return self.log.session

    @property
    def recovery(self) -> Recovery:
        """What opening the log found and repaired (``str()`` is a one-line report)."""
        return self.log.recovery

    @property
    def next_turn(self) -> int:
        """The number the next :meth:`run` gets."""
        return self._next_turn

    # -- approval ------------------------------------------------------------------------------

    def require_approval(
        self,
        tools: object,
        *,
        when: ApprovalRule = True,
        unless_read_only: bool = False,
        reason: str | None = None,
    ) -> Callable[[], None]:
        """Make calls of ``tools`` need approval (beside ``th.tool(needs_approval=...)``).

        Usage::

            async with open_stdio(agent.runtime, "files-mcp", prefix="files_") as files:
                agent.require_approval(files, unless_read_only=True)

        Args:
            tools: A tool name, several names, or an MCP connection (every tool it registers,
                followed as its tool list changes).
            when: ``True``, or a predicate over the validated arguments (see
                :data:`~trio_harness.agent.ApprovalRule`).
            unless_read_only: With an MCP connection: leave out the tools whose annotations
                say ``readOnlyHint: true``.
            reason: The reason shown (default ``tool "<name>" needs approval``).

        Returns:
            A callable that removes this rule.
        """
        return self._approval.require(
            tools, when=when, unless_read_only=unless_read_only, reason=reason
        )

    @property
    def paused(self) -> PausedStep | None:
        """The step the last turn paused at, waiting for decisions, or ``None``."""
        return self._paused

    @property
    def pending(self) -> tuple[PendingCall, ...]:
        """The calls of the paused step that need a decision, in model order, each with its
        decision so far (``()`` when no turn is paused)."""
        return () if self._paused is None else self._paused.pending

    def approve(self, call: PendingCall | str, *, arguments: Any = None) -> PendingCall:
        """Approve a pending call, optionally with edited ``arguments`` (a JSON value, checked
        against the tool's schema now and again when it runs). Recorded in the log at once.

        Raises:
            PendingApprovalError: No turn is paused.
            KeyError: No pending call is ``call`` (or several have that id).
            ValueError: It was decided otherwise already, or the edited arguments do not match
                the schema. The same decision again is a no-op (a retry after a crash).
        """
        found = self._pending_call(call)
        decision = ApprovalDecision.approve(arguments)
        if decision.arguments is not None:
            self._check_arguments(found.name, decision.arguments)
        return self._decide(found, decision)

    def reject(self, call: PendingCall | str, *, message: str | None = None) -> PendingCall:
        """Reject a pending call; the model sees ``the user rejected tool "<name>"`` followed by
        ``message``, if given. Recorded in the log at once.

        Raises:
            PendingApprovalError: No turn is paused.
            KeyError: No pending call is ``call`` (or several have that id).
            ValueError: It was decided otherwise already (the same decision again is a no-op).
        """
        return self._decide(self._pending_call(call), ApprovalDecision.reject(message))

    def _pending_call(self, call: PendingCall | str) -> PendingCall:
        if self._paused is None:
            raise PendingApprovalError("no turn is paused: nothing waits for a decision")
        if isinstance(call, PendingCall):
            found = [item for item in self._paused.pending if item.index == call.index]
        else:
            found = [item for item in self._paused.pending if item.call_id == call]
        if len(found) != 1:
            raise KeyError(
                f"{call!r} is not one pending call (pending: "
                f"{[item.call_id for item in self._paused.pending]})"
            )
        return found[0]

    def _check_arguments(self, name: str, arguments: str) -> None:
        definition = self.runtime.get(name) if hasattr(self.runtime, "get") else None
        if definition is None:
            return
        try:
            check = json_schema_validator(definition.parameters)
        except Exception:  # a schema this cannot compile: the call's own validation decides
            return
        violations = check(parse_arguments(arguments), "arguments")
        if violations:
            raise ValueError(f'edited arguments of tool "{name}": ' + "; ".join(violations))

    @enable_ki_protection
    def _decide(self, call: PendingCall, decision: ApprovalDecision) -> PendingCall:
        assert self._paused is not None
        if call.decision == decision:
            return call  # the same decision again (a retry after a crash): recorded once
        if call.decision is not None:
            raise ValueError(f"call {call.call_id} ({call.name}) was decided already")
        record_decision(self.session, call, decision)
        self.session.sync()
        self._paused = self._paused.decided(call, decision)
        return attrs.evolve(call, decision=decision)

    @enable_ki_protection
    async def run(
        self,
        prompt: str | None = None,
        *,
        abort: trio.Event | None = None,
        on_event: Callable[[TurnEvent], object] | None = None,
    ) -> TurnResult:
        """One turn: add ``prompt`` as a user message (if given) and run the model's calls
        until it answers, a tool concludes the turn, the step limit, or ``abort``.

        A ``turn/end`` event records how it ended (``"interrupted"`` or ``"error"`` when an
        exception ends it; the log is complete either way).

        Raises:
            trio.BusyResourceError: Another turn of this agent is running (one conversation
                has one turn at a time).
            Exception: As :func:`~trio_harness.run_turn` (the model's errors, scheduler
                failures), each as itself; both in one streamed step, in an
                ``ExceptionGroup``.
        """
        if self._running:
            raise trio.BusyResourceError("another turn of this agent is running")
        paused = self._paused
        if paused is not None and (prompt is not None or paused.undecided):
            waiting = ", ".join(f"{c.name} ({c.call_id})" for c in paused.undecided)
            raise PendingApprovalError(
                f"turn {paused.turn} is paused: decide {waiting} (agent.approve / agent.reject)"
                if paused.undecided
                else f"turn {paused.turn} is paused: call run() without a prompt to resume it"
            )
        self._running = True
        try:
            return await self._run(prompt, abort, on_event)
        finally:
            self._running = False

    async def _run(
        self,
        prompt: str | None,
        abort: trio.Event | None,
        on_event: Callable[[TurnEvent], object] | None,
    ) -> TurnResult:
        resume = self._paused
        if resume is not None:
            turn = resume.turn
            self._approval.load(resume.pending)
            self._approval.position = (turn, resume.step)
        else:
            turn = self._next_turn
            self._next_turn += 1
        if prompt is not None:
            self.model.add_user(prompt)
        self._record("input", turn)
        stop = "interrupted"
        steps = 0
        recorded = _Recorded(self, turn, resume.step if resume is not None else -1)
        hold = None
        if self._approval.has_rules(self.runtime):
            if not self._own_runtime:
                raise TypeError(
                    "tools that need approval run on the agent's own runtime: give open_agent "
                    "tool definitions (other tools join agent.runtime)"
                )
            self._hook()
            if self._approval.deferred:
                hold = functools.partial(self._approval.hold, self.runtime)
        try:
            result = await run_turn(
                recorded,
                self.runtime,
                self.session,
                turn=turn,
                max_steps=self._max_steps,
                abort=abort,
                on_event=on_event,
                max_parallel_tool_calls=self._window,
                accept_context=self._accept_context,
                tracer=self._tracer if self._trace_steps else None,
                stream_calls=self._stream_calls,
                agent=self,
                hold=hold,
                resume=resume,
            )
            stop, steps = result.stop, result.steps
            self._paused = None
            if result.pending:
                calls = resume.calls if resume is not None else recorded.calls
                self._paused = PausedStep(
                    turn=turn, step=result.pending[0].step, calls=calls, pending=result.pending
                )
                self._step_done()
                self.session.sync()
            return result
        except Exception:
            stop = "error"
            raise
        finally:
            if stop != "paused":
                self._paused = None  # an interrupted resume settled the step
            self.session.append(TURN_END_EVENT, {"turn": turn, "stop": stop, "steps": steps})

    def traces(self) -> list[StepTrace]:
        """Every step trace recorded in the log, in order."""
        return [
            StepTrace.from_json(event.data)
            for event in self.session.events
            if event.type == TRACE_EVENT
        ]

    def trace(self, turn: int, step: int) -> StepTrace | None:
        """The trace of one step, or ``None`` (not traced, or no such step)."""
        found = [t for t in self.traces() if (t.turn, t.step) == (turn, step)]
        return found[-1] if found else None

    # -- recording -----------------------------------------------------------------------------

    @enable_ki_protection
    def _record(
        self,
        kind: Kind,
        turn: int,
        *,
        step: int | None = None,
        calls: Sequence[ToolCallBlock] = (),
        answers: Sequence[str] = (),
    ) -> None:
        new = self._conversation[self._logged :]
        if not new and kind != "results":
            return
        record_messages(self.session, kind, turn, new, step=step, calls=calls, answers=answers)
        self._logged = len(self._conversation)

    @enable_ki_protection
    def _hand_over(self, turn: int, step: int, calls: Sequence[ToolCallBlock]) -> None:
        results = settle_step(self.session, turn, step, calls)
        self.model.add_tool_results(results)
        self._record("results", turn, step=step, answers=[r.call_id for r in results])

    def _hook(self) -> None:
        # Mounted once, when the first rule applies (a runtime without rules keeps the pool's
        # hook-free fast path).
        if not self._hooked:
            self._hooked = True
            self.runtime.add_pre_execute(self._approval.pre_execute)
            self.runtime.add_post_execute(self._approval.post_execute)

    def _tracer(self, turn: int, step: int) -> StepTrace:
        # Trio's clock, asked directly: the instants ``trio.current_time()`` gives, in a third of
        # the calls (a traced step asks about six times a call).
        clock = trio.lowlevel.current_clock().current_time
        self._trace = StepTrace(turn=turn, step=step, clock=clock)
        return self._trace

    def _step_done(self) -> None:
        trace, self._trace = self._trace, None
        if trace is not None and trace.phases:
            self.session.append(TRACE_EVENT, trace.to_json())


def _is_runtime(tools: object) -> bool:
    return hasattr(tools, "scheduler") and hasattr(tools, "execution_mode")


def _runtime_of(tools: Iterable[ToolDefinition], approval: AgentApproval) -> Any:
    runtime = ToolRuntime(approval=approval)
    for tool in tools:
        runtime.register(tool)
    return runtime


class _Recorded:
    """The agent's model as ``run_turn`` sees it: every reply and every hand-over recorded."""

    def __init__(self, agent: Agent, turn: int, step: int) -> None:
        self._agent = agent
        self._model: TurnModel = agent.model
        self._turn = turn
        self._step = step  # the step before the next reply's
        self.calls: tuple[ToolCallBlock, ...] = ()  # the last reply's

    async def step(self, tools: Sequence[dict[str, Any]], /) -> ModelStep:
        reply = await self._model.step(tools)
        # No checkpoint between the reply and its record (run_turn is protected from
        # KeyboardInterrupt): the log knows every call id before any call runs.
        self._step += 1
        self._agent._record("reply", self._turn, step=self._step, calls=reply.tool_calls)
        self.calls = reply.tool_calls
        self._agent._approval.position = (self._turn, self._step)
        return reply

    @property
    def step_streaming(self) -> StepStreaming | None:
        inner: StepStreaming | None = getattr(self._model, "step_streaming", None)
        if inner is None:
            return None
        return functools.partial(self._step_streaming, inner)

    async def _step_streaming(
        self,
        inner: StepStreaming,
        tools: Sequence[dict[str, Any]],
        on_call: Callable[[ToolCallBlock], object],
        /,
    ) -> ModelStep:
        # The calls run while the reply streams, so their tool events come before the reply's
        # record. A crash before that record leaves a log whose conversation ends before the
        # reply (its calls are answered in the log, not in the conversation); one after it is
        # the list step's case (the reply's calls are settled and handed over on resume).
        self._step += 1
        self._agent._approval.position = (self._turn, self._step)
        sent: list[ToolCallBlock] = []

        def forward(call: ToolCallBlock) -> None:
            on_call(call)
            sent.append(call)

        try:
            reply = await inner(tools, forward)
        except BaseException:
            if sent:
                # The model stored a partial reply holding exactly the calls handed over;
                # run_turn answers them next.
                self._agent._record("reply", self._turn, step=self._step, calls=sent)
            raise
        self._agent._record("reply", self._turn, step=self._step, calls=reply.tool_calls)
        return reply

    def add_tool_results(self, results: Sequence[StepResult], /) -> None:
        self._model.add_tool_results(results)
        agent = self._agent
        agent._record("results", self._turn, step=self._step, answers=[r.call_id for r in results])
        agent._step_done()


@asynccontextmanager
async def open_agent(
    path: str | os.PathLike[str],
    model: Any,
    runtime: PoolRuntime | Iterable[ToolDefinition],
    *,
    fsync: FsyncPolicy = "step",
    salvage: bool = False,
    max_steps: int = 10,
    max_parallel_tool_calls: int = DEFAULT_MAX_PARALLEL_TOOL_CALLS,
    trace: bool = True,
    accept_context: Callable[[Any], object] | None = None,
    stream_calls: bool = True,
    approval: DecisionCallback | Literal["defer"] = "defer",
) -> AsyncIterator[Agent]:
    """Open (or resume) an agent's durable log; close it when the block ends.

    Usage::

        async with th.open_agent("agent.jsonl", model, [search, write]) as agent:
            print(agent.recovery)  # "agent.jsonl: resumed 12 messages; ..."
            result = await agent.run("What changed since yesterday?")

    Opening is :func:`~trio_harness.agent.open_agent_log` (in a worker thread: the log is read
    whole): a crash cut is dropped, the step a crash left open is settled, the conversation is
    put back into the model, and results the model never got are handed to it.

    Args:
        path: The log file (created if missing).
        model: See :class:`Agent`.
        runtime: The tools: a runtime, or tool definitions (see :class:`Agent`).
        fsync: The durable log's fsync policy.
        salvage: See ``DurableSession.open``.
        max_steps: Tool steps per turn.
        max_parallel_tool_calls: The pool's window.
        trace: Record a trace of every step in the log.
        accept_context: Passed to the pool.
        stream_calls: Start each tool call while the reply still streams, when the model
            offers ``step_streaming`` (a ready model made with ``stream=True``; see
            ``run_turn``). ``False`` waits for the whole reply before any call starts. A turn
            that may pause for deferred approval is never streamed.
        approval: ``"defer"`` or an async decision callback (see :class:`Agent`).

    Yields:
        The :class:`Agent`.

    Raises:
        SessionLogError: The file is not a session log.
        SessionLogLockedError: Another process has it open.
        TypeError: The model keeps no conversation list.
    """
    log = await trio.to_thread.run_sync(
        functools.partial(open_agent_log, path, fsync=fsync, salvage=salvage)
    )
    try:
        yield Agent(
            model,
            runtime,
            log,
            max_steps=max_steps,
            max_parallel_tool_calls=max_parallel_tool_calls,
            trace=trace,
            accept_context=accept_context,
            stream_calls=stream_calls,
            approval=approval,
        )
    finally:
        log.close()
