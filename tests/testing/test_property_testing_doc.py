"""The failures ``docs/property-testing.md`` shows are the ones its examples really produce.

The page is run in a fresh interpreter: hypothesis mixes constants found in the modules already
imported into what it draws, so a run inside the test session (after other tests imported more
modules) may shrink to a different, equally small, case.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.test_docs import FENCE

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "property-testing.md"
TEXT = re.compile(r"^```text\n(.*?)^```", re.MULTILINE | re.DOTALL)

RUN_THE_PAGE = """
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
namespace = {"__name__": "docs_property_testing"}
for index, block in enumerate(re.findall(sys.argv[2], page, re.MULTILINE | re.DOTALL)):
    exec(compile(block, f"property-testing.md[python block {index}]", "exec"), namespace)

def report(failure):
    notes = getattr(failure, "__notes__", [])
    return "\\n".join([f"{type(failure).__name__}: {failure}", *notes]) + "\\n"

print(json.dumps([report(namespace["sloppy_classifier"]), report(namespace["trusting_wrapper"])]))
"""


def test_the_failures_shown_are_the_real_ones() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", RUN_THE_PAGE, str(PAGE), FENCE.pattern],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    reports = json.loads(completed.stdout.splitlines()[-1])
    assert TEXT.findall(PAGE.read_text(encoding="utf-8"))[:2] == reports
