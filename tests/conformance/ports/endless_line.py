"""A port that answers with a line that never ends; with argv[1] ``stderr``, it answers the first
case and then writes a never-ending line on standard error instead of the next answer."""

from __future__ import annotations

import sys

from trio_harness._conformance import answer_request_line

if __name__ == "__main__":
    on_stderr = sys.argv[1:] == ["stderr"]
    first = sys.stdin.buffer.readline()
    if on_stderr:
        sys.stdout.write(f"{answer_request_line(first.decode('utf-8'))}\n")
        sys.stdout.flush()
        sys.stdin.buffer.readline()
    stream = sys.stderr if on_stderr else sys.stdout
    chunk = "x" * 65536
    try:
        while True:
            stream.write(chunk)
    except (BrokenPipeError, OSError):
        pass
