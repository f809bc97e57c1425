"""Ctrl-C for agent apps: the first SIGINT aborts the step, the second stops hard.

Without a handler, Ctrl-C raises ``KeyboardInterrupt`` wherever the app happens to be, and Trio
reports it through every nursery on the way out. :func:`abort_on_sigint` turns the first SIGINT
into the turn's abort event instead (running bodies are cancelled, their results recorded, the
turn ends cleanly) and a second into a plain ``KeyboardInterrupt`` raised from the block.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import trio

__all__ = ["abort_on_sigint"]

_log = logging.getLogger("trio_harness.sigint")


@asynccontextmanager
async def abort_on_sigint(
    abort: trio.Event | None = None,
    *,
    on_abort: Callable[[], object] | None = None,
) -> AsyncIterator[trio.Event]:
    """Within the block, SIGINT sets an abort event; a second SIGINT raises ``KeyboardInterrupt``.

    Usage::

        async with th.abort_on_sigint() as abort:
            result = await th.run_turn(model, runtime, session, abort=abort)

    The second SIGINT cancels the block and ``KeyboardInterrupt`` is raised bare (not inside an
    ``ExceptionGroup``) when it has unwound. Outside the block Ctrl-C behaves as usual. Must be
    used from Trio's main thread (signal handlers are process-wide).

    Args:
        abort: The event to set (a fresh one by default).
        on_abort: Called once, synchronously, on the first SIGINT (e.g. to print "aborting…").

    Yields:
        The abort event.

    Raises:
        RuntimeError: Not in the main thread (Python delivers signals to the main thread only).
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("abort_on_sigint must be used from the main thread")
    event = trio.Event() if abort is None else abort
    hard_stop = False
    listening = trio.Event()
    with trio.CancelScope() as block:
        # The watcher is a system task, so exceptions of the block never pass through a nursery of
        # ours (they would come out wrapped in an ExceptionGroup). It owns the signal receiver:
        # after the second SIGINT it closes it, so a third Ctrl-C gets Trio's default
        # KeyboardInterrupt even if the block does not unwind.

        async def watch() -> None:
            nonlocal hard_stop
            with watcher, trio.open_signal_receiver(signal.SIGINT) as signals:
                listening.set()
                async for _ in signals:
                    if not event.is_set():
                        event.set()
                        if on_abort is not None:
                            try:
                                on_abort()
                            except Exception:  # a callback must not kill the watcher
                                _log.exception("abort_on_sigint: on_abort raised")
                    else:
                        hard_stop = True
                        block.cancel()
                        return

        watcher = trio.CancelScope()
        trio.lowlevel.spawn_system_task(watch, name="trio_harness.sigint-watcher")
        try:
            await listening.wait()
            yield event
        finally:
            watcher.cancel()
    if hard_stop:
        raise KeyboardInterrupt
