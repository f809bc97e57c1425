"""The kit ships with the package: a wheel installed into a fresh venv runs it without a checkout."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.conformance.support import REPO, SPEC
from trio_harness._conformance.runner import packaged_kit

KIT_FILES = (
    "COVERAGE.md",
    "FORMAT.md",
    "PROTOCOL.md",
    "README.md",
    "RULES.md",
    "UNREACHED.md",
    "VERSION",
    "scheduling-vectors.jsonl",
    "upstream-vectors.jsonl",
    "validation-edges.jsonl",
)


def test_the_packaged_kit_is_the_checkouts_kit() -> None:
    kit = packaged_kit()
    for name in KIT_FILES:
        assert (kit / name).read_bytes() == (SPEC / name).read_bytes(), name
    assert SPEC.resolve() == Path(str(kit)).resolve()


def run(*argv: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(arg) for arg in argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return done.stdout


@pytest.mark.slow
def test_a_wheel_in_a_fresh_venv_runs_the_kit_without_a_checkout(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "-q",
        "-w",
        wheels,
        REPO,
        cwd=tmp_path,
    )
    (wheel,) = wheels.glob("trio_harness-*.whl")
    fresh = tmp_path / "fresh"
    venv.create(fresh, with_pip=False)
    python = fresh / "bin" / "python"
    # The dependencies (trio, attrs, cattrs) come from this interpreter's site-packages, added
    # as a plain path: its .pth files (the editable install of the checkout) are not run.
    purelib = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (purelib / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    run(
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "-q",
        "--target",
        purelib,
        wheel,
        cwd=tmp_path,
    )
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    where = run(
        python, "-c", "import trio_harness; print(trio_harness.__file__)", cwd=away, env=env
    )
    assert Path(where.strip()).is_relative_to(purelib)
    only = [
        "--only",
        "validation/edges/numbers/*",
        "--only",
        "scheduling/edge/cap-*",
        "--only",
        "validation/upstream/validate/000*",
    ]
    out = run(python, "-m", "trio_harness", "conformance", "run", *only, cwd=away, env=env)
    assert "result: PASS" in out
    port = f"{python} -m trio_harness oracle"
    out = run(
        python, "-m", "trio_harness", "conformance", "run", "--port", port, *only, cwd=away, env=env
    )
    assert "result: PASS" in out
    assert f"conformance run against {port}" in out
