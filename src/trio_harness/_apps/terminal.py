"""A terminal under Trio: lines read without blocking the loop, and an approval prompt.

Standard input is read by a worker thread (``os.read`` on the descriptor), never by the Trio
loop itself. Why not ``trio.lowlevel.FdStream(0)``: it puts the descriptor in non-blocking
mode, and that flag belongs to the open file description, which a terminal shares with the
shell and every other program on it (they then see ``EAGAIN``, and a shell may exit); it also
refuses regular files (``< answers.txt``) and does not exist on Windows. The thread costs
nothing while it waits, and works on a terminal, a pipe and a file alike.

A blocked ``os.read`` cannot be interrupted, so a wait that is cancelled (Ctrl-C aborting the
turn) leaves its thread reading; :class:`LineReader` keeps that one read and gives the line it
returns to the *next* caller, so no typed line is lost or read twice, and at most one thread
ever reads.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable
from typing import Final

import trio

from .._json import parse_arguments
from .approval_log import ApprovalDecision, PendingCall

__all__ = ["LineReader", "TerminalApproval"]


class LineReader:
    """Lines of a file descriptor (standard input by default), awaited under Trio.

    Args:
        fd: The descriptor to read.
    """

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._lines: list[str | None] = []  # read and not yet taken; None is the end
        self._reading = False
        self._buffer = b""
        self._wakeup: Callable[[], None] | None = None

    def _read(self) -> None:
        # The reading thread: one line (or the end), then it stops.
        data = self._buffer
        while b"\n" not in data:
            try:
                chunk = os.read(self._fd, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                break
            data += chunk
        line, newline, rest = data.partition(b"\n")
        with self._lock:
            self._buffer = rest
            self._lines.append(line.decode("utf-8", errors="replace") if newline or line else None)
            self._reading = False
            wakeup, self._wakeup = self._wakeup, None
        if wakeup is not None:
            # The run that waited may be over: the line is kept for the next one.
            with contextlib.suppress(trio.RunFinishedError):
                wakeup()

    async def read_line(self) -> str:
        """The next line, without its line ending.

        Raises:
            EOFError: The input ended.
        """
        while True:
            event = trio.Event()
            token = trio.lowlevel.current_trio_token()
            with self._lock:
                if self._lines:
                    line = self._lines.pop(0)
                    if line is None:
                        self._lines.insert(0, None)  # the end stays the end
                        raise EOFError
                    return line.rstrip("\r")
                self._wakeup = functools.partial(token.run_sync_soon, event.set)
                if not self._reading:
                    self._reading = True
                    threading.Thread(target=self._read, daemon=True).start()
            await event.wait()


_HELP: Final = "  y = run it, n = refuse it, n <why> = refuse it and tell the model why"


class TerminalApproval:
    """An inline approval prompt: ``open_agent(..., approval=TerminalApproval())``.

    For each call it prints the tool, its arguments and the reason, and reads the answer:
    ``y`` / ``yes`` approves, ``n`` / ``no`` rejects, ``n <message>`` rejects and tells the model
    why; anything else asks again. It waits in a worker thread (see the module docstring), so
    the loop goes on (an MCP server, other tools), and an abort cancels the wait: with
    ``abort_on_sigint``, Ctrl-C at the prompt aborts the turn and the call is answered
    ``ABORTED_BEFORE_DISPATCH`` (it never ran). At the end of the input every call is rejected.

    Args:
        reader: Where answers come from (share one :class:`LineReader` with the app's own
            prompt, so a line typed after a Ctrl-C goes to the next question, never lost).
        write: Where the question goes (default: standard output, flushed).
    """

    def __init__(
        self, reader: LineReader | None = None, write: Callable[[str], object] | None = None
    ) -> None:
        self.reader = reader if reader is not None else LineReader()
        self._write = write if write is not None else _stdout

    async def ask(self, prompt: str) -> str:
        """Write ``prompt`` and read one line (``EOFError`` at the end)."""
        self._write(prompt)
        return await self.reader.read_line()

    async def __call__(self, call: PendingCall) -> ApprovalDecision:
        """Ask about ``call`` until the answer is yes or no."""
        self._write(f"approve {call.name} ({call.call_id})? {call.reason or ''}\n")
        self._write(f"  arguments: {_pretty(call.arguments)}\n")
        while True:
            try:
                answer = (await self.ask("approve? [y/n] ")).strip()
            except EOFError:
                return ApprovalDecision.reject("no one was there to approve it")
            word, _, message = answer.partition(" ")
            if word.lower() in ("y", "yes"):
                return ApprovalDecision.approve()
            if word.lower() in ("n", "no"):
                return ApprovalDecision.reject(message.strip() or None)
            self._write(_HELP + "\n")


def _pretty(arguments: str) -> str:
    value = parse_arguments(arguments)
    if isinstance(value, dict):
        return ", ".join(f"{key}={_short(repr(item))}" for key, item in value.items())
    return _short(arguments)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
