"""The three-phase pipeline: ``prepare`` → ``dispatch`` → ``finalize`` / ``finish``.

This is the scheduler view the pool drives (``runtime.scheduler``). Each phase turns everything a
tool, a hook or the approval service raises into a result; only an exception that is not a tool
failure (``trio.Cancelled`` from the caller's own scope, ``KeyboardInterrupt``, a bug in the
runtime) escapes, and for the pool that is a scheduler failure.

Abort mapping: the caller's ``trio.Event`` is checked between phases; the body runs inside a
cancel scope cancelled when the event is set (through the pool's per-step relay when there is
one), and past the tool's ``timeout_ms`` deadline.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final, Literal

import attrs
import trio

from .._errors import (
    HarnessError,
    ToolNotFoundError,
    ToolTimeoutError,
    error_message,
    unreachable,
)
from .._json import NOT_JSON, snapshot_json_value
from .._values import (
    UNSET,
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
    error_result,
    is_well_formed_error,
)
from .abort import abort_type_error, cancel_on_abort, current_relay
from .execution import (
    DispatchOutcome,
    Preparation,
    Runtime,
    ToolExecution,
    ToolExecutionInput,
    normalize_context,
)
from .hooks import (
    ALLOW,
    Accept,
    Allow,
    ApprovalRequest,
    Ask,
    Block,
    Deny,
    Policy,
    PostToolDecision,
    PreToolDecision,
    refuse_awaitable,
)
from .registry import RegisteredTool, Registry
from .results import (
    blocked_result,
    cancellation_result,
    create_success_result,
    denied_result,
    materialize,
    with_contexts,
)

__all__ = ["ToolScheduler"]

#: Where contained observer failures are reported.
logger: Final = logging.getLogger("trio_harness.runtime")

_NOT_LOSSLESS_ARGS: Final = "tool execution arguments must be losslessly JSON-serializable"
_ACCEPT: Final = Accept()
#: The policy's answer when an approval was cancelled by the call's abort.
_APPROVAL_ABORTED: Final = object()


def _success(exec: ToolExecution, entry: Any, value: Any) -> ToolExecutionResult:
    """``createSuccessResult`` for a body's value; a broken output contract becomes its error result.

    ``create_success_result`` never returns a failure, so ``result.is_error`` afterwards tells
    whether the value was accepted.
    """
    try:
        return create_success_result(exec, entry, value)
    except Exception as error:
        return error_result(error)


def _stale(cancelled: trio.Cancelled) -> BaseException | None:
    """``None`` when ``cancelled`` is a real cancellation of the current task (re-raise it), else
    the failure it stands for: a ``trio.Cancelled`` that no cancelled scope delivered (a body or a
    callback kept one from an earlier cancellation and raised it again)."""
    if trio.current_effective_deadline() == -math.inf:
        return None
    failure = RuntimeError("a trio.Cancelled was raised that no cancelled scope delivered")
    failure.__cause__ = cancelled
    return failure


def _log_failure(exec: ToolExecution, error: BaseException) -> None:
    """Tell the developer what the model only sees as ``Error: <message>``."""
    if isinstance(error, HarnessError):
        logger.debug('tool "%s" (%s) failed: %s', exec.name, exec.call_id, error_message(error))
    else:
        logger.warning(
            'tool "%s" (%s) raised %s',
            exec.name,
            exec.call_id,
            type(error).__name__,
            exc_info=error,
        )


def _body_failure(exec: ToolExecution, error: BaseException) -> ToolExecutionResult:
    _log_failure(exec, error)
    return error_result(error)


def _aborted(event: trio.Event | None) -> bool:
    return event is not None and event.is_set()


def _contexts(given: object) -> tuple[dict[str, Any], ...]:
    if not given:
        return ()
    return tuple(normalize_context(context) for context in given)  # type: ignore[attr-defined]


def _prepared(
    kind: Literal["post-result", "final-result"], exec: ToolExecution, result: ToolExecutionResult
) -> Preparation:
    # Results built here are fresh: ``finish`` may skip re-snapshotting them.
    exec._fresh_result = result
    return Preparation(kind, exec, result)


def _timeout_result(entry: RegisteredTool) -> ToolExecutionResult:
    return error_result(ToolTimeoutError(entry.name, entry.definition.timeout_ms or 0))


@asynccontextmanager
async def _fused(first: trio.Event, second: trio.Event) -> AsyncIterator[trio.Event]:
    """An event set as soon as either ``first`` or ``second`` is (rare path: a wrapper replaced
    the abort event). One system task watches both for the duration of the block."""
    fused = trio.Event()
    watch_scope = trio.CancelScope()

    async def relay(source: trio.Event) -> None:
        await source.wait()
        fused.set()

    async def watch() -> None:
        with watch_scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(relay, first)
                nursery.start_soon(relay, second)

    trio.lowlevel.spawn_system_task(watch, name="trio_harness.fused-abort")
    try:
        yield fused
    finally:
        watch_scope.cancel()


class ToolScheduler:
    """The four phases of one call, as the pool and ``ToolRuntime.execute`` drive them.

    Args:
        runtime: The runtime a call's ``ctx.runtime`` refers to.
        registry: Where the phases look tools up.
        policy: The hook lists and approval service the phases consult.
        abort_cancels_callbacks: Strict mode (an addition to upstream): every awaited callback of
            a call whose abort is set (pre-execute hooks, the approval request, execute wrappers
            around ``next()``, post-execute hooks) runs under the abort's cancellation. Default
            ``False``: as upstream, the pipeline waits for callbacks, and only bodies are cut short.
    """

    __slots__ = ("_policy", "_registry", "_runtime", "_strict")

    def __init__(
        self,
        runtime: Runtime,
        registry: Registry,
        policy: Policy,
        *,
        abort_cancels_callbacks: bool = False,
    ) -> None:
        self._runtime = runtime
        self._registry = registry
        self._policy = policy
        self._strict = abort_cancels_callbacks

    # -----------------------------------------------------------------------------------------
    # prepare
    # -----------------------------------------------------------------------------------------

    def _create(self, input: ToolExecutionInput) -> tuple[ToolExecution, BaseException | None]:
        runtime = self._runtime
        # Each input field is read exactly once; the arguments last, so that the definition's
        # finalize_content is captured before any argument accessor runs.
        call_id = input.call_id
        name = input.name
        abort = input.abort
        parent = input.parent
        agent = input.agent
        root_call_id = input.root_call_id
        entry = self._registry.lookup(name)
        finalize_content = entry.definition.finalize_content if entry is not None else None
        failure: BaseException | None = None
        arguments: Any = UNSET
        if abort is not None:
            # Checked before anything reads it (``is_set``); the call fails, nothing else does.
            failure = abort_type_error(abort)
            if failure is not None:
                abort = None
        try:
            raw = input.arguments
        except Exception as error:
            failure = failure or error
        else:
            arguments = snapshot_json_value(raw)
            if arguments is NOT_JSON:
                arguments = UNSET
                failure = failure or TypeError(_NOT_LOSSLESS_ARGS)
        exec = ToolExecution(
            object(),
            call_id,
            name,
            arguments,
            agent,
            parent,
            call_id if root_call_id is None else root_call_id,
            runtime,
            abort,
            abort,
            finalize_content,
        )
        return exec, failure

    async def _pre_execute(self, exec: ToolExecution) -> PreToolDecision:
        hooks = self._policy.pre_execute.items
        if not hooks:
            return ALLOW
        last = len(hooks)

        async def step(index: int) -> PreToolDecision:
            if index == last:
                return ALLOW
            return await hooks[index](exec, lambda: step(index + 1))

        return await step(0)

    async def _ask(self, exec: ToolExecution, reason: str | None) -> tuple[str | None, bool]:
        """Route an ``Ask``; returns (denial reason or None, approval-cancelled flag)."""
        service = self._policy.approval
        name = exec.name
        if service is None:
            return (
                reason
                if reason is not None
                else f'tool "{name}" requires approval (not yet supported)'
            ), False
        if exec.agent is None:
            return (
                f'tool "{name}" requires approval, but the call has no agent to route it through',
                False,
            )
        outcome = await service.request(
            ApprovalRequest(
                agent=exec.agent,
                tool_name=name,
                call_id=exec.call_id,
                reason=reason,
                abort=exec._caller_abort,
            )
        )
        if outcome == "allowed-once":
            return None, False
        if outcome == "rejected":
            return f'the user rejected tool "{name}"', False
        if outcome == "cancelled":
            return f'approval for tool "{name}" was cancelled', True
        if outcome == "unavailable":
            return f'tool "{name}" requires approval, but no approval channel is available', False
        unreachable("ApprovalOutcome", outcome)

    def _guard_reason(self, exec: ToolExecution) -> str | None:
        guards = self._policy.guards
        index = 0
        # Live iteration: ``guards.items`` is re-read at every step, so a guard registered by an
        # earlier guard during this evaluation is consulted too.
        while index < len(guards.items):
            reason = guards.items[index](exec)
            index += 1
            if reason is not None:
                return reason
        return None

    async def _policy_reason(self, exec: ToolExecution, caller: trio.Event | None) -> Any:
        """The policy's answer: ``None`` (allowed), a denial reason, or ``_APPROVAL_ABORTED``."""
        decision = await self._pre_execute(exec)
        approval_cancelled = False
        reason: str | None
        if isinstance(decision, Allow):
            reason = None
        elif isinstance(decision, Deny):
            reason = decision.reason
        elif isinstance(decision, Ask):
            reason, approval_cancelled = await self._ask(exec, decision.reason)
        else:
            unreachable("PreToolDecision", decision)
        if approval_cancelled and _aborted(caller):
            return _APPROVAL_ABORTED
        if reason is None and self._policy.guards.items:
            # Guards run after the whole waterfall: no hook can override a guard's denial.
            reason = self._guard_reason(exec)
        if reason is not None and type(reason) is not str:
            raise TypeError(f"a denial reason must be a str, got {type(reason).__name__}")
        return reason

    async def prepare(self, input: ToolExecutionInput) -> Preparation:
        """Create the execution and run the policy phase (pre-execute, approval, guards).

        Returns:
            ``dispatch`` (run the body next), ``post-result`` (a denial or a pre-dispatch abort that
            still goes through post-execute) or ``final-result`` (bypasses post-execute: argument
            failures, pre-aborted calls, policy exceptions).
        """
        exec, failure = self._create(input)
        if failure is not None:
            # Argument failures win even over an already-aborted caller.
            return _prepared("final-result", exec, error_result(failure))
        caller = exec._caller_abort
        if caller is not None and caller.is_set():
            return _prepared("final-result", exec, aborted_before_dispatch_result())
        policy = self._policy
        if not policy.pre_execute.items and not policy.guards.items:
            # No policy at all: the waterfall would allow, and nothing awaited since the abort
            # check above, so its answer stands.
            return Preparation("dispatch", exec)
        try:
            if self._strict and caller is not None:
                async with cancel_on_abort(caller) as scope:
                    reason = await self._policy_reason(exec, caller)
                if scope.cancelled_caught:
                    # Strict mode: the abort cut the policy phase short.
                    return _prepared("post-result", exec, aborted_before_dispatch_result())
            else:
                reason = await self._policy_reason(exec, caller)
            if reason is _APPROVAL_ABORTED:
                return _prepared("post-result", exec, aborted_before_dispatch_result())
        except Exception as error:
            return _prepared("final-result", exec, error_result(error))
        except trio.Cancelled as cancelled:
            failure = _stale(cancelled)
            if failure is None:
                raise
            return _prepared("final-result", exec, error_result(failure))
        if reason is not None:
            # A denial that settles after the abort is kept: it is the more informative answer.
            return _prepared("post-result", exec, denied_result(reason))
        if _aborted(caller):
            return _prepared("post-result", exec, aborted_before_dispatch_result())
        return Preparation("dispatch", exec)

    # -----------------------------------------------------------------------------------------
    # dispatch
    # -----------------------------------------------------------------------------------------

    async def _run_body(
        self, exec: ToolExecution, abort: trio.Event | None, timeout_s: float | None, execute: Any
    ) -> tuple[Any, BaseException | None, trio.CancelScope]:
        """Run the body in a cancel scope; returns (value, tool-owned failure, the scope)."""
        # Not the hot path: ``_dispatch_body`` runs bodies with no event and no timeout, and bodies
        # under the pool's relay-watched event, itself. Here a timeout, a fused event or a direct
        # ``execute`` with an event is involved; ``cancel_on_abort`` reuses a relay when there is
        # one and starts a private watcher otherwise.
        value: Any = UNSET
        failure: BaseException | None = None
        async with cancel_on_abort(abort) as scope:
            if timeout_s is not None:
                scope.deadline = trio.current_time() + timeout_s
            try:
                value = await execute(exec.arguments, exec)
            except Exception as error:
                failure = error
            except trio.Cancelled as cancelled:
                failure = _stale(cancelled)
                if failure is None:
                    raise
        return value, failure, scope

    async def _dispatch_body(self, exec: ToolExecution) -> ToolExecutionResult:
        """The innermost ``next()`` of the execute wrappers: the body, normalized to a result."""
        caller = exec._caller_abort
        current = exec._abort
        if (caller is not None and caller.is_set()) or (
            current is not caller and current is not None and current.is_set()
        ):
            result = aborted_before_dispatch_result()
            exec._body_result = exec._fresh_result = result
            return result
        entry = self._registry.lookup(exec.name)
        if entry is None:
            result = error_result(ToolNotFoundError(exec.name))
            exec._body_result = exec._fresh_result = result
            return result
        exec._body_invoked = True
        execute = entry.definition.execute
        timeout_s = entry.timeout_s
        if caller is None and current is None and timeout_s is None:
            # Hot path: nothing but the caller's own scope can cancel the body (no cancel scope,
            # and no abort to re-check afterwards). Same outcomes as the general path below.
            failure: BaseException | None = None
            try:
                value = await execute(exec.arguments, exec)
            except Exception as error:
                failure = error
            except trio.Cancelled as cancelled:
                failure = _stale(cancelled)
                if failure is None:
                    raise
            finally:
                exec._abort = None  # the body may have replaced it: restored, as below
            result = (
                _body_failure(exec, failure)
                if failure is not None
                else _success(exec, entry, value)
            )
            exec._body_result = exec._fresh_result = result
            return result
        if current is caller and caller is not None and timeout_s is None:
            relay = current_relay(caller)
            if relay is not None:
                # The pool's path with an abort event (``_run_body``'s relay case, inlined): one
                # event, watched by the step's relay, which cancels this body's scope. Only that
                # relay can cancel the scope, and only once the event is set, so the general path's
                # deadline checks below cannot apply here.
                value = UNSET
                failure = None
                with trio.CancelScope() as scope:
                    # The event was seen unset above with no checkpoint since: no need to re-check
                    # it (``AbortRelay.scopes``).
                    scopes = relay.scopes
                    scopes.add(scope)
                    try:
                        value = await execute(exec.arguments, exec)
                    except Exception as error:
                        failure = error
                    except trio.Cancelled as cancelled:
                        failure = _stale(cancelled)
                        if failure is None:
                            raise
                    finally:
                        scopes.discard(scope)
                        exec._abort = current  # the body may have replaced it
                if failure is not None:
                    result = _body_failure(exec, failure)
                elif scope.cancelled_caught:
                    # The body stopped at a checkpoint: only the abort cancels this scope.
                    result = aborted_result()
                else:
                    result = _success(exec, entry, value)
                    if not result.is_error and caller.is_set():
                        # A body that returned after the abort still lost the race.
                        result = aborted_result()
                exec._body_result = exec._fresh_result = result
                return result
        try:
            if current is caller or current is None or caller is None:
                # One event (or none): the body sees it unchanged.
                exec._abort = caller if current is None else current
                value, failure, scope = await self._run_body(exec, exec._abort, timeout_s, execute)
            else:
                # A wrapper replaced the event: the body sees a third event set by either.
                async with _fused(caller, current) as fused:
                    exec._abort = fused
                    value, failure, scope = await self._run_body(exec, fused, timeout_s, execute)
        finally:
            exec._abort = current
        if failure is not None:
            # A tool-owned failure is kept even when it was raised in reaction to the abort.
            result = _body_failure(exec, failure)
        elif scope.cancelled_caught:
            # The body stopped at a checkpoint: the abort, or else the deadline, cancelled it.
            result = (
                aborted_result()
                if _aborted(caller) or _aborted(current)
                else _timeout_result(entry)
            )
        else:
            result = _success(exec, entry, value)
            if not result.is_error:
                # A body that returned after the abort (or past its deadline) still lost the race.
                if _aborted(caller) or _aborted(current):
                    result = aborted_result()
                elif scope.cancel_called:
                    result = _timeout_result(entry)
        exec._body_result = exec._fresh_result = result
        return result

    def _normalize_wrapped(
        self, exec: ToolExecution, result: ToolExecutionResult
    ) -> ToolExecutionResult:
        # The body's own result passes through unchanged; ``_body_result`` is ``None`` until the
        # body ran, so a wrapper that returned ``None`` without calling ``next()`` is not it.
        if result is not None and result is exec._body_result:
            return result
        if not isinstance(result, ToolExecutionResult):
            raise TypeError(
                f"tools/execute wrapper must return a ToolExecutionResult, got {type(result).__name__}"
            )
        contexts = _contexts(result.additional_contexts)
        if result.is_error:
            if result.error is None:
                raise TypeError("tools/execute wrapper returned a failed result without an error")
            if not is_well_formed_error(result.error):
                raise TypeError(
                    "tools/execute wrapper returned a failed result whose error is not a "
                    "ToolError(message: str, info: ErrorInfo(name: str, code: str) | None)"
                )
            return ToolExecutionResult(
                is_error=True,
                content=result.content,
                error=result.error,
                meta=result.meta,
                additional_contexts=contexts,
                exception=result.exception,
            )
        # A wrapper-authored success (or a result of another dispatch) is re-validated and
        # re-rendered against the tool that owns THIS call; its authored content is ignored.
        entry = self._registry.lookup(exec.name)
        if entry is None:
            raise ToolNotFoundError(exec.name)
        return with_contexts(create_success_result(exec, entry, result.value), after=contexts)

    async def _wrapped(self, exec: ToolExecution) -> ToolExecutionResult:
        # Only called with at least one wrapper (``dispatch`` checks first).
        wrappers = self._policy.execute_wrappers.items
        last = len(wrappers)

        async def step(index: int) -> ToolExecutionResult:
            if index == last:
                return await self._dispatch_body(exec)
            return await wrappers[index](exec, lambda: step(index + 1))

        return self._normalize_wrapped(exec, await step(0))

    async def dispatch(self, exec: ToolExecution) -> DispatchOutcome:
        """Run the execute wrappers around the body; returns a ``post-result`` (or a
        ``final-result`` when a wrapper or the normalization of its answer raised)."""
        try:
            if not self._policy.execute_wrappers.items:
                result = await self._dispatch_body(exec)
            elif self._strict and exec._caller_abort is not None:
                async with cancel_on_abort(exec._caller_abort) as scope:
                    result = await self._wrapped(exec)
                if scope.cancelled_caught:
                    # Strict mode: the abort cut the wrappers short.
                    result = (
                        aborted_result() if exec._body_invoked else aborted_before_dispatch_result()
                    )
            else:
                result = await self._wrapped(exec)
        except Exception as error:
            exec._deferring_closed = True
            return DispatchOutcome("final-result", error_result(error))
        except trio.Cancelled as cancelled:
            failure = _stale(cancelled)
            if failure is None:
                raise
            exec._deferring_closed = True
            return DispatchOutcome("final-result", error_result(failure))
        exec._deferring_closed = True
        if exec._deferred:
            result = with_contexts(result, before=exec._deferred)
        caller = exec._caller_abort
        if caller is not None and not result.is_error and caller.is_set():
            result = cancellation_result(exec, result)
        return DispatchOutcome("post-result", result)

    # -----------------------------------------------------------------------------------------
    # finalize / finish
    # -----------------------------------------------------------------------------------------

    async def _post_execute(
        self, exec: ToolExecution, result: ToolExecutionResult
    ) -> PostToolDecision:
        hooks = self._policy.post_execute.items
        last = len(hooks)

        async def step(index: int) -> PostToolDecision:
            if index == last:
                return _ACCEPT
            return await hooks[index](exec, result, lambda: step(index + 1))

        return await step(0)

    def _apply(
        self, exec: ToolExecution, result: ToolExecutionResult, decision: PostToolDecision
    ) -> ToolExecutionResult:
        if isinstance(decision, Block):
            return blocked_result(decision.feedback, _contexts(decision.additional_contexts))
        if not isinstance(decision, Accept):
            unreachable("PostToolDecision", decision)
        contexts = _contexts(decision.additional_contexts)
        if decision.value is not UNSET:
            if decision.content is not UNSET:
                raise ValueError(
                    "tools/post-execute accept decision cannot replace both value and content"
                )
            if result.is_error:
                raise ValueError("tools/post-execute cannot replace the value of a failed result")
            entry = self._registry.lookup(exec.name)
            if entry is None:
                raise ToolNotFoundError(exec.name)
            replaced = create_success_result(exec, entry, decision.value)
            return with_contexts(replaced, before=result.additional_contexts, after=contexts)
        if decision.content is not UNSET:
            result = attrs.evolve(result, content=decision.content)
        return with_contexts(result, after=contexts)

    async def finalize(
        self, exec: ToolExecution, result: ToolExecutionResult
    ) -> ToolExecutionResult:
        """Run the post-execute waterfall over ``result``, then :meth:`finish`."""
        if self._policy.post_execute.items:
            caller = exec._caller_abort
            try:
                if self._strict and caller is not None:
                    async with cancel_on_abort(caller) as scope:
                        decision = await self._post_execute(exec, result)
                    if not scope.cancelled_caught:
                        result = self._apply(exec, result, decision)
                    # else strict mode: the abort cut the hooks short; the result stands (and a
                    # success becomes ABORTED below).
                else:
                    result = self._apply(exec, result, await self._post_execute(exec, result))
            except Exception as error:
                result = error_result(error)
            except trio.Cancelled as cancelled:
                failure = _stale(cancelled)
                if failure is None:
                    raise
                result = error_result(failure)
        caller = exec._caller_abort
        if caller is not None and not result.is_error and caller.is_set():
            result = cancellation_result(exec, result)
        return self.finish(exec, result)

    def finish(self, exec: ToolExecution, result: ToolExecutionResult) -> ToolExecutionResult:
        """Materialize ``result``, apply ``finalize_content`` once, freeze the execution and notify
        the result observers (their failures are logged, never raised)."""
        if result is not exec._fresh_result:
            result = materialize(result)
        finalize_content = exec._finalize_content
        if finalize_content is not None:
            try:
                replacement = finalize_content(exec, result)
            except Exception as error:
                result = materialize(error_result(error))
            else:
                if replacement is not None:
                    result = materialize(attrs.evolve(result, content=replacement))
        exec._deferring_closed = True
        exec._finished = True
        for observer in self._policy.observers.items:
            try:
                refuse_awaitable(
                    observer(exec, result), "tools/result observers must be synchronous"
                )
            except Exception as error:
                logger.warning(
                    'tool "%s" (%s): tools/result observer failed: %s',
                    exec.name,
                    exec.call_id,
                    error_message(error),
                )
        return result
