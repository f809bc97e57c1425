"""A port that answers one case, then reads on without ever answering again."""

from __future__ import annotations

import sys

from trio_harness._conformance import answer_request_line

if __name__ == "__main__":
    for number, raw in enumerate(sys.stdin.buffer):
        if number == 0:
            sys.stdout.write(f"{answer_request_line(raw.decode('utf-8'))}\n")
            sys.stdout.flush()
