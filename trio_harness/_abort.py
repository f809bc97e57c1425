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
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import trio

__all__ = ["AbortRelay", "abort_relay", "cancel_on_abort", "current_relay"]


class AbortRelay:
    """Cancels every registered cancel scope when its event is set."""

    __slots__ = ("_event", "_scopes")

    def __init__(self, event: trio.Event) -> None:
        self._event = event
        self._scopes: set[trio.CancelScope] = set()

    @property
    def event(self) -> trio.Event:
        """The abort event this relay watches."""
        return self._event

    def register(self, scope: trio.CancelScope) -> None:
        """Cancel ``scope`` when the event is set (at once if it already is)."""
        if self._event.is_set():
            scope.cancel()
        else:
            self._scopes.add(scope)

    def unregister(self, scope: trio.CancelScope) -> None:
        """Forget ``scope`` (its body settled)."""
        self._scopes.discard(scope)

    async def watch(self) -> None:
        """Wait for the event, then cancel every registered scope (and any registered later)."""
        await self._event.wait()
        scopes, self._scopes = self._scopes, set()
        for scope in scopes:
            scope.cancel()


# Relays visible to the current task, keyed by the identity of their event. Trio copies the
# context into each child task at spawn time, so tasks started inside ``abort_relay`` see it.
_relays: contextvars.ContextVar[dict[int, AbortRelay] | None] = contextvars.ContextVar(
    "trio_harness_abort_relays", default=None
)


def current_relay(event: trio.Event) -> AbortRelay | None:
    """The relay watching ``event`` in this task's context, if any."""
    relays = _relays.get()
    relay = relays.get(id(event)) if relays else None
    # The id check alone could alias a dead event; the identity check makes it exact.
    if relay is not None and relay.event is event:
        return relay
    return None


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
    relay = AbortRelay(event)
    token = _relays.set({**(_relays.get() or {}), id(event): relay})
    watcher_scope = _spawn_watcher(relay)
    try:
        yield relay
    finally:
        watcher_scope.cancel()
        _relays.reset(token)


@contextmanager
def _registered(relay: AbortRelay, scope: trio.CancelScope) -> Iterator[None]:
    relay.register(scope)
    try:
        yield
    finally:
        relay.unregister(scope)


@asynccontextmanager
async def cancel_on_abort(event: trio.Event | None) -> AsyncIterator[trio.CancelScope]:
    """A cancel scope that is cancelled when ``event`` is set.

    Uses the relay of an enclosing :func:`abort_relay` for the same event when there is one (no
    extra task); otherwise starts a private watcher for the duration of the block. Check
    ``scope.cancelled_caught`` afterwards to tell an abort from a normal exit.
    """
    if event is None:
        with trio.CancelScope() as scope:
            yield scope
        return
    relay = current_relay(event)
    if relay is not None:
        with trio.CancelScope() as scope, _registered(relay, scope):
            yield scope
        return
    private = AbortRelay(event)
    watcher_scope = _spawn_watcher(private)
    try:
        with trio.CancelScope() as scope, _registered(private, scope):
            yield scope
    finally:
        watcher_scope.cancel()
