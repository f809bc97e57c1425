"""The failures ``docs/property-testing.md`` shows are the ones its examples really produce.

Hypothesis mixes the literals of every local module imported (trio_harness, installed editable,
is one; test files are not) into what it draws, so the search path of the page's examples moves
whenever a literal anywhere in the library changes, or another test in the session imported more
modules. The page is run in a fresh interpreter, and its examples are written so that the search
finds the bug and shrinks it to the same case whatever those literals are: the second test runs
the page beside modules of made-up literals.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_docs import FENCE

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "property-testing.md"
TEXT = re.compile(r"^```text\n(.*?)^```", re.MULTILINE | re.DOTALL)
# On a CI machine (``CI`` set) Hypothesis prints each failure's ``@reproduce_failure`` blob as a
# note of its own; the blob encodes the draws, not the case, so the page leaves it out.
BLOB = re.compile(
    r"\n\nYou can reproduce this test case by temporarily adding @reproduce_failure\(.*\n\Z",
    re.DOTALL,
)

RUN_THE_PAGE = """
import json, re, sys
for literals in sys.argv[3:]:
    sys.path.insert(0, literals)
    __import__("made_up_literals")
page = open(sys.argv[1], encoding="utf-8").read()
namespace = {"__name__": "docs_property_testing"}
for index, block in enumerate(re.findall(sys.argv[2], page, re.MULTILINE | re.DOTALL)):
    exec(compile(block, f"property-testing.md[python block {index}]", "exec"), namespace)

def report(failure):
    notes = getattr(failure, "__notes__", [])
    return "\\n".join([f"{type(failure).__name__}: {failure}", *notes]) + "\\n"

print(json.dumps([report(namespace["sloppy_classifier"]), report(namespace["trusting_wrapper"])]))
"""


def run_the_page(*literals: Path, ci: bool = False) -> list[str]:
    environment = {name: value for name, value in os.environ.items() if name != "CI"}
    if ci:
        environment["CI"] = "true"
    completed = subprocess.run(
        [sys.executable, "-c", RUN_THE_PAGE, str(PAGE), FENCE.pattern, *map(str, literals)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
        env=environment,
    )
    assert completed.returncode == 0, completed.stderr
    reports: list[str] = json.loads(completed.stdout.splitlines()[-1])
    return [BLOB.sub("\n", report) for report in reports]


def shown() -> list[str]:
    return TEXT.findall(PAGE.read_text(encoding="utf-8"))[:2]


@pytest.mark.parametrize("ci", [False, True], ids=["local", "on-ci"])
def test_the_failures_shown_are_the_real_ones(ci: bool) -> None:
    """Locally and on a CI machine, where Hypothesis derandomizes and prints blobs."""
    assert run_the_page(ci=ci) == shown()


def made_up_literals(directory: Path, seed: int) -> Path:
    """A module of literals such as a change to the library adds: strings, big numbers."""
    chance = random.Random(seed)
    strings = {
        "".join(chance.choice('abtmp/{}"0_ \u00e9') for _ in range(chance.randint(1, 8)))
        for _ in range(chance.randint(10, 60))
    }
    integers = [chance.choice((-1, 1)) * chance.randint(100, 10**6) for _ in range(20)]
    floats = [chance.uniform(-1e3, 1e3) for _ in range(chance.randint(0, 10))]
    directory.mkdir()
    (directory / "made_up_literals.py").write_text(
        f"STRINGS = {sorted(strings)!r}\nNUMBERS = {integers + floats!r}\n", encoding="utf-8"
    )
    return directory


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_the_failures_shown_do_not_depend_on_the_literals_around(tmp_path: Path, seed: int) -> None:
    assert run_the_page(made_up_literals(tmp_path / "literals", seed)) == shown()
