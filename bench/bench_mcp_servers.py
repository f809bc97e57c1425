"""Real MCP servers through ``open_stdio``: what registers, what is checked, what agrees.

Usage::

    .venv/bin/python bench/bench_mcp_servers.py SCRATCH [--install] [--only a,b] [--samples N]

``SCRATCH`` is a directory of its own (created; reused between runs): each server of
:mod:`mcp_servers_table` is installed there in its own environment (``--install``: ``npm install
--prefix SCRATCH/npm/<name>`` from the npm registry, a venv ``SCRATCH/py/<name>`` with ``pip
install`` from PyPI; an installed one is kept), then started with
:func:`trio_harness.mcp.open_stdio` (a subprocess on stdio, nothing listens on a port), its tools
listed and registered, and stopped. Node is the first ``node`` on ``PATH`` unless ``NODE``
names one (its directory goes first on the server's ``PATH``). Every server is bounded in real
time (``START_S`` to start, list and stop) and stopped when its block ends; no tool is called, and
the values are checked locally after it stopped. Servers get a home of their own under
``SCRATCH/data/`` and ``DO_NOT_TRACK=1``.

Per server the table says: tools listed, registered, fully checked (arguments exactly as
declared, ``structuredContent`` checked when there is an ``outputSchema``), refused (each reason
names the keyword), and how many values were compared, valid and invalid by ``jsonschema``, with
the disagreements: for each registered tool, ``N`` values drawn from its normalised schema
(:mod:`mcp_values`, any vocabulary) and their mutants (a required property left out, a property
of another type, an undeclared one, a bound crossed), plus, where the normalised schema is in the
strict subset, ``N`` values of ``trio_harness.testing.valid_values`` and ``N`` of
``invalid_values``. Local acceptance (the normalised schema the toolset registered, as its
validator checks it) is compared with ``jsonschema.Draft202012Validator`` of the published
schema. playwright is started a second time with ``optional_defaults=True`` (its zod
output-mode schemas): that row counts the tools the option eased and whether
``browser_take_screenshot {"type": "png"}`` is accepted locally. Results also go to
``SCRATCH/results.json``; the servers' stderr to ``SCRATCH/logs/``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import mcp.types as mcp_types
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_servers_table import SERVERS, Server
from mcp_values import mutants, random_value

import trio_harness as th
from trio_harness.lowlevel import compile_extended_validator
from trio_harness.mcp import McpToolReport, open_stdio
from trio_harness.testing import invalid_values, valid_values

#: Seconds one install may take.
INSTALL_S = 600
#: Seconds a server may take to start and list its tools (real time).
START_S = 90


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
    if program(scratch, server).exists() and not server.requirements:
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
        commands = (
            [] if (base / "bin" / "pip").exists() else [[sys.executable, "-m", "venv", str(base)]]
        )
        commands.append(
            [str(base / "bin" / "pip"), "install", "-q", server.package, *server.requirements]
        )
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


def prepare(scratch: Path) -> None:
    """The data the servers are pointed at: a directory of files, a git repository, ..."""
    data = scratch / "data"
    for name in ("files", "pdfs", "excel", "home", "mongo"):
        (data / name).mkdir(parents=True, exist_ok=True)
    (data / "files" / "hello.txt").write_text("hello\n", encoding="utf-8")
    repo = data / "repo"
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        (repo / "README").write_text("bench repository\n", encoding="utf-8")
        git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        for command in (["init", "-q"], ["add", "README"], ["commit", "-q", "-m", "first"]):
            subprocess.run([*git, *command], check=True, timeout=60)


def server_env(scratch: Path, server: Server) -> dict[str, str]:
    """The server's environment (over the SDK's default set): Node first on ``PATH``, a home of
    its own under the scratch directory, telemetry off."""
    node = os.environ.get("NODE")
    path = os.environ.get("PATH", "")
    if node:
        path = f"{Path(node).resolve().parent}{os.pathsep}{path}"
    return {
        "PATH": path,
        "HOME": str(scratch / "data" / "home"),
        "DO_NOT_TRACK": "1",
        **server.env(scratch),
    }


def sample(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """``count`` examples of ``strategy``, reproducibly (derandomized hypothesis)."""
    out: list[Any] = []

    @settings(
        max_examples=count,
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out[:count]


@attrs.define
class Agreement:
    """Values drawn for one server's tools, and whether the local check agreed with jsonschema."""

    valid: int = 0
    invalid: int = 0
    from_strategies: int = 0
    disagreements: list[str] = attrs.Factory(list)


