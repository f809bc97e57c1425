"""Ctrl-C and SIGTERM for agent apps: the first signal aborts the step, the second stops hard.

Without a handler, Ctrl-C raises ``KeyboardInterrupt`` wherever the app happens to be, and Trio
reports it through every nursery on the way out; SIGTERM (what ``docker stop`` and systemd send)
kills the process on the spot. :func:`abort_on_sigint` turns the first SIGINT into the turn's
abort event instead (running bodies are cancelled, their results recorded, the turn ends
cleanly) and a second into a plain ``KeyboardInterrupt`` raised from the block; a SIGTERM aborts
the same way and then stops the program (``SystemExit(143)`` from the block).
:func:`run_app` runs an app's main function and turns a ``KeyboardInterrupt`` from anywhere
(between turns, while an MCP server starts, at the prompt), or a SIGTERM, into one line and exit
status 130 (143).

The handlers are plain ``signal.signal`` handlers, installed synchronously when a block opens and
restored synchronously when it closes, so consecutive blocks (one per turn) never see each
other's: no task outlives its block. A signal only schedules the block's reaction on Trio's run
loop (``run_sync_soon`` is signal-safe); one that arrives as the last block closes is delivered
again to the handler now in place, as Trio's own signal receiver does.
"""

from __future__ import annotations

import functools
import logging
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from types import FrameType, TracebackType
from typing import Any

import attrs
import trio
from trio.lowlevel import RunVar

from .boundary import sole_exception

__all__ = ["abort_on_sigint", "run_app"]

#: The exit status of an app stopped by Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130
#: The exit status of an app stopped by SIGTERM (128 + SIGTERM).
EXIT_TERMINATED = 143
#: Seconds after an aborted block closed within which a Ctrl-C still counts as the second one.
AGAIN_WITHIN = 2.0

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_Handler = Callable[[int, FrameType | None], Any] | int | None

_log = logging.getLogger("trio_harness.sigint")


class _Terminated(SystemExit):
    """The block saw a SIGTERM: the program stops (``SystemExit(143)``)."""


@attrs.define(eq=False)
class _Block:
    """One open ``abort_on_sigint`` block."""

    event: trio.Event
    on_abort: Callable[[], object] | None
    again_within: float
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    #: A signal set the event (not the app).
    signalled: bool = False
    hard_stop: bool = False
    terminated: bool = False


@attrs.define(eq=False)
class _Watch:
    """The handlers of one Trio run: installed while at least one block is open."""

    token: trio.lowlevel.TrioToken
    blocks: list[_Block] = attrs.field(factory=list)
    originals: dict[int, _Handler] = attrs.field(factory=dict)
    #: ``trio.current_time()`` when the last block a signal aborted closed.
    last_abort_end: float | None = None

    def open(self, block: _Block) -> None:
        if not self.blocks:
            self._install()
        self.blocks.append(block)

    def close(self, block: _Block) -> None:
        if block in self.blocks:
            self.blocks.remove(block)
            if not self.blocks:
                self._restore()

    def _install(self) -> None:
        def handler(signum: int, frame: FrameType | None) -> None:
            # In a signal handler: only schedule the reaction on the run loop.
            self.token.run_sync_soon(self._deliver, signum)

        self.originals = {signum: signal.signal(signum, handler) for signum in _SIGNALS}

    def _restore(self) -> None:
        for signum, original in self.originals.items():
            # None: a handler not installed from Python; the default is the nearest one.
            signal.signal(signum, signal.SIG_DFL if original is None else original)
        self.originals = {}

    def _deliver(self, signum: int) -> None:
        # On the run loop, outside any task: nothing here may raise.
        if not self.blocks:
            # It arrived as the last block closed: the handler now in place gets it.
            signal.raise_signal(signum)
            return
        now = trio.current_time()
        for block in list(self.blocks):
            self._react(block, signum, now)

    def _react(self, block: _Block, signum: int, now: float) -> None:
        if signum == signal.SIGTERM:
            block.terminated = True
        recent = self.last_abort_end is not None and now - self.last_abort_end <= block.again_within
        if not block.event.is_set() and not (recent and signum == signal.SIGINT):
            block.signalled = True
            block.event.set()
            if block.on_abort is not None:
                try:
                    block.on_abort()
                except Exception:  # a callback must not break the run loop
                    _log.exception("abort_on_sigint: on_abort raised")
            return
        block.hard_stop = True
        block.scope.cancel()
        # Out of the count: a further signal gets the handling outside the block (Trio's
        # KeyboardInterrupt), even if this block never unwinds.
        self.close(block)


_watch: RunVar[_Watch] = RunVar("trio_harness.sigint")


def _current_watch() -> _Watch:
    try:
        return _watch.get()
    except LookupError:
        watch = _Watch(trio.lowlevel.current_trio_token())
        _watch.set(watch)
        return watch


