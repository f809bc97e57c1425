"""What ``import trio_harness`` costs beside ``import trio`` (issue 30: at most 1.5x).

Run: ``.venv/bin/python bench/bench_import.py [rounds] [--modules] [--source]``.

Each round starts two fresh interpreters, one running ``import trio`` and one running
``import trio_harness``, each under ``-X importtime`` (the interpreter's own per-module
account, in µs, of the cumulative time of the top-level import), in alternating order. Reported:
the median of the per-round ratios with the spread of the middle half, and the ratio of the
best rounds (on a shared machine the best round is the one least disturbed by neighbours).

Both imports read compiled bytecode, as an installed package does (pip compiles a wheel's
modules when it installs them): the interpreters write and read their ``.pyc`` files under a
private ``PYTHONPYCACHEPREFIX`` (warmed by one unmeasured import of each), whatever
``PYTHONDONTWRITEBYTECODE`` says. Without that, an editable checkout under
``PYTHONDONTWRITEBYTECODE=1`` compiles every ``trio_harness`` module from source on every run
while ``trio`` reads its installed bytecode, and the ratio measures the compiler.
``--source`` measures that way instead (the environment as it is).
``--modules`` also lists the modules ``import trio_harness`` loads beyond ``import trio``,
with their best self time over the rounds.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

TARGET = 1.5


def _importtime(module: str, env: dict[str, str] | None) -> dict[str, tuple[int, int]]:
    """``{module: (self µs, cumulative µs)}`` of one fresh ``python -X importtime -c import``."""
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    found: dict[str, tuple[int, int]] = {}
    for line in completed.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|")
        found[name.strip()] = (int(own), int(cumulative))
    return found


def measure(rounds: int, *, source: bool = False) -> dict[str, object]:
    """Per-round cumulative µs of both imports, and the best self µs of every extra module.

    With ``source``, the environment is used as it is (see the module docstring); else both
    read bytecode from a private cache, warmed first.
    """
    if source:
        return _measure(rounds, None)
    with tempfile.TemporaryDirectory(prefix="bench-import-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        for module in ("trio", "trio_harness"):
            _importtime(module, env)
        return _measure(rounds, env)


def _measure(rounds: int, env: dict[str, str] | None) -> dict[str, object]:
    trio_us: list[int] = []
    harness_us: list[int] = []
    extra: dict[str, int] = {}
    for round_ in range(rounds):
        order = ("trio", "trio_harness") if round_ % 2 == 0 else ("trio_harness", "trio")
        runs = {module: _importtime(module, env) for module in order}
        trio_us.append(runs["trio"]["trio"][1])
        harness_us.append(runs["trio_harness"]["trio_harness"][1])
        for name, (own, _) in runs["trio_harness"].items():
            if name not in runs["trio"]:
                extra[name] = min(extra.get(name, own), own)
    ratios = sorted(h / t for h, t in zip(harness_us, trio_us, strict=True))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return {
        "trio_ms": min(trio_us) / 1000,
        "harness_ms": min(harness_us) / 1000,
        "median": statistics.median(ratios),
        "q1": quartiles[0],
        "q3": quartiles[2],
        "best": min(harness_us) / min(trio_us),
        "extra": extra,
    }


def main(argv: list[str]) -> None:
    rounds = int(argv[0]) if argv and argv[0].isdigit() else 15
    source = "--source" in argv
    found = measure(rounds, source=source)
    print(
        f"import trio {found['trio_ms']:.1f} ms, import trio_harness {found['harness_ms']:.1f} ms"
        f" (best of {rounds}, {'as the environment is' if source else 'from bytecode'}); ratio median {found['median']:.2f}x"
        f" (middle half {found['q1']:.2f}-{found['q3']:.2f}x), best/best {found['best']:.2f}x;"
        f" target <= {TARGET}x"
    )
    if "--modules" in argv:
        extra = found["extra"]
        assert isinstance(extra, dict)
        for name, own in sorted(extra.items(), key=lambda item: -item[1]):
            print(f"{own / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