def agree(tool: Any, count: int, tally: Agreement, seed: int) -> None:
    """Draw values from ``tool``'s published ``inputSchema``; compare local acceptance (the
    normalised schema the toolset registered) with ``jsonschema`` of the published schema."""
    original = tool.input_schema
    report = th.schema.normalize_json_schema(original)
    local = compile_extended_validator(report.schema)
    theirs = jsonschema.Draft202012Validator(original)
    rng = random.Random(seed)
    values = [random_value(report.schema, rng) for _ in range(count)]
    values += [m for value in list(values) for m in mutants(report.schema, value, rng)]
    try:
        th.assert_supported_json_schema(report.schema)
    except th.JsonSchemaError:
        pass
    else:  # inside the strict subset: the library's own strategies reach the edges too
        drawn = sample(valid_values(report.schema, big_numbers=False), count)
        drawn += sample(invalid_values(report.schema, non_lossless=False), count)
        tally.from_strategies += len(drawn)
        values += drawn
    for value in values:
        ours = local(value, "") == []
        expected = theirs.is_valid(value)
        if expected:
            tally.valid += 1
        else:
            tally.invalid += 1
        if ours != expected:
            tally.disagreements.append(
                f"{tool.name}: {json.dumps(value)[:200]} local {ours}, jsonschema {expected}"
            )


async def list_all(session: Any) -> list[Any]:
    """Every page of the server's ``tools/list`` (the raw tools, with their published schemas)."""
    tools: list[Any] = []
    cursor = None
    while True:
        params = None if cursor is None else mcp_types.PaginatedRequestParams(cursor=cursor)
        listing = await session.list_tools(params=params)
        tools.extend(listing.tools)
        cursor = listing.next_cursor
        if cursor is None:
            return tools


