"""A port that prints a log line instead of an answer."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    for _ in sys.stdin.buffer:
        sys.stdout.write("INFO starting up the port, please wait\n")
        sys.stdout.flush()