def abort_on_sigint(
    abort: trio.Event | None = None,
    *,
    on_abort: Callable[[], object] | None = None,
    again_within: float = AGAIN_WITHIN,
) -> AbstractAsyncContextManager[trio.Event]:
    """Within the block, SIGINT sets an abort event; a second SIGINT raises ``KeyboardInterrupt``.

    Usage (one block per turn)::

        async with th.abort_on_sigint() as abort:
            result = await th.run_turn(model, runtime, session, abort=abort)

    The second SIGINT cancels the block and ``KeyboardInterrupt`` is raised bare (not inside an
    ``ExceptionGroup``) when it has unwound; after it, Ctrl-C gets Trio's usual handling, so a
    third one interrupts even a block that does not unwind. A SIGINT counts as the second when
    the block's event is already set, or when it comes within ``again_within`` seconds after a
    block a signal aborted closed: Ctrl-C twice in a row stops the program even when the turn
    ended at once and the next turn's block is already open.

    SIGTERM aborts like the first SIGINT, and the block then raises ``SystemExit(143)`` however
    it ends (:func:`run_app` prints one line); a signal after it stops hard, as a second SIGINT
    does, and the block raises ``SystemExit(143)`` too.

    Outside the blocks both signals behave as usual. Handlers are installed when the block opens
    and the ones found restored when it closes; blocks may follow each other or nest (a signal
    reaches every open block). Must be used from Trio's main thread (signal handlers are
    process-wide).

    Args:
        abort: The event to set (a fresh one by default).
        on_abort: Called once, synchronously, on the first signal (e.g. to print "aborting…");
            an exception it raises is logged to ``trio_harness.sigint``.
        again_within: Seconds after an aborted block closed within which a Ctrl-C still counts
            as the second one (``0``: only while the block is open).

    Returns:
        An async context manager whose ``async with ... as abort`` gives the abort event.

    Raises:
        RuntimeError: Not in the main thread (Python delivers signals to the main thread only).
        KeyboardInterrupt: After the second SIGINT, once the block unwound.
        SystemExit: ``SystemExit(143)`` after a SIGTERM, once the block ended.
    """
    return _AbortOnSigint(trio.Event() if abort is None else abort, on_abort, again_within)


class _AbortOnSigint:
    """:func:`abort_on_sigint`'s block. A class, not a generator: a signal that lands while the
    block opens must not leave a suspended generator for the interpreter to finalize after
    ``trio.run`` ended (it printed ``RunFinishedError`` after the app's last line)."""

    def __init__(
        self, event: trio.Event, on_abort: Callable[[], object] | None, again_within: float
    ) -> None:
        self._block = _Block(event, on_abort, again_within)
        self._watch: _Watch | None = None

    async def __aenter__(self) -> trio.Event:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("abort_on_sigint must be used from the main thread")
        block = self._block
        watch = self._watch = _current_watch()
        watch.open(block)
        block.scope.__enter__()
        return block.event

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        block, watch = self._block, self._watch
        assert watch is not None
        try:
            suppressed = block.scope.__exit__(exc_type, exc, tb)
        finally:
            watch.close(block)
            if block.signalled:
                watch.last_abort_end = trio.current_time()
            # Raised from `finally` on purpose: whatever the block raised, the user asked to stop.
            if block.terminated:
                raise _Terminated(EXIT_TERMINATED)
            if block.hard_stop:
                raise KeyboardInterrupt
        return bool(suppressed)


def run_app(
    main: Callable[..., Awaitable[Any]],
    *args: Any,
    interrupted: str | None = "interrupted",
    terminated: str | None = "terminated",
    **kwargs: Any,
) -> int:
    """Run an app's ``async`` main function with Trio; Ctrl-C or SIGTERM ends it with one line.

    Usage (the last line of a script)::

        sys.exit(th.run_app(main, args))

    A ``KeyboardInterrupt`` (bare, or the one error of an exception group) becomes the line
    ``interrupted`` on standard error and status 130. A SIGTERM stops the app the same way
    (outside an :func:`abort_on_sigint` block it interrupts like Ctrl-C; inside one it aborts the
    turn first) with the line ``terminated`` and status 143. Any other exception propagates as
    usual. After either line, SIGINT and SIGTERM are left at the system default, so one more
    while the interpreter shuts down (waiting for a thread, say) ends the process at once. The
    session log needs nothing more: the pool and :class:`~trio_harness.agent.Agent` keep it
    complete at every instant.

    Args:
        main: The app's main function.
        *args: Its positional arguments.
        interrupted: The line printed on Ctrl-C (``None``: print nothing).
        terminated: The line printed on SIGTERM (``None``: print nothing).
        **kwargs: Its keyword arguments.

    Returns:
        ``main``'s return value when it is an ``int``, else ``0``; 130 after Ctrl-C, 143 after
        SIGTERM.
    """
    term_seen = False

    def on_term(signum: int, frame: FrameType | None) -> None:
        # Outside the blocks, a SIGTERM interrupts as Ctrl-C does: the SIGINT handler in place
        # (Trio's, during the run) raises KeyboardInterrupt where that is safe.
        nonlocal term_seen
        term_seen = True
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, on_term) if main_thread else None
    try:
        result = trio.run(functools.partial(main, **kwargs) if kwargs else main, *args)
    except (KeyboardInterrupt, _Terminated) as error:
        stop: BaseException = error
    except BaseExceptionGroup as group:
        sole = sole_exception(group)
        if not isinstance(sole, KeyboardInterrupt | _Terminated):
            raise
        stop = sole
    else:
        return result if type(result) is int else 0
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    if main_thread:
        for signum in _SIGNALS:
            signal.signal(signum, signal.SIG_DFL)
    if term_seen or isinstance(stop, _Terminated):
        line, code = terminated, EXIT_TERMINATED
    else:
        line, code = interrupted, EXIT_INTERRUPTED
    if line is not None:
        print(f"\n{line}", file=sys.stderr, flush=True)
    return code
