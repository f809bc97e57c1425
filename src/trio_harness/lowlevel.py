"""The low-level public API: what ports, instrumentation and test tooling need.

An application needs only :mod:`trio_harness`. This namespace (as ``trio.lowlevel`` does for
Trio) exposes the parts below the application surface:

* the pool's pure state machine (:class:`StepCore`, :class:`Op`, :class:`CallState`,
  :func:`validate_cap`), which a port can read as the reference of every scheduling decision;
* the per-call pipeline and the protocol the pool drives (:class:`ToolScheduler`,
  :class:`Scheduler`, :class:`Preparation`, :class:`DispatchOutcome`, :class:`PoolRuntime`,
  :class:`Runtime`, :class:`Policy`), for wrapping ``runtime.scheduler`` or building a runtime,
  and the pool's tracer protocol (:class:`PoolTracer`; ``StepTrace`` is the ready one);
* the compiled validators (:func:`compile_validator`, and :func:`compile_extended_validator` of
  the opt-in extended vocabulary, with its ``pattern`` translator :func:`translate_pattern` and
  the :data:`FORMAT_ASSERTIONS` table) and the lossless-JSON helpers
  (:func:`snapshot_json_value`, :data:`NOT_JSON`, :func:`is_json_number`, :func:`js_json`) and
  the JSON node limit (:func:`json_node_limit`, :func:`set_json_node_limit`);
* the conformance oracle's single-case answer (:func:`answer_case`), a scheduling scenario run
  through the real pool (:func:`run_scenario`, :class:`ScenarioAnswer`) and the session-log
  checker (:func:`check_log`, :class:`LogViolation`) of the conformance kit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._json import (
    DEFAULT_JSON_NODE_LIMIT,
    NOT_JSON,
    is_json_integer,
    is_json_number,
    js_json,
    json_node_limit,
    set_json_node_limit,
    snapshot_json_value,
)
from ._pool import CallState, Op, PoolRuntime, PoolTracer, StepCore, validate_cap
from ._public import lazy_attributes, publish
from ._runtime import (
    DispatchOutcome,
    Policy,
    Preparation,
    Runtime,
    Scheduler,
    ToolScheduler,
)
from ._validation import MAX_COMPILED_DEPTH, Validator, compile_validator

__all__ = [
    "DEFAULT_JSON_NODE_LIMIT",
    "FORMAT_ASSERTIONS",
    "MAX_COMPILED_DEPTH",
    "NOT_JSON",
    "CallState",
    "DispatchOutcome",
    "LogViolation",
    "Op",
    "PatternError",
    "Policy",
    "PoolRuntime",
    "PoolTracer",
    "Preparation",
    "Runtime",
    "ScenarioAnswer",
    "Scheduler",
    "StepCore",
    "ToolScheduler",
    "Validator",
    "answer_case",
    "check_log",
    "compile_extended_validator",
    "compile_validator",
    "is_json_integer",
    "is_json_number",
    "js_json",
    "json_node_limit",
    "run_scenario",
    "set_json_node_limit",
    "snapshot_json_value",
    "translate_pattern",
    "validate_cap",
]

if TYPE_CHECKING:
    from ._conformance import ScenarioAnswer, answer_case, run_scenario
    from ._testing import LogViolation, check_log
    from ._validation import (
        FORMAT_ASSERTIONS,
        PatternError,
        compile_extended_validator,
        translate_pattern,
    )

#: Loaded on first use: the conformance kit's scenario player and oracle, the log checker and
#: the extended vocabulary are not needed to run a pool (``import trio_harness`` must not load
#: them).
_LAZY: dict[str, str] = {
    "FORMAT_ASSERTIONS": "._validation",
    "PatternError": "._validation",
    "compile_extended_validator": "._validation",
    "translate_pattern": "._validation",
    "ScenarioAnswer": "._conformance",
    "answer_case": "._conformance",
    "run_scenario": "._conformance",
    "LogViolation": "._testing",
    "check_log": "._testing",
}

publish(__name__, globals(), [name for name in __all__ if name not in _LAZY])
__getattr__ = lazy_attributes(__name__, globals(), _LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
