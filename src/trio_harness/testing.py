"""Property-based testing of ports and of Trio apps built on trio_harness (needs hypothesis).

Install with ``pip install 'trio_harness[testing]'``; the rest of the library never imports
hypothesis. What is here:

* hypothesis strategies: :func:`subset_schemas`, :func:`valid_values` / :func:`invalid_values`
  (built from a schema, never filtered), :func:`parameter_maps`, :func:`argument_texts` (raw
  argument text of a tool, labelled by kind), :func:`scheduling_scenarios` (``spec/FORMAT.md``
  scenarios), and :func:`json_values`; they reach the edges the validator and the kit care about
  (``-0.0``, integers past 2**53, integral floats, long strings and arrays, odd keys and odd
  argument texts), with knobs to bound them, and raise ``InvalidArgument`` for bad arguments;
* :func:`check_session`: every invariant violation of a session log (what ``check-log`` prints);
* :class:`PoolMonitor`: a scheduler wrapper and pool tracer in one, which checks every guarantee
  the pool gives on the steps it watches and reports each broken one as a :class:`PoolViolation`;
* :func:`pool_scenarios` and :func:`run_pool_scenario`: whole pool scenarios (streams, sub-calls,
  aborts, outside cancellations, scheduler failures, hooks, guards, approvals, invalid windows,
  consecutive steps) and their runner under the monitor: the recommended property test of a
  pool (``docs/property-testing.md``).

Strategies for the library's value types (``st.from_type(trio_harness.ToolCallBlock)``, ...)
are registered by the hypothesis plugin the distribution declares (``trio_harness_hypothesis``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

try:
    import hypothesis  # noqa: F401  (the extra this namespace needs, checked first)
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "trio_harness.testing needs hypothesis: pip install 'trio_harness[testing]'"
    ) from error


from ._conformance import ScenarioError, answer_scenario
from ._log import Session, SessionEvent
from ._public import publish
from ._testing import (
    ARGUMENT_KINDS,
    ArgumentText,
    BodyRecord,
    PoolMonitor,
    PoolScenario,
    PoolViolation,
    ScenarioCall,
    ScenarioStep,
    argument_texts,
    check_log,
    invalid_values,
    json_values,
    parameter_maps,
    pool_scenarios,
    register_type_strategies,
    run_pool_scenario,
    scheduling_scenarios,
    subset_schemas,
    valid_values,
)
from ._testing import LogViolation as _LogViolation

__all__ = [
    "ARGUMENT_KINDS",
    "ArgumentText",
    "BodyRecord",
    "PoolMonitor",
    "PoolScenario",
    "PoolViolation",
    "ScenarioCall",
    "ScenarioStep",
    "argument_texts",
    "check_session",
    "invalid_values",
    "json_values",
    "parameter_maps",
    "pool_scenarios",
    "run_pool_scenario",
    "scheduling_scenarios",
    "subset_schemas",
    "valid_values",
]


def _expected_answer(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The reference answer to a scheduling scenario, exactly as the oracle answers it.

    Args:
        scenario: The ``scenario`` object of ``spec/FORMAT.md`` (decoded JSON).

    Returns:
        The ``expected`` object: ``events``, ``calls``, ``contexts``, ``outcome`` (and ``ties``
        when two scripted timers expired at one instant).

    Raises:
        ScenarioError: The scenario does not follow the format.
    """
    answered = answer_scenario({"op": "schedule", "scenario": dict(scenario)})
    if "expected" not in answered:
        raise ScenarioError(str(answered.get("error")))
    expected: dict[str, Any] = answered["expected"]
    return expected


def check_session(
    session_or_events: Session | Iterable[SessionEvent | Mapping[str, Any]],
    *,
    allow_unpaired: bool = False,
) -> list[_LogViolation]:
    """Every invariant violation of a session log (the rules of ``check-log``).

    Args:
        session_or_events: A :class:`~trio_harness.Session`, or its events (``SessionEvent``
            objects or their decoded wire form), in log order.
        allow_unpaired: Accept calls left without a result (a step that raised a scheduler
            failure leaves its started calls so).

    Returns:
        The violations (``seq``, ``rule``, ``message``) in log order; ``[]`` for a valid log.

    Raises:
        LogFormatError: An event is not a session event.
    """
    events = (
        session_or_events.events if isinstance(session_or_events, Session) else session_or_events
    )
    wire = [event.to_json() if isinstance(event, SessionEvent) else event for event in events]
    return check_log(wire, allow_unpaired=allow_unpaired)


#: Pre-release spellings that still work, with a ``DeprecationWarning``, until the first release.
_DEPRECATED: dict[str, tuple[Callable[[], Any], str]] = {
    "run_scenario": (
        lambda: _expected_answer,
        "trio_harness.testing.run_scenario is deprecated: use "
        "trio_harness.lowlevel.run_scenario(scenario).answer (the old spelling goes away in "
        "the first release)",
    ),
    "LogViolation": (
        lambda: _LogViolation,
        "trio_harness.testing.LogViolation moved to trio_harness.lowlevel.LogViolation (the old "
        "spelling goes away in the first release)",
    ),
}


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        value, message = _DEPRECATED[name]
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return value()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


publish(__name__, globals(), __all__)

# Strategies for the library's value types (``st.from_type(ToolCallBlock)``); idempotent, and
# already done if hypothesis was imported before trio_harness or after it (its setup hook).
register_type_strategies()
