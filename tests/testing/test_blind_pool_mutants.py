"""The pool bugs blind authors wrote (issue 28, then a second round), kept by the project's own
mutation test.

``blind_pool_mutants.json`` holds 78 plausible pool bugs written by two authors who never saw
the monitor's rules (62 for issue 28; ``b01``-``b16`` from a second round, which found one
gap: ``b08``, a refusal answered after the abort turned into ``ABORTED_BEFORE_DISPATCH``, now
the runner's ``policy`` rule), each as text substitutions on the package (made from the
authors' patches);
``blind_pool_scenarios.py`` holds, for each, the hand-made scenario that reaches it. The slow
test plants each bug in a temporary copy of the package and requires ``run_pool_scenario`` to
report it under the rule it breaks (``rule`` in the JSON); the fast tests check that the correct
pool keeps every guarantee on every scenario and that every substitution still applies.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trio_harness import testing

from .blind_pool_scenarios import SCENARIOS

HERE = Path(__file__).parent
PACKAGE = Path(testing.__file__).parent
MUTANTS: dict[str, dict[str, object]] = json.loads(
    (HERE / "blind_pool_mutants.json").read_text(encoding="utf-8")
)

#: Mutants no run of the pool can tell from the correct one, with the reason (none so far).
EQUIVALENT: dict[str, str] = {}
#: Observable mutants the hand-made scenario does not reach yet, with what is missing.
NOT_REACHED: dict[str, str] = {}

_RUNNER = """
import json, sys
sys.path.insert(0, sys.argv[2])
from blind_pool_scenarios import SCENARIOS
from trio_harness import testing
found = testing.run_pool_scenario(SCENARIOS[sys.argv[1]])
print("RULES" + json.dumps(sorted({violation.rule for violation in found})))
"""


def test_every_blind_mutant_has_a_scenario_and_a_rule() -> None:
    assert sorted(SCENARIOS) == sorted(MUTANTS)
    for name, mutant in MUTANTS.items():
        assert mutant["subs"], name
        assert name in EQUIVALENT or name in NOT_REACHED or isinstance(mutant.get("rule"), str)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_substitution_still_applies_once(name: str) -> None:
    for file, old, _new in MUTANTS[name]["subs"]:  # type: ignore[attr-defined]
        assert (PACKAGE / file).read_text(encoding="utf-8").count(old) == 1, (name, file)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_correct_pool_keeps_every_guarantee_on_each_scenario(name: str) -> None:
    assert testing.run_pool_scenario(SCENARIOS[name]) == []


def planted(name: str, root: Path) -> Path:
    """A copy of the package under ``root`` with mutant ``name`` planted; returns its parent."""
    target = root / "trio_harness"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    for file, old, new in MUTANTS[name]["subs"]:  # type: ignore[attr-defined]
        path = target / file
        path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(MUTANTS) - set(EQUIVALENT) - set(NOT_REACHED)))
def test_each_blind_mutant_is_reported_under_its_rule(name: str, tmp_path: Path) -> None:
    root = planted(name, tmp_path)
    env = dict(os.environ, PYTHONPATH=str(root))
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, name, str(HERE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RULES")]
    assert lines, done.stderr[-2000:]
    assert MUTANTS[name]["rule"] in json.loads(lines[0][5:]), (MUTANTS[name], lines[0])
