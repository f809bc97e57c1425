"""The conformance kit: scheduling scenarios, the one oracle, the runner, fuzzing.

Modules, in dependency order:

* :mod:`.scenario_format` — the scenario format of ``spec/FORMAT.md`` as typed values, and
  :func:`parse_scenario`;
* :mod:`.scenario` — a scenario played on the real pool under ``MockClock`` (:func:`run_scenario`);
* :mod:`.answer_view`, :mod:`.behaviours` — the scheduling behaviours of the upstream
  description, and which ones an answered scenario exercises (the kit's tags and ``COVERAGE.md``);
* :mod:`.oracle` — the one oracle: every kit line (validation ops and scenarios) answered;
* :mod:`.validation_edges`, :mod:`.validation_pins`, :mod:`.families`, :mod:`.generate` —
  ``conformance generate``: the kit's vectors and ``COVERAGE.md``;
* :mod:`.port` — a port process spoken to one JSON line at a time, and the verdicts;
* :mod:`.compare`, :mod:`.failure_view`, :mod:`.case_timeline`, :mod:`.runner` —
  ``conformance run``: loading, judging and reporting the kit's cases;
* :mod:`.fuzz_requests`, :mod:`.fuzz` — ``conformance fuzz``: differential fuzzing of a port
  against the oracle, with the strategies of the testing tools' room (``trio_harness._testing``);
* :mod:`.cli` — the kit's commands (``oracle``, ``conformance ...``, ``check-log``).

Private package (layer 7): modules import the library only through its lower layers'
interfaces. ``run_scenario`` and ``answer_case`` (with ``ScenarioAnswer``) are public as
``trio_harness.lowlevel`` names; the rest serves the command line. The session-log checker
(``check-log``) and the hypothesis strategies live in ``trio_harness._testing``; the checker's
names are re-exported here.

This interface loads the scenario player and the oracle only: the runner and the command line
(with the port process) are loaded on first access of their names, so ``import trio_harness``
(whose ``lowlevel`` names ``run_scenario``) loads neither.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from .._testing import LogFormatError, LogViolation, check_log, check_log_text
from .behaviours import BEHAVIOURS, Behaviour, behaviours_of
from .oracle import answer_case, answer_request, answer_request_line, answer_request_lines
from .scenario import ScenarioAnswer, answer_scenario, run_scenario
from .scenario_format import Scenario, ScenarioError, parse_scenario

if TYPE_CHECKING:
    from .case_timeline import kit_timelines
    from .cli import add_commands, run_command
    from .runner import Case, Failure, Report, load_cases, run_cases

#: Names of the command line, loaded on first access.
_CLI_NAMES = frozenset({"add_commands", "run_command"})

#: Names of the runner, loaded on first access.
_RUNNER_NAMES = frozenset({"Case", "Failure", "Report", "load_cases", "run_cases"})

#: Names of the case timelines (``timeline --kit``), loaded on first access.
_TIMELINE_NAMES = frozenset({"kit_timelines"})


def __getattr__(name: str) -> Any:
    module: ModuleType
    if name in _CLI_NAMES:
        from . import cli

        module = cli
    elif name in _RUNNER_NAMES:
        from . import runner

        module = runner
    elif name in _TIMELINE_NAMES:
        from . import case_timeline

        module = case_timeline
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


__all__ = [
    "BEHAVIOURS",
    "Behaviour",
    "Case",
    "Failure",
    "LogFormatError",
    "LogViolation",
    "Report",
    "Scenario",
    "ScenarioAnswer",
    "ScenarioError",
    "add_commands",
    "answer_case",
    "answer_request",
    "answer_request_line",
    "answer_request_lines",
    "answer_scenario",
    "behaviours_of",
    "check_log",
    "check_log_text",
    "kit_timelines",
    "load_cases",
    "parse_scenario",
    "run_cases",
    "run_command",
    "run_scenario",
]
