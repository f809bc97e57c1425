"""A port that answers two cases correctly, then dies."""

from __future__ import annotations

import sys

from trio_harness._conformance import answer_request_line

if __name__ == "__main__":
    for answered, raw in enumerate(sys.stdin.buffer):
        if answered == 2:
            sys.stderr.write("port: internal error, giving up\n")
            sys.stderr.flush()
            sys.exit(3)
        sys.stdout.write(f"{answer_request_line(raw.decode('utf-8'))}\n")
        sys.stdout.flush()
