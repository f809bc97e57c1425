"""The test server (``server_app.py``) with one more tool, ``progress``: it draws a ``\\r``
progress bar of ``megabytes`` MB on its standard error (no newline until the end), as a server
showing a download does, and answers once the client has read it all (the pipe is small)."""

from __future__ import annotations

import sys

from server_app import app


@app.tool()
def progress(megabytes: int) -> str:
    """Draw a progress bar on stderr."""
    frames = megabytes * 1024 * 1024 // 64
    frame = "\r[" + "#" * 50 + "] {:>9}/{:>9}"
    chunk = "".join(frame.format(i, frames) for i in range(1024))
    for _ in range(frames // 1024):
        sys.stderr.write(chunk)
    sys.stderr.write(f"\r[{'#' * 50}] done\n")
    sys.stderr.flush()
    return "drawn"


if __name__ == "__main__":
    app.run("stdio")
