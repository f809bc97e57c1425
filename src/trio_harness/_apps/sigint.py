"""Ctrl-C for agent apps: the first SIGINT aborts the step, the second stops hard.

Without a handler, Ctrl-C raises ``KeyboardInterrupt`` wherever the app happens to be, and Trio
reports it through every nursery on the way out. :func:`abort_on_sigint` turns the first SIGINT
into the turn's abort event instead (running bodies are cancelled, their results recorded, the
turn ends cleanly) and a second into a plain ``KeyboardInterrupt`` raised from the block.
:func:`run_app` runs an app's main function and turns a ``KeyboardInterrupt`` from anywhere
(between turns, while an MCP server starts, at the prompt) into one line and exit status 130.
"""

from __future__ import annotations

import functools
import logging
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio

from .boundary import sole_exception

__all__ = ["abort_on_sigint", "run_app"]

#: The exit status of an app stopped by Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130

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


def run_app(
    main: Callable[..., Awaitable[Any]],
    *args: Any,
    interrupted: str | None = "interrupted",
    **kwargs: Any,
) -> int:
    """Run an app's ``async`` main function with Trio; Ctrl-C anywhere ends it with one line.

    Usage (the last line of a script)::

        sys.exit(th.run_app(main, args))

    A ``KeyboardInterrupt`` (bare, or the one error of an exception group) becomes the line
    ``interrupted`` on standard error and status 130; any other exception propagates as usual.
    The session log needs nothing more: the pool and :class:`~trio_harness.agent.Agent` keep it
    complete at every instant.

    Args:
        main: The app's main function.
        *args: Its positional arguments.
        interrupted: The line printed on Ctrl-C (``None``: print nothing).
        **kwargs: Its keyword arguments.

    Returns:
        ``main``'s return value when it is an ``int``, else ``0``; 130 after Ctrl-C.
    """
    try:
        result = trio.run(functools.partial(main, **kwargs) if kwargs else main, *args)
    except KeyboardInterrupt:
        pass
    except BaseExceptionGroup as group:
        if not isinstance(sole_exception(group), KeyboardInterrupt):
            raise
    else:
        return result if type(result) is int else 0
    if interrupted is not None:
        print(f"\n{interrupted}", file=sys.stderr, flush=True)
    return EXIT_INTERRUPTED
