"""``ToolRuntime``: the registry, its hooks, fail-closed classification and ``execute``.

The runtime owns three things: the registry (:mod:`.registry`), the hook lists (:mod:`.hooks`)
and the scheduler (:mod:`.pipeline`). ``execute`` and the pool both drive the pipeline only
through ``runtime.scheduler``, an ordinary attribute: assigning a wrapper to it instruments every
call, ``execute`` included.

Upstream's agent scope layers (per-agent registrations, scoped hooks and guards, ``restrict()``)
and Code Mode are out of scope: every hook and tool here is global.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from .._values import ExecutionMode, ToolDefinition, ToolExecutionResult
from .execution import Scheduler, ToolExecutionInput
from .hooks import (
    ApprovalService,
    ExecuteWrapper,
    Guard,
    Policy,
    PostExecuteHook,
    PreExecuteHook,
    ResultObserver,
)
from .pipeline import ToolScheduler
from .registry import Registry

__all__ = ["ToolRuntime"]


@attrs.define(eq=False)
class ToolRuntime:
    """The tool registry and the three-phase execution pipeline.

    Args:
        approval: Where :class:`~trio_harness.Ask` decisions are routed; without one, an ``Ask``
            is a denial.
        abort_cancels_callbacks: Strict abort (opt-in, beyond upstream). When ``True``, every
            awaited callback of an aborted call — pre-execute hooks, the approval request,
            execute wrappers around ``next()``, post-execute hooks — runs under the abort's
            cancellation, so an abort bounds the whole step: a policy phase cut short gives
            ``ABORTED_BEFORE_DISPATCH``, a post-execute phase cut short keeps the body's outcome
            (a success becomes ``ABORTED``). The default (``False``) is upstream's: callbacks are
            awaited to the end and only bodies are cancelled; a callback can still honour the
            abort itself with :func:`~trio_harness.cancel_on_abort`.

    Attributes:
        scheduler: The phases the pool drives (``prepare``, ``dispatch``, ``finalize``,
            ``finish``). Assignable: tests and instrumentation wrap it, and :meth:`execute` goes
            through whatever is assigned.
    """

    _approval: ApprovalService | None = attrs.field(default=None, kw_only=True)
    _abort_cancels_callbacks: bool = attrs.field(default=False, kw_only=True)
    _registry: Registry = attrs.field(init=False, factory=Registry)
    _policy: Policy = attrs.field(init=False)
    scheduler: Scheduler = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._policy = Policy(approval=self._approval)
        if type(self._abort_cancels_callbacks) is not bool:
            raise TypeError(
                "abort_cancels_callbacks must be a bool, got "
                f"{type(self._abort_cancels_callbacks).__name__}"
            )
        self.scheduler = ToolScheduler(
            self,
            self._registry,
            self._policy,
            abort_cancels_callbacks=self._abort_cancels_callbacks,
        )

    # -- registry ---------------------------------------------------------------------------

    def register(self, tool: ToolDefinition) -> Callable[[], None]:
        """Register ``tool`` (a ``define_tool`` result or a raw definition).

        Returns:
            A disposer that unregisters exactly this registration.

        Raises:
            TypeError: ``tool "<name>" must declare output { schema, render, presentationMeta? }``.
            JsonSchemaError: ``output.schema`` is outside the supported subset.
            ValueError: ``tool "<name>" timeoutMs must be a positive finite number``, or
                ``tool "<name>" is already registered (...)``.
        """
        return self._registry.register(tool)

    def unregister(self, name: str) -> bool:
        """Remove the tool called ``name``; returns whether one was registered."""
        return self._registry.unregister(name)

    def get(self, name: str) -> ToolDefinition | None:
        """The registered definition called ``name``, or ``None``."""
        entry = self._registry.lookup(name)
        return None if entry is None else entry.definition

    def schemas(self) -> list[dict[str, Any]]:
        """The model-facing tool list: exactly ``name``, ``description``, ``parameters``.

        Each call returns fresh deep copies, in registration order.

        Raises:
            ValueError: ``tool "<name>" parameters must be lossless JSON before schema projection``.
        """
        return self._registry.schemas()

    def execution_mode(self, input: ToolExecutionInput) -> ExecutionMode:
        """Classify a call: ``PARALLEL`` only when the tool's ``is_concurrency_safe`` returns
        exactly ``True`` for the call's (parsed, unsnapshotted) arguments; ``EXCLUSIVE`` for an
        unknown tool, a tool without a classifier, any other answer, or a raising classifier."""
        return self._registry.execution_mode(input)

    # -- hooks ------------------------------------------------------------------------------

    def add_pre_execute(self, hook: PreExecuteHook) -> Callable[[], None]:
        """Add an async ``hook(exec, next) -> Allow | Deny | Ask`` (outermost first)."""
        return self._policy.pre_execute.add(hook)

    def add_execute_wrapper(self, wrapper: ExecuteWrapper) -> Callable[[], None]:
        """Add an async around-dispatch ``wrapper(exec, next) -> ToolExecutionResult``."""
        return self._policy.execute_wrappers.add(wrapper)

    def add_post_execute(self, hook: PostExecuteHook) -> Callable[[], None]:
        """Add an async ``hook(exec, result, next) -> Accept | Block`` (outermost first)."""
        return self._policy.post_execute.add(hook)

    def add_guard(self, guard: Guard) -> Callable[[], None]:
        """Add a synchronous ``guard(exec) -> reason | None``; the first reason denies the call."""
        return self._policy.guards.add(guard)

    def add_result_observer(self, observer: ResultObserver) -> Callable[[], None]:
        """Add a synchronous ``observer(exec, result)``, called once per final result, in
        ``finish``; its exceptions are logged (``trio_harness.runtime``), never raised."""
        return self._policy.observers.add(observer)

    # -- execution --------------------------------------------------------------------------

    async def execute(self, input: ToolExecutionInput) -> ToolExecutionResult:
        """Run one call through ``self.scheduler``: prepare → dispatch → finalize | finish.

        Every tool, hook and approval failure comes back as a result. Cancellation of the
        caller's own scope (and ``KeyboardInterrupt``) propagates.
        """
        scheduler = self.scheduler
        preparation = await scheduler.prepare(input)
        exec = preparation.exec
        if preparation.kind == "dispatch":
            outcome = await scheduler.dispatch(exec)
            if outcome.kind == "post-result":
                return await scheduler.finalize(exec, outcome.result)
            return scheduler.finish(exec, outcome.result)
        result = preparation.result
        assert result is not None
        if preparation.kind == "post-result":
            return await scheduler.finalize(exec, result)
        return scheduler.finish(exec, result)
