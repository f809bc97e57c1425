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
* :mod:`.approval_log` — approval in the session log: pending calls, decisions, a paused step;
* :mod:`.approval` — ``needs_approval`` rules and ``AgentApproval`` (the hooks and the service);
* :mod:`.terminal` — ``LineReader`` and ``TerminalApproval``: stdin under Trio, the prompt;
* :mod:`.sigint` — ``abort_on_sigint``: the first SIGINT aborts, the second stops hard;
  ``run_app``: Ctrl-C anywhere is one line;
* :mod:`.agent` — ``Agent`` and ``open_agent``: a model, its tools and a durable log.

This ``__init__`` is the package's interface: code outside the package imports from here only.
The provider adapters (the public :mod:`trio_harness.providers`) build on it.
"""

from .agent import Agent, open_agent
from .approval import (
    ApprovalRule,
    ApprovalToolDefinition,
    DecisionCallback,
    PendingApprovalError,
    needs_approval,
)
from .approval_log import (
    APPROVAL_DECISION_EVENT,
    APPROVAL_PENDING_EVENT,
    ApprovalDecision,
    PausedStep,
    PendingCall,
    paused_step,
)
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
from .terminal import LineReader, TerminalApproval
from .turn import (
    HoldPolicy,
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
    "APPROVAL_DECISION_EVENT",
    "APPROVAL_PENDING_EVENT",
    "CONVERSATION_EVENT",
    "TURN_END_EVENT",
    "Agent",
    "AgentLog",
    "ApprovalDecision",
    "ApprovalRule",
    "ApprovalToolDefinition",
    "ConversationState",
    "DecisionCallback",
    "FinishReason",
    "HoldPolicy",
    "LineReader",
    "ModelReplied",
    "ModelRequested",
    "ModelStep",
    "PausedStep",
    "PendingApprovalError",
    "PendingCall",
    "PendingStep",
    "Recovery",
    "StepFinished",
    "StepStarted",
    "StepStreaming",
    "StreamingTurnModel",
    "TerminalApproval",
    "TextDelta",
    "ToolCommitted",
    "ToolStarted",
    "TurnEvent",
    "TurnModel",
    "TurnResult",
    "Usage",
    "abort_on_sigint",
    "conversation_of",
    "needs_approval",
    "one_error",
    "open_agent",
    "open_agent_log",
    "paused_step",
    "plan_groups",
    "read_conversation",
    "report_text",
    "run_app",
    "run_turn",
    "settle_step",
    "sole_exception",
    "tool",
]
