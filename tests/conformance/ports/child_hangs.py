"""The child of ``wrapper_child_hangs.sh``: notes its pid in argv[1], answers the first case,
then reads on without ever answering (it dies only with its process group)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from trio_harness._conformance import answer_request_line

if __name__ == "__main__":
    Path(sys.argv[1]).write_text(str(os.getpid()), encoding="utf-8")
    for number, raw in enumerate(sys.stdin.buffer):
        if number == 0:
            sys.stdout.write(f"{answer_request_line(raw.decode('utf-8'))}\n")
            sys.stdout.flush()
