"""Agent-app building blocks on top of the pool: typed tools, the turn loop, Ctrl-C.

Modules, in dependency order:

* :mod:`.typed` — ``tool``: annotated async functions turned into ``define_tool`` definitions;
* :mod:`.turn` — ``run_turn`` and the ``TurnModel`` protocol, its values and progress events;
* :mod:`.sigint` — ``abort_on_sigint``: the first SIGINT aborts, the second stops hard.

This ``__init__`` is the package's interface: code outside the package imports from here only.
The provider adapters (the public :mod:`trio_harness.providers`) build on it.
"""

from .boundary import one_error, sole_exception
from .sigint import abort_on_sigint
from .turn import (
    ModelReplied,
    ModelRequested,
    ModelStep,
    StepFinished,
    StepStarted,
    ToolCommitted,
    ToolStarted,
    TurnEvent,
    TurnModel,
    TurnResult,
    plan_groups,
    run_turn,
)
from .typed import tool

__all__ = [
    "ModelReplied",
    "ModelRequested",
    "ModelStep",
    "StepFinished",
    "StepStarted",
    "ToolCommitted",
    "ToolStarted",
    "TurnEvent",
    "TurnModel",
    "TurnResult",
    "abort_on_sigint",
    "one_error",
    "plan_groups",
    "run_turn",
    "sole_exception",
    "tool",
]
