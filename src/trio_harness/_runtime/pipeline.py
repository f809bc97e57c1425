"""The call pipeline: three phases, ``prepare`` → ``dispatch`` → ``finalize``, then ``finish``.

This is the scheduler view the pool drives (``runtime.scheduler``): the policy around a body
(pre-execute hooks, guards, approval, execute wrappers, post-execute hooks, result observers).
``finish`` ends ``finalize``; a result that bypasses post-execute goes to it directly. Each phase
turns everything a tool, a hook or the approval service raises into a result; only an exception
that is not a tool failure (``trio.Cancelled`` from the caller's own scope, ``KeyboardInterrupt``,
a bug in the runtime) escapes, and for the pool that is a scheduler failure.

Abort mapping: the caller's ``trio.Event`` is checked between phases; the body runs
(:mod:`.body`) inside a cancel scope cancelled when the event is set (through the pool's per-step
relay when there is one), and past the tool's ``timeout_ms`` deadline; here its ending becomes a
result.
"""

from __future__ import annotations

import logging
from typing import Any, Final, Literal

import attrs
import trio

from .._errors import (
    ToolNotFoundError,
    error_message,
    unreachable,
)
from .._json import NOT_JSON, json_node_limit, snapshot_json_value
from .._values import (
    UNSET,
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
    blocked_result,
    denied_result,
    error_result,
    is_well_formed_error,
)
from .abort import abort_type_error, cancel_on_abort
from .body import dispatch_body, stale_cancellation
from .execution import (
    UNNOTED,
    DispatchOutcome,
    Preparation,
    Runtime,
    ToolExecution,
    ToolExecutionInput,
    normalize_context,
    parsed_note,
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
from .registry import Registry
from .results import (
    cancellation_result,
    create_success_result,
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
#: ``_create``'s ``raw`` when reading ``input.arguments`` raised (a private marker).
_UNREAD: Final = object()


def _aborted(event: trio.Event | None) -> bool:
    return event is not None and event.is_set()


def _contexts(given: object) -> tuple[dict[str, Any], ...]:
    if not given:
        return ()
    return tuple(normalize_context(context) for context in given)  # type: ignore[attr-defined]


def _prepared(
    kind: Literal["post-result", "final-result"], exec: ToolExecution, result: ToolExecutionResult
) -> Preparation:
    # Results built here are fresh: ``finish`` need not snapshot them again.
    exec._fresh_result = result
    return Preparation(kind, exec, result)


class ToolScheduler:
    """The three phases of one call and ``finish``, as the pool and ``ToolRuntime.execute`` drive
    them.

    Args:
        runtime: The runtime a call's ``ctx.runtime`` refers to.
        registry: Where the phases look tools up.
        policy: The hook lists and approval service the phases consult.
        abort_cancels_callbacks: An addition to upstream (the "strict abort" of the docs): every awaited callback of
            a call whose abort is set (pre-execute hooks, the approval request, execute wrappers
            around ``next()``, post-execute hooks) runs under the abort's cancellation. Default
            ``False``: as upstream, the pipeline waits for callbacks, and only bodies are cut short.
    """

    __slots__ = ("_abort_cancels_callbacks", "_policy", "_registry", "_runtime")

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
        self._abort_cancels_callbacks = abort_cancels_callbacks

    # -----------------------------------------------------------------------------------------
    # prepare
    # -----------------------------------------------------------------------------------------

    def _create(self, input: ToolExecutionInput) -> tuple[ToolExecution, BaseException | None]:
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
        if abort is not None:
            # Checked before anything reads it (``is_set``); the call fails, nothing else does.
            failure = abort_type_error(abort)
            if failure is not None:
                abort = None
        arguments: Any = UNSET
        checked = None
        note = parsed_note(input)
        if note is not None and note.run_with is not UNNOTED:
            # What the call runs with (the value the parse proved lossless JSON, or the
            # classification's copy, taken before the classifier ran), which nobody else was
            # handed, and the classification's verdict on it. Used once: another execution of
            # the same input gets a copy of its own.
            raw = note.run_with
            checked = note.checked
            note.run_with = UNNOTED
            note.checked = None
            if len(note.text) < json_node_limit():  # the value has fewer nodes than that
                arguments = raw
            else:
                # The node limit was lowered since the text was parsed: it is judged again.
                checked = None
        else:
            try:
                raw = input.arguments
            except Exception as error:
                failure = failure or error
                raw = _UNREAD  # not UNSET: that is a value a caller may pass (and is refused)
        if arguments is UNSET and raw is not _UNREAD:
            # The one copy of the arguments: every phase, and the body, see this snapshot.
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
            self._runtime,
            abort,
            abort,
            finalize_content,
        )
        exec._checked = checked
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

    def _early(
        self, exec: ToolExecution, failure: BaseException | None
    ) -> ToolExecutionResult | None:
        # What ``prepare`` answers before the policy phase (a final result): an argument failure
        # (it wins even over an already-aborted caller), then an abort already set.
        if failure is not None:
            result = error_result(failure)
        else:
            caller = exec._caller_abort
            if caller is None or not caller.is_set():
                return None
            result = aborted_before_dispatch_result()
        # Built here from fresh values: ``finish`` may skip re-snapshotting it.
        exec._fresh_result = result
        return result

    async def prepare(self, input: ToolExecutionInput) -> Preparation:
        """Create the execution and run the policy phase (pre-execute, approval, guards).

        Returns:
            ``dispatch`` (run the body next), ``post-result`` (a denial or a pre-dispatch abort that
            still goes through post-execute) or ``final-result`` (bypasses post-execute: argument
            failures, pre-aborted calls, policy exceptions).
        """
        exec, failure = self._create(input)
        early = self._early(exec, failure)
        if early is not None:
            return Preparation("final-result", exec, early)
        policy = self._policy
        if not policy.pre_execute.items and not policy.guards.items:
            # No hook and no guard: the waterfall allows.
            return Preparation("dispatch", exec, None)
        caller = exec._caller_abort
        try:
            if self._abort_cancels_callbacks and caller is not None:
                async with cancel_on_abort(caller) as scope:
                    reason = await self._policy_reason(exec, caller)
                if scope.cancelled_caught:
                    # abort_cancels_callbacks: the abort cut the policy phase short.
                    return _prepared("post-result", exec, aborted_before_dispatch_result())
            else:
                reason = await self._policy_reason(exec, caller)
            if reason is _APPROVAL_ABORTED:
                return _prepared("post-result", exec, aborted_before_dispatch_result())
        except Exception as error:
            return _prepared("final-result", exec, error_result(error))
        except trio.Cancelled as cancelled:
            failure = stale_cancellation(cancelled)
            if failure is None:
                raise
            return _prepared("final-result", exec, error_result(failure))
        if reason is not None:
            # A denial that settles after the abort is kept: it is the more informative answer.
            return _prepared("post-result", exec, denied_result(reason))
        if _aborted(caller):
            return _prepared("post-result", exec, aborted_before_dispatch_result())
        return Preparation("dispatch", exec, None)

    # -----------------------------------------------------------------------------------------
    # dispatch
    # -----------------------------------------------------------------------------------------

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
                return await dispatch_body(self._registry, exec)
            return await wrappers[index](exec, lambda: step(index + 1))

        return self._normalize_wrapped(exec, await step(0))

    def _dispatched(self, exec: ToolExecution, result: ToolExecutionResult) -> ToolExecutionResult:
        # The ``post-result`` of a dispatch whose wrappers and body gave ``result``.
        exec._deferring_closed = True
        if exec._deferred:
            result = with_contexts(result, before=exec._deferred)
        caller = exec._caller_abort
        if caller is not None and not result.is_error and caller.is_set():
            result = cancellation_result(exec, result)
        return result

    def _dispatch_failed(self, exec: ToolExecution, failure: BaseException) -> ToolExecutionResult:
        # The ``final-result`` of a dispatch whose wrappers or body raised ``failure``.
        exec._deferring_closed = True
        return error_result(failure)

    async def dispatch(self, exec: ToolExecution) -> DispatchOutcome:
        """Run the execute wrappers around the body; returns a ``post-result`` (or a
        ``final-result`` when a wrapper or the normalization of its answer raised)."""
        try:
            if not self._policy.execute_wrappers.items:
                result = await dispatch_body(self._registry, exec)
            elif self._abort_cancels_callbacks and exec._caller_abort is not None:
                async with cancel_on_abort(exec._caller_abort) as scope:
                    result = await self._wrapped(exec)
                if scope.cancelled_caught:
                    # abort_cancels_callbacks: the abort cut the wrappers short.
                    result = (
                        aborted_result() if exec._body_invoked else aborted_before_dispatch_result()
                    )
            else:
                result = await self._wrapped(exec)
        except Exception as error:
            return DispatchOutcome("final-result", self._dispatch_failed(exec, error))
        except trio.Cancelled as cancelled:
            failure = stale_cancellation(cancelled)
            if failure is None:
                raise
            return DispatchOutcome("final-result", self._dispatch_failed(exec, failure))
        return DispatchOutcome("post-result", self._dispatched(exec, result))

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
                if self._abort_cancels_callbacks and caller is not None:
                    async with cancel_on_abort(caller) as scope:
                        decision = await self._post_execute(exec, result)
                    if not scope.cancelled_caught:
                        result = self._apply(exec, result, decision)
                    # else (abort_cancels_callbacks) the abort cut the hooks short; the result
                    # stands (and a success becomes ABORTED below).
                else:
                    result = self._apply(exec, result, await self._post_execute(exec, result))
            except Exception as error:
                result = error_result(error)
            except trio.Cancelled as cancelled:
                failure = stale_cancellation(cancelled)
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
