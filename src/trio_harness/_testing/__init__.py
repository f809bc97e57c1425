"""The testing tools' room: the session-log checker, the hypothesis strategies, the pool monitor.

Modules, in dependency order:

* :mod:`.checklog` — the session-log checker (``check-log`` and ``check_session``): every
  invariant of the pool a log of any port must show;
* :mod:`.value_knobs`, :mod:`.json_leaves`, :mod:`.solver`, :mod:`.values`,
  :mod:`.schema_strategies`, :mod:`.raw_arguments` — the hypothesis strategies' parts (knobs,
  JSON leaves, the schema solver, values of a schema, schemas, raw argument text);
* :mod:`.strategies` — the strategies' one interface (and ``scheduling_scenarios``);
* :mod:`.type_strategies` — the strategies of the library's value types (``st.from_type``);
* :mod:`.rules` — what the monitor saw of a step, and every rule the pool promises, checked;
* :mod:`.monitor` — :class:`PoolMonitor`, the scheduler wrapper and tracer that records it;
* :mod:`.scenarios` — whole pool scenarios (a strategy) and their runner under the monitor.

Private package, below the conformance kit (whose ``check-log`` and ``conformance fuzz`` use the
checker and the strategies) and behind :mod:`trio_harness.testing`, which publishes the names.
Only the checker is loaded with this package: the strategies (they need hypothesis, an optional
extra) and the monitor are loaded on first access, so ``import trio_harness`` (whose
``lowlevel`` names ``check_log``) loads neither hypothesis nor the monitor.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from .checklog import LogFormatError, LogViolation, check_log, check_log_text

if TYPE_CHECKING:
    from .monitor import PoolMonitor
    from .rules import BodyRecord, PoolViolation
    from .scenarios import (
        PoolScenario,
        ScenarioCall,
        ScenarioStep,
        pool_scenarios,
        run_pool_scenario,
    )
    from .strategies import (
        ARGUMENT_KINDS,
        ArgumentText,
        argument_texts,
        invalid_values,
        json_scalars,
        json_values,
        parameter_maps,
        scheduling_scenarios,
        subset_schemas,
        valid_values,
    )
    from .type_strategies import register_type_strategies

#: The monitor's names, loaded on first access.
_MONITOR_NAMES = frozenset({"BodyRecord", "PoolMonitor", "PoolViolation"})

#: The whole-pool scenarios' names, loaded on first access (they need hypothesis).
_SCENARIO_NAMES = frozenset(
    {"PoolScenario", "ScenarioCall", "ScenarioStep", "pool_scenarios", "run_pool_scenario"}
)

#: The strategies' names, loaded on first access (they need hypothesis).
_STRATEGY_NAMES = frozenset(
    {
        "ARGUMENT_KINDS",
        "ArgumentText",
        "argument_texts",
        "invalid_values",
        "json_scalars",
        "json_values",
        "parameter_maps",
        "register_type_strategies",
        "scheduling_scenarios",
        "subset_schemas",
        "valid_values",
    }
)


def __getattr__(name: str) -> Any:
    modules: tuple[ModuleType, ...]
    if name in _MONITOR_NAMES:
        from . import monitor, rules

        modules = (monitor, rules)
    elif name in _SCENARIO_NAMES:
        from . import scenarios

        modules = (scenarios,)
    elif name in _STRATEGY_NAMES:
        from . import strategies, type_strategies

        modules = (strategies, type_strategies)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = next(vars(module)[name] for module in modules if name in vars(module))
    globals()[name] = value
    return value


__all__ = [
    "ARGUMENT_KINDS",
    "ArgumentText",
    "BodyRecord",
    "LogFormatError",
    "LogViolation",
    "PoolMonitor",
    "PoolScenario",
    "PoolViolation",
    "ScenarioCall",
    "ScenarioStep",
    "argument_texts",
    "check_log",
    "check_log_text",
    "invalid_values",
    "json_scalars",
    "json_values",
    "parameter_maps",
    "pool_scenarios",
    "register_type_strategies",
    "run_pool_scenario",
    "scheduling_scenarios",
    "subset_schemas",
    "valid_values",
]
