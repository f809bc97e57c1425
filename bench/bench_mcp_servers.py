"""Real MCP servers through ``open_stdio``: what registers, what is checked, what agrees.

Usage::

    .venv/bin/python bench/bench_mcp_servers.py SCRATCH [--install] [--only a,b] [--samples N]

``SCRATCH`` is a directory of its own (created; reused between runs): each server of
:mod:`mcp_servers_table` is installed there in its own environment (``--install``: ``npm install
--prefix SCRATCH/npm/<name>`` from the npm registry, a venv ``SCRATCH/py/<name>`` with ``pip
install`` from PyPI; an installed one is kept), then started with
:func:`trio_harness.mcp.open_stdio` (a subprocess on stdio, nothing listens on a port), its tools
listed and registered, and stopped. Node is the first ``node`` on ``PATH`` unless ``NODE``
names one. Every server is bounded in real time (``START_S`` to start and list, ``CALLS_S`` for
the samples) and stopped when its block ends; no tool is called.

Per server the table says: tools listed, registered, fully checked (arguments exactly as
declared, ``structuredContent`` checked when there is an ``outputSchema``), refused (each reason
names the keyword), and for ``N`` values drawn from each registered tool's own published
``inputSchema`` (``trio_harness.testing.json_schema_values``, as ``jsonschema`` sees it) plus one
mutant of each (a property removed, one changed to another type, one added), whether the local
check (the registered tool's validator: the normalised schema) accepts exactly what
``jsonschema.Draft202012Validator`` of the published schema accepts. A server whose tools need an
option (``optional_defaults=True`` for playwright's zod output-mode schemas) is also counted with
it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_servers_table import SERVERS, Server

#: Seconds one install may take.
INSTALL_S = 600


def env_dir(scratch: Path, server: Server) -> Path:
    """Where ``server``'s environment lives."""
    return scratch / ("npm" if server.kind == "npm" else "py") / server.name


def program(scratch: Path, server: Server) -> Path:
    """The server's executable."""
    base = env_dir(scratch, server)
    if server.kind == "npm":
        return base / "node_modules" / ".bin" / server.program
    return base / "bin" / server.program


def install(scratch: Path, server: Server, log: Path) -> str | None:
    """Install ``server`` in its own environment; ``None`` or why it failed."""
    if program(scratch, server).exists():
        return None
    base = env_dir(scratch, server)
    base.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    # Installs fetch packages only: no browser, no prebuilt binary from elsewhere.
    env.update(PUPPETEER_SKIP_DOWNLOAD="1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
    if server.kind == "npm":
        commands = [
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(base), server.package]
        ]
    else:
        commands = [
            [sys.executable, "-m", "venv", str(base)],
            [str(base / "bin" / "pip"), "install", "-q", server.package],
        ]
    with log.open("a", encoding="utf-8") as out:
        for command in commands:
            out.write(f"$ {' '.join(command)}\n")
            out.flush()
            try:
                done = subprocess.run(
                    command, stdout=out, stderr=out, env=env, timeout=INSTALL_S, check=False
                )
            except subprocess.TimeoutExpired:
                return f"install took more than {INSTALL_S} s"
            if done.returncode != 0:
                return f"install failed (exit {done.returncode}; see {log})"
    if not program(scratch, server).exists():
        return f"installed, but no {server.program} in its environment"
    return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scratch", type=Path)
    parser.add_argument("--install", action="store_true")
    parser.add_argument("--install-only", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--samples", type=int, default=20)
    options = parser.parse_args(argv)
    scratch: Path = options.scratch.resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    chosen = [s for s in SERVERS if not options.only or s.name in options.only.split(",")]
    if options.install or options.install_only:
        for server in chosen:
            failure = install(scratch, server, scratch / "install.log")
            print(f"{server.name}: {failure or 'installed'}", flush=True)
    if options.install_only:
        return 0
    if shutil.which("npm") is None:
        print("npm is not on PATH: the npm servers are skipped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
