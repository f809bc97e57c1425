"""A port process, spoken to one JSON line at a time (``spec/PROTOCOL.md``).

:class:`PortProcess` starts the port's command line with pipes on its standard streams, sends one
case line and waits for one answer line, with a per-case timeout (and a start-up grace for the
first answer). What goes wrong is a :class:`PortError` carrying its :data:`Verdict`: ``crash``
(the port exited or closed its output), ``hang`` (no answer in time) or ``malformed`` (a line
that is not JSON). Used by ``conformance run`` (:mod:`.runner`) and ``conformance fuzz``
(:mod:`.fuzz`).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from typing import Any, Final, Literal

from .._json import js_json, loads_any_depth

__all__ = ["EXIT_CODES", "STARTUP_GRACE", "PortError", "PortProcess", "Verdict", "request_text"]

#: How a run (or one case) ended; ``pass`` and ``fail`` are about answers, the rest about the port.
Verdict = Literal["pass", "fail", "crash", "hang", "malformed"]
#: Exit status per verdict.
EXIT_CODES: Final[dict[str, int]] = {"pass": 0, "fail": 1, "crash": 3, "hang": 4, "malformed": 5}
#: Extra seconds the first answer of a port process may take (the port starting up).
STARTUP_GRACE: Final = 10.0
#: The longest answer line a port may write, newline included (a longer one is ``malformed``):
#: the runner never holds more than this of one answer in memory.
MAX_LINE_BYTES: Final = 16 * 2**20
#: Of each line a port writes on standard error, only this many bytes are kept (for quoting).
STDERR_LINE_BYTES: Final = 240
#: What the reader queues for a line past :data:`MAX_LINE_BYTES` (it then stops reading); no
#: line read is ever empty (``readline`` gives ``b""`` only at the end, which queues ``None``).
_TOO_LONG: Final = b""
#: What the exit watcher queues when the port process has exited (its output may still be held
#: open by a process it left behind, so no end of output may ever come).
_EXITED: Final = object()
#: Seconds an answer may still arrive after the port process exited.
EXIT_GRACE: Final = 1.0


_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def request_text(request: Any) -> str:
    """A request as one compact JSON line, its numbers written as Python holds them.

    ``2.0`` stays ``2.0``, ``1e+21`` and ``-0.0`` keep their float form and integers of any size
    their digits, so a port meets the number texts a case was written with (a JSON reader that
    tells ``2.0`` from ``2`` is a port bug the kit must be able to see); a lone surrogate is
    written as its ``\\u`` escape, as ``JSON.stringify`` does. The reference reads the same text.
    """
    text = json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _quote(line: bytes, limit: int = 120) -> str:
    """The line as a JSON string, cut to ``limit`` characters (as the runner quotes values)."""
    text = js_json(line.decode("utf-8", "replace"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PortError(Exception):
    """The port crashed, hung or wrote something that is not an answer line."""

    def __init__(self, verdict: Verdict, message: str) -> None:
        super().__init__(message)
        self.verdict = verdict


class PortProcess:
    """One running port process, spoken to one line at a time.

    The port runs in a process group (a session) of its own, and stopping it stops the whole
    group: a port behind a wrapper script (``sh``, ``npx``, ``cargo run``) has children that hold
    its pipes, and killing the wrapper alone would leave the runner waiting on them.
    """

    def __init__(self, command: str, timeout: float) -> None:
        self.command = command
        self.timeout = timeout
        self.process = subprocess.Popen(
            shlex.split(command, posix=os.name != "nt"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=os.name == "posix",
        )
        self.lines: queue.Queue[bytes | object | None] = queue.Queue()
        self.exited = threading.Event()
        self.requests: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: deque[str] = deque(maxlen=20)
        self.answered = 0
        self.threads = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._write, daemon=True),
            threading.Thread(target=self._drain_stderr, daemon=True),
            threading.Thread(target=self._watch_exit, daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        with stdout:  # closed here, by its one reader (close() may have left it to us)
            while True:
                line = stdout.readline(MAX_LINE_BYTES + 1)
                if len(line) > MAX_LINE_BYTES:
                    self.lines.put(_TOO_LONG)  # and read no further: the port is stopped
                    return
                if not line:
                    break
                self.lines.put(line)
        self.lines.put(None)

    def _write(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        while True:
            data = self.requests.get()
            if data is None:
                break
            try:
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                return
        with contextlib.suppress(OSError):
            stdin.close()

    def _drain_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        continued = False
        with stderr:  # closed here, by its one reader (close() may have left it to us)
            while chunk := stderr.readline(STDERR_LINE_BYTES):
                if not continued:  # the rest of a long line is read and dropped
                    self.stderr.append(chunk.decode("utf-8", "replace").rstrip("\n"))
                continued = not chunk.endswith(b"\n")

    def _watch_exit(self) -> None:
        self.process.wait()
        self.exited.set()
        self.lines.put(_EXITED)

    def _next_line(self, timeout: float) -> bytes | object | None:
        """The next line read, ``None`` at the end of the output, ``_EXITED`` when the port
        exited and no line came within :data:`EXIT_GRACE`; ``queue.Empty`` after ``timeout``."""
        end = time.monotonic() + timeout
        while True:
            if self.exited.is_set():
                end = min(end, time.monotonic() + EXIT_GRACE)
            try:
                item = self.lines.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                if self.exited.is_set():
                    return _EXITED
                raise
            if item is not _EXITED:
                return item

    def _stderr_tail(self) -> str:
        tail = list(self.stderr)[-5:]
        return ("; stderr: " + " | ".join(tail)) if tail else ""

    def ask(self, request: str | dict[str, Any]) -> Any:
        """Send one case (a JSON line as it is to be sent, or an object to write as one) and
        return the decoded answer line.

        Raises:
            PortError: The port crashed, hung or answered with a line that is not JSON.
        """
        text = request if isinstance(request, str) else request_text(request)
        self.requests.put(text.encode("utf-8") + b"\n")
        timeout = self.timeout + (STARTUP_GRACE if not self.answered else 0.0)
        try:
            line = self._next_line(timeout)
        except queue.Empty:
            raise PortError(
                "hang", f"no answer within {timeout:g} s{self._stderr_tail()}"
            ) from None
        self.answered += 1
        if line == _TOO_LONG:
            raise PortError("malformed", f"answer line longer than {MAX_LINE_BYTES} bytes")
        if line is None or line is _EXITED:
            try:
                code = self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
            # Let the stderr drain catch up before quoting it.
            self.threads[2].join(timeout=1)
            status = "closed its output" if code is None else f"exited with status {code}"
            raise PortError("crash", f"the port {status}{self._stderr_tail()}")
        assert isinstance(line, bytes)
        try:
            return loads_any_depth(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise PortError("malformed", f"not a JSON line: {_quote(line)}") from None

    def _kill_group(self) -> None:
        """Kill the port's whole process group (on POSIX; elsewhere the process)."""
        if os.name == "posix":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        elif self.process.poll() is None:
            self.process.kill()

    def close(self) -> None:
        self.requests.put(None)
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self._kill_group()
            self.process.wait()
        # Children left behind by a wrapper that exited would keep the pipes open.
        self._kill_group()
        for thread in self.threads:
            thread.join(timeout=2)
        reader, writer, drain = self.threads[:3]
        for stream, thread in (
            (self.process.stdout, reader),
            (self.process.stderr, drain),
            (self.process.stdin, writer),
        ):
            # A stream whose thread still reads is left to it: closing it would wait for the
            # thread's lock, i.e. for a process the port left behind (out of its group) to
            # close the pipe.
            if stream is not None and not thread.is_alive():
                with contextlib.suppress(OSError):
                    stream.close()

    def kill(self) -> None:
        self._kill_group()
        self.close()
