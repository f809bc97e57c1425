"""Mechanism 2, the parallel execution pool.

Modules, in dependency order:

* :mod:`.machine` — ``StepCore``: every scheduling decision of one step as a pure, synchronous
  state machine (standard library only; a port can read it as the reference);
* :mod:`.protocols` — what the driver needs of a runtime, a tracer and a recorder;
* :mod:`.driver` — the Trio driver that runs those decisions: a nursery per group, a
  ``CapacityLimiter`` window, a memory channel to the one ordered committer;
* :mod:`.steps` — the step API (``execute_tool_calls``, ``execute_sub_calls``), its values and the
  recorders that write the session log.

This ``__init__`` is the package's interface: code outside the package imports from here only.
"""

from .machine import CallState, Op, StepCore, validate_cap
from .protocols import PoolRuntime, PoolTracer
from .steps import (
    DEFAULT_MAX_PARALLEL_SUB_CALLS,
    DEFAULT_MAX_PARALLEL_TOOL_CALLS,
    MAX_SUB_CALL_DEPTH,
    StepOutcome,
    StepResult,
    SubCall,
    SubCallResults,
    ToolCallBlock,
    execute_sub_calls,
    execute_tool_calls,
)

__all__ = [
    "DEFAULT_MAX_PARALLEL_SUB_CALLS",
    "DEFAULT_MAX_PARALLEL_TOOL_CALLS",
    "MAX_SUB_CALL_DEPTH",
    "CallState",
    "Op",
    "PoolRuntime",
    "PoolTracer",
    "StepCore",
    "StepOutcome",
    "StepResult",
    "SubCall",
    "SubCallResults",
    "ToolCallBlock",
    "execute_sub_calls",
    "execute_tool_calls",
    "validate_cap",
]
