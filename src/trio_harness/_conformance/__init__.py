"""The conformance kit: scheduling scenarios, the all-in-one oracle, the runner and the log checker.

Private package (layer 7, between ``_oracle`` and ``lowlevel``): modules import the library only
through its lower layers' interfaces. ``run_scenario`` and ``check_log`` (with their result
types) are public as ``trio_harness.lowlevel`` names; the rest serves the command line.
"""

from __future__ import annotations

from .behaviours import BEHAVIOURS, Behaviour, behaviours_of
from .checklog import LogFormatError, LogViolation, check_log, check_log_text
from .cli import add_commands, run_command
from .oracle import answer_request, answer_request_line, answer_request_lines
from .runner import Case, Failure, Report, load_cases, run_cases
from .scenario import (
    Scenario,
    ScenarioAnswer,
    ScenarioError,
    answer_scenario,
    parse_scenario,
    run_scenario,
)

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
    "answer_request",
    "answer_request_line",
    "answer_request_lines",
    "answer_scenario",
    "behaviours_of",
    "check_log",
    "check_log_text",
    "load_cases",
    "parse_scenario",
    "run_cases",
    "run_command",
    "run_scenario",
]