async def run_server(
    scratch: Path, server: Server, samples: int, optional_defaults: bool
) -> dict[str, Any]:
    """Start ``server``, register its tools, draw values; one row of the table."""
    row: dict[str, Any] = {
        "server": server.name + (" (optional_defaults)" if optional_defaults else ""),
        "package": server.package,
    }
    executable = program(scratch, server)
    if not executable.exists():
        row["error"] = "not installed"
        return row
    runtime = th.ToolRuntime()
    log = scratch / "logs" / f"{server.name}.log"
    log.parent.mkdir(exist_ok=True)
    try:
        with trio.fail_after(START_S):
            async with open_stdio(
                runtime,
                str(executable),
                *server.args(scratch),
                env=server_env(scratch, server),
                cwd=scratch / "data",
                stderr=log,
                name=server.name,
                optional_defaults=optional_defaults,
            ) as connection:
                reports: list[McpToolReport] = connection.reports
                tools = await list_all(connection.session)
    except Exception as error:  # a server that fails to start is a row, not the end
        notes = "; ".join(getattr(error, "__notes__", []))
        row["error"] = f"{type(error).__name__}: {error} {notes}".strip()
        return row
    row["listed"] = len(reports)
    row["registered"] = sum(r.registered for r in reports)
    row["fully_checked"] = sum(r.fully_checked for r in reports)
    row["refused"] = {r.name: list(r.reasons) for r in reports if not r.registered}
    row["changes"] = Counter(
        change.split(": ", 1)[1] for r in reports for change in r.changes
    ).most_common(8)
    row["eased"] = sorted(
        r.name for r in reports if any("(optional_defaults)" in change for change in r.changes)
    )
    screenshot = next((t for t in tools if t.name == "browser_take_screenshot"), None)
    if screenshot is not None:
        # The case: {"type": "png"}, accepted by the server.
        eased = th.schema.normalize_json_schema(
            screenshot.input_schema, optional_defaults=optional_defaults
        )
        check = compile_extended_validator(eased.schema)
        row["screenshot_png_accepted"] = check({"type": "png"}, "") == []
    if not optional_defaults:
        tally = Agreement()
        registered = {r.name for r in reports if r.registered}
        for index, tool in enumerate(tools):
            if tool.name in registered:
                agree(tool, samples, tally, seed=index)
        row["valid"] = tally.valid
        row["invalid"] = tally.invalid
        row["from_strategies"] = tally.from_strategies
        row["disagreements"] = tally.disagreements
    return row


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table (and the refusals below it)."""
    lines = [
        "| server | tools listed | registered | fully checked | refused | values valid / invalid"
        " | disagreements with jsonschema |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    totals = Counter[str]()
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['server']} | - | - | - | - | - | - |")
            notes.append(f"- {row['server']}: {row['error']}")
            continue
        agreement = (
            f"{row['valid']} / {row['invalid']}" if "valid" in row else "(same schemas, see above)"
        )
        disagreements = len(row["disagreements"]) if "valid" in row else "-"
        lines.append(
            f"| {row['server']} | {row['listed']} | {row['registered']} | {row['fully_checked']}"
            f" | {len(row['refused'])} | {agreement} | {disagreements} |"
        )
        if "valid" in row:
            for key in ("listed", "registered", "fully_checked", "valid", "invalid"):
                totals[key] += row[key]
            totals["refused"] += len(row["refused"])
            totals["disagreements"] += len(row["disagreements"])
        for name, reasons in row["refused"].items():
            notes.append(f"- {row['server']} `{name}`: {'; '.join(reasons)}")
        notes.extend(f"- {row['server']} disagreement: {d}" for d in row.get("disagreements", []))
    lines.append(
        f"| **all** | {totals['listed']} | {totals['registered']} | {totals['fully_checked']}"
        f" | {totals['refused']} | {totals['valid']} / {totals['invalid']}"
        f" | {totals['disagreements']} |"
    )
    return "\n".join([*lines, "", *notes])


async def run_all(scratch: Path, chosen: list[Server], samples: int) -> list[dict[str, Any]]:
    rows = []
    for server in chosen:
        if server.offline is not None:
            rows.append({"server": server.name, "error": f"not started: {server.offline}"})
            continue
        for optional_defaults in (False, True) if server.optional_defaults else (False,):
            row = await run_server(scratch, server, samples, optional_defaults)
            print(json.dumps({k: v for k, v in row.items() if k != "disagreements"})[:400])
            rows.append(row)
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("scratch", type=Path)
    parser.add_argument("--install", action="store_true", help="install missing servers first")
    parser.add_argument("--install-only", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated server names")
    parser.add_argument("--samples", type=int, default=20, help="values drawn per tool")
    options = parser.parse_args(argv)
    scratch: Path = options.scratch.resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    chosen = [s for s in SERVERS if not options.only or s.name in options.only.split(",")]
    if options.install or options.install_only:
        if shutil.which("npm") is None:
            print("npm is not on PATH: the npm servers cannot be installed")
        for server in chosen:
            failure = install(scratch, server, scratch / "install.log")
            print(f"{server.name}: {failure or 'installed'}", flush=True)
    if options.install_only:
        return 0
    prepare(scratch)
    rows = trio.run(run_all, scratch, chosen, options.samples)
    (scratch / "results.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print()
    print(f"{datetime.date.today().isoformat()}, {len(chosen)} servers, {options.samples} values")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
