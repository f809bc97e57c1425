"""Agent-app building blocks on top of the pool: typed tools, the turn loop, Ctrl-C.

Modules, in dependency order:

* :mod:`.docstrings` — the summary and parameter descriptions of a docstring (Google, Sphinx,
  NumPy);
* :mod:`.typed_schema` — annotations → JSON Schema (records, pydantic, ``Annotated`` metadata);
* :mod:`.typed_structure` — validated JSON structured into the declared types (``cattrs``);
* :mod:`.typed` — ``tool``: annotated async functions turned into ``define_tool`` definitions;
* :mod:`.turn` — ``run_turn`` and the ``TurnModel`` protocol, its values and progress events;
* :mod:`.sigint` — ``abort_on_sigint``: the first SIGINT aborts, the second stops hard.

This ``__init__`` is the package's interface: code outside the package imports from here only.
The provider adapters (the public :mod:`trio_harness.providers`) build on it.
"""

from .sigint import abort_on_sigint
from .turn import (
    FinishReason,
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
    Usage,
    plan_groups,
    run_turn,
)
from .typed import tool

__all__ = [
    "FinishReason",
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
    "Usage",
    "abort_on_sigint",
    "plan_groups",
    "run_turn",
    "tool",
]
