"""Turning an abort ``trio.Event`` into cancelled body scopes.

A ``trio.Event`` has no callbacks, so something must wait on it to cancel the bodies that are
running when it is set. Starting one watcher task per call would cost a nursery per body; instead
the pool opens one :func:`abort_relay` per step and every body dispatched inside it registers its
cancel scope with that relay. A body dispatched outside any relay for its event (a direct
``await runtime.execute(...)``) gets a private watcher from :func:`cancel_on_abort`.

Invariant: a scope registered with a relay whose event is already set is cancelled at once, so a
body can never start after its abort was observed and run uncancelled.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial

import trio

__all__ = [
    "AbortRelay",
    "abort_relay",
    "abort_type_error",
    "cancel_on_abort",
    "current_relay",
    "group_leaves",
    "raise_sole",
    "watch_scope",
]


def abort_type_error(abort: object) -> TypeError | None:
    """The error for an ``abort`` that is neither a ``trio.Event`` nor ``None`` (else ``None``)."""
    if abort is None or isinstance(abort, trio.Event):
        return None
    return TypeError(f"abort must be a trio.Event or None, got {type(abort).__name__}")


class AbortRelay:
    """Cancels every registered cancel scope when its event is set."""

    __slots__ = ("_event", "_outer", "scopes")

    def __init__(self, event: trio.Event, outer: AbortRelay | None = None) -> None:
        self._event = event
        # The relay that was innermost when this one was opened (for another event).
        self._outer = outer
        #: The registered scopes. Hot paths may ``add`` to it directly instead of calling
        #: :meth:`register`, but only right after seeing the event unset with no checkpoint since
        #: (the watcher only runs at a checkpoint, so the scope cannot miss the abort).
        self.scopes: set[trio.CancelScope] = set()

    def register(self, scope: trio.CancelScope) -> None:
        """Cancel ``scope`` when the event is set (at once if it already is)."""
        if self._event.is_set():
            scope.cancel()
        else:
            self.scopes.add(scope)

    def unregister(self, scope: trio.CancelScope) -> None:
        """Forget ``scope`` (its body settled)."""
        self.scopes.discard(scope)

    async def watch(self) -> None:
        """Wait for the event, then cancel every registered scope (and any registered later)."""
        await self._event.wait()
        # Cancelling is synchronous, so the set cannot change while it is walked; scopes added
        # later see the event set in ``register`` and are cancelled there.
        for scope in self.scopes:
            scope.cancel()
        self.scopes.clear()


# The innermost relay visible to the current task (each links to the one it was opened in).
# Trio copies the context into each child task at spawn time, so tasks started inside
# ``abort_relay`` see it. Almost always one relay per step: the hot lookup is one ``get`` and one
# identity check.
_innermost: contextvars.ContextVar[AbortRelay | None] = contextvars.ContextVar(
    "trio_harness_abort_relay", default=None
)


def current_relay(event: trio.Event) -> AbortRelay | None:
    """The relay watching ``event`` in this task's context, if any."""
    relay = _innermost.get()
    while relay is not None and relay._event is not event:
        relay = relay._outer
    return relay


def _spawn_watcher(relay: AbortRelay) -> trio.CancelScope:
    # A system task rather than a nursery child: the caller's exceptions then never pass through a
    # nursery (which would wrap them in an ExceptionGroup). The returned scope stops the watcher.
    watcher_scope = trio.CancelScope()

    async def watch() -> None:
        with watcher_scope:
            await relay.watch()

    trio.lowlevel.spawn_system_task(watch, name="trio_harness.abort-watcher")
    return watcher_scope


@asynccontextmanager
async def abort_relay(event: trio.Event) -> AsyncIterator[AbortRelay]:
    """Watch ``event`` for the duration of the block; tasks spawned inside see the relay."""
    relay = AbortRelay(event, _innermost.get())
    token = _innermost.set(relay)
    watcher_scope = _spawn_watcher(relay)
    try:
        yield relay
    finally:
        watcher_scope.cancel()
        _innermost.reset(token)


def watch_scope(event: trio.Event | None, scope: trio.CancelScope) -> Callable[[], None]:
    """Cancel ``scope`` when ``event`` is set (at once if it already is); returns the function
    that stops watching (call it when the scope's block ends).

    Uses the relay of an enclosing :func:`abort_relay` for the same event when there is one (no
    extra task); otherwise starts a private watcher until stopped. ``None`` never cancels.
    """
    if event is None:
        return _nothing
    relay = current_relay(event)
    if relay is not None:
        relay.register(scope)
        return partial(relay.unregister, scope)
    private = AbortRelay(event)
    private.register(scope)
    return _spawn_watcher(private).cancel


def _nothing() -> None:
    pass


@asynccontextmanager
async def cancel_on_abort(event: trio.Event | None) -> AsyncIterator[trio.CancelScope]:
    """A cancel scope that is cancelled when ``event`` is set: the one-liner that makes a hook, a
    wrapper or an approval service honour a call's abort.

    ``async with cancel_on_abort(exec.abort) as scope: ...`` runs the block until it finishes or
    the abort is set, whichever comes first (``None`` never aborts). Uses the relay of an
    enclosing :func:`abort_relay` for the same event when there is one (no extra task); otherwise
    starts a private watcher for the duration of the block. Check ``scope.cancelled_caught``
    afterwards to tell an abort from a normal exit.
    """
    with trio.CancelScope() as scope:
        stop = watch_scope(event, scope)
        try:
            yield scope
        finally:
            stop()


def group_leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The exceptions a (nested) exception group holds, groups flattened away."""
    stack: list[BaseException] = [group]
    leaves: list[BaseException] = []
    while stack:
        item = stack.pop()
        if isinstance(item, BaseExceptionGroup):
            stack.extend(item.exceptions)
        else:
            leaves.append(item)
    return leaves


def raise_sole(group: BaseExceptionGroup[BaseException]) -> None:
    """Raise the one error a step's nursery group stands for; return when it holds several.

    A step never surfaces a group for one error: a group holding one exception other than
    ``Cancelled`` (e.g. ``KeyboardInterrupt`` next to the ``Cancelled`` of its siblings) is
    raised as that exception, and a group of ``Cancelled`` only as one ``Cancelled``, so an
    ``except trio.Cancelled`` cleanup around the step runs (every ``Cancelled`` belongs to the
    same cancelled scope, which catches a bare one as it would the group).
    """
    leaves = group_leaves(group)
    others = [leaf for leaf in leaves if not isinstance(leaf, trio.Cancelled)]
    if len(others) == 1:
        raise others[0] from None
    if not others and leaves:
        raise leaves[0] from None
