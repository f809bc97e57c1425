"""Running a Python subprocess from a Trio test: read its output line by line, signal it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import trio

#: Wall-clock bound for every wait on a subprocess (they finish in well under a second).
TIMEOUT = 30


@attrs.define(eq=False)
class Child:
    """A subprocess with a line reader on its stdout."""

    process: trio.Process
    _buffer: bytearray = attrs.field(factory=bytearray)
    lines: list[str] = attrs.field(factory=list)

    async def next_line(self) -> str:
        """The next stdout line (bounded in time)."""
        assert self.process.stdout is not None
        with trio.fail_after(TIMEOUT):
            while b"\n" not in self._buffer:
                data = await self.process.stdout.receive_some()
                if not data:
                    raise EOFError(f"stdout closed; lines so far: {self.lines}")
                self._buffer += data
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        text = line.decode()
        self.lines.append(text)
        return text

    async def wait_for(self, text: str) -> None:
        """Read lines until one contains ``text``."""
        while text not in await self.next_line():
            pass

    async def wait_for_prompt(self, prompt: str) -> None:
        """Read until the unfinished last line is ``prompt`` (a program waiting for input)."""
        assert self.process.stdout is not None
        with trio.fail_after(TIMEOUT):
            while True:
                while b"\n" in self._buffer:
                    await self.next_line()
                if self._buffer.decode(errors="replace") == prompt:
                    return
                data = await self.process.stdout.receive_some()
                if not data:
                    raise EOFError(f"stdout closed; lines so far: {self.lines}")
                self._buffer += data

    def interrupt(self) -> None:
        """Send SIGINT."""
        self.process.send_signal(signal.SIGINT)

    async def finish(self) -> tuple[int, str, str]:
        """Wait for exit; return ``(returncode, rest of stdout, stderr)``."""
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        with trio.fail_after(TIMEOUT):
            out, err = bytearray(self._buffer), bytearray()
            async with trio.open_nursery() as nursery:

                async def pump(stream: trio.abc.ReceiveStream, into: bytearray) -> None:
                    while data := await stream.receive_some():
                        into += data

                nursery.start_soon(pump, self.process.stdout, out)
                nursery.start_soon(pump, self.process.stderr, err)
            code = await self.process.wait()
        return code, out.decode(), err.decode()


@asynccontextmanager
async def spawn(
    args: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stdin: bool = False,
) -> AsyncIterator[Child]:
    """Run ``python <args>`` with piped output (and a stdin pipe that stays open, with
    ``stdin=True``); killed on exit if still running."""
    process = await trio.lowlevel.open_process(
        [sys.executable, *args],
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        cwd=cwd,
    )
    try:
        yield Child(process)
    finally:
        if process.returncode is None:
            process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    await stream.aclose()
