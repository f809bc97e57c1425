"""Agent-app building blocks on top of the pool: typed tools, the turn loop, Ctrl-C.

Modules, in dependency order:

* :mod:`.docstrings` — the summary and parameter descriptions of a docstring (Google, Sphinx,
  NumPy);
* :mod:`.typed_schema` — annotations → JSON Schema (records, pydantic, ``Annotated`` metadata);
* :mod:`.typed_structure` — validated JSON structured into the declared types (``cattrs``);
* :mod:`.typed` — ``tool``: annotated async functions turned into ``define_tool`` definitions;
* :mod:`.boundary` — one error out of an exception group at API boundaries;
* :mod:`.conversation` — the conversation in the session log, settling a step, a log opened for
  an app (``open_agent_log``);
* :mod:`.turn` — ``run_turn`` and the ``TurnModel`` protocol, its values and progress events;
* :mod:`.sigint` — ``abort_on_sigint``: the first SIGINT aborts, the second stops hard;
  ``run_app``: Ctrl-C anywhere is one line;
* :mod:`.agent` — ``Agent`` and ``open_agent``: a model, its tools and a durable log.

This ``__init__`` is the package's interface: code outside the package imports from here only.
The provider adapters (the public :mod:`trio_harness.providers`) build on it.
"""

from .agent import Agent, open_agent
from .boundary import one_error, sole_exception
from .conversation import (
    CONVERSATION_EVENT,
    TURN_END_EVENT,
    AgentLog,
    ConversationState,
    PendingStep,
    Recovery,
    conversation_of,
    open_agent_log,
    read_conversation,
    settle_step,
)
from .sigint import abort_on_sigint, run_app
from .turn import (
    ModelReplied,
    ModelRequested,
    StepFinished,
    StepStarted,
    ToolCommitted,
    ToolStarted,
    TurnEvent,
    TurnResult,
    plan_groups,
    run_turn,
)
from .turn_model import (
    FinishReason,
    ModelStep,
    StepStreaming,
    StreamingTurnModel,
    TextDelta,
    TurnModel,
    Usage,
    report_text,
)
from .typed import tool

__all__ = [
    "CONVERSATION_EVENT",
    "TURN_END_EVENT",
    "Agent",
    "AgentLog",
    "ConversationState",
    "FinishReason",
    "ModelReplied",
    "ModelRequested",
    "ModelStep",
    "PendingStep",
    "Recovery",
    "StepFinished",
    "StepStarted",
    "StepStreaming",
    "StreamingTurnModel",
    "TextDelta",
    "ToolCommitted",
    "ToolStarted",
    "TurnEvent",
    "TurnModel",
    "TurnResult",
    "Usage",
    "abort_on_sigint",
    "conversation_of",
    "one_error",
    "open_agent",
    "open_agent_log",
    "plan_groups",
    "read_conversation",
    "report_text",
    "run_app",
    "run_turn",
    "settle_step",
    "sole_exception",
    "tool",
]
