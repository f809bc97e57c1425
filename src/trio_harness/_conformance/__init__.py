"""The conformance kit: scheduling scenarios, the one oracle, the runner, fuzzing, the log checker.

Modules, in dependency order:

* :mod:`.scenario_format` — the scenario format of ``spec/FORMAT.md`` as typed values, and
  :func:`parse_scenario`;
* :mod:`.scenario` — a scenario played on the real pool under ``MockClock`` (:func:`run_scenario`);
* :mod:`.behaviours` — the scheduling behaviours of the upstream description, and which ones an
  answered scenario exercises (the kit's tags and ``COVERAGE.md``);
* :mod:`.checklog` — ``check-log``: a session log of any port checked for the pool's invariants;
* :mod:`.oracle` — the one oracle: every kit line (validation ops and scenarios) answered;
* :mod:`.generate` — ``conformance generate``: the scheduling vectors and ``COVERAGE.md``;
* :mod:`.port` — a port process spoken to one JSON line at a time, and the verdicts;
* :mod:`.runner` — ``conformance run``: loading, judging and reporting the kit's cases;
* :mod:`.strategies` — hypothesis strategies (behind ``trio_harness.testing``);
* :mod:`.fuzz` — ``conformance fuzz``: differential fuzzing of a port against the oracle;
* :mod:`.cli` — the kit's commands (``oracle``, ``conformance ...``, ``check-log``).

Private package (layer 7): modules import the library only through its lower layers'
interfaces. ``run_scenario`` and ``check_log`` (with their result types) are public as
``trio_harness.lowlevel`` names; the rest serves the command line.

The hypothesis strategies (``strategies``, behind ``trio_harness.testing``) and ``conformance
fuzz`` need hypothesis, an optional extra: their names are loaded on first access, so importing
this package never imports hypothesis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .behaviours import BEHAVIOURS, Behaviour, behaviours_of
from .case_timeline import kit_timelines
from .checklog import LogFormatError, LogViolation, check_log, check_log_text
from .cli import add_commands, run_command
from .oracle import answer_case, answer_request, answer_request_line, answer_request_lines
from .runner import Case, Failure, Report, load_cases, run_cases
from .scenario import ScenarioAnswer, answer_scenario, run_scenario
from .scenario_format import Scenario, ScenarioError, parse_scenario

if TYPE_CHECKING:
    from .strategies import (
        ARGUMENT_KINDS,
        ArgumentText,
        argument_texts,
        invalid_values,
        json_values,
        parameter_maps,
        scheduling_scenarios,
        subset_schemas,
        valid_values,
    )

#: Names of :mod:`.strategies`, loaded on first access (they need hypothesis).
_STRATEGY_NAMES = frozenset(
    {
        "ARGUMENT_KINDS",
        "ArgumentText",
        "argument_texts",
        "invalid_values",
        "json_values",
        "parameter_maps",
        "scheduling_scenarios",
        "subset_schemas",
        "valid_values",
    }
)


def __getattr__(name: str) -> Any:
    if name in _STRATEGY_NAMES:
        from . import strategies

        return getattr(strategies, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ARGUMENT_KINDS",
    "BEHAVIOURS",
    "ArgumentText",
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
    "argument_texts",
    "behaviours_of",
    "check_log",
    "check_log_text",
    "invalid_values",
    "json_values",
    "kit_timelines",
    "load_cases",
    "parameter_maps",
    "parse_scenario",
    "run_cases",
    "run_command",
    "run_scenario",
    "scheduling_scenarios",
    "subset_schemas",
    "valid_values",
]
