"""An agent app's parts: the conversation in the durable log, and what a crash left behind.

:func:`~trio_harness.open_agent` (top level) gives an :class:`Agent`: a model, its tools and a
durable log that holds the whole conversation (:data:`CONVERSATION_EVENT` events beside the
pool's own, :data:`TURN_END_EVENT` when a turn ends). The rest is here for apps that assemble
their own loop:

* :func:`open_agent_log` opens a log for an app in one call: a crash cut is dropped and reported,
  and a step a crash left open is answered from the recorded reply (:class:`AgentLog`,
  :class:`Recovery`);
* :func:`read_conversation` rebuilds the messages a model sees from a log
  (:class:`ConversationState`, :class:`PendingStep`);
* :func:`settle_step` answers every call of a step that was cut short, truthfully
  (``ABORTED`` when its body may have run, ``ABORTED_BEFORE_DISPATCH`` when it never started);
* human approval (``docs/approval.md``): :class:`ApprovalDecision`, :class:`PendingCall` and
  :class:`PausedStep` (a turn paused for decisions, :func:`paused_step` reads one back, the
  ``approval/*`` events :data:`APPROVAL_PENDING_EVENT` and :data:`APPROVAL_DECISION_EVENT`),
  :func:`needs_approval` and :class:`ApprovalToolDefinition`, the inline prompt
  :class:`TerminalApproval` reading through a :class:`LineReader`.
"""

from __future__ import annotations

from ._apps import (
    APPROVAL_DECISION_EVENT,
    APPROVAL_PENDING_EVENT,
    CONVERSATION_EVENT,
    TURN_END_EVENT,
    Agent,
    AgentLog,
    ApprovalDecision,
    ApprovalRule,
    ApprovalToolDefinition,
    ConversationState,
    DecisionCallback,
    LineReader,
    PausedStep,
    PendingApprovalError,
    PendingCall,
    PendingStep,
    Recovery,
    TerminalApproval,
    needs_approval,
    open_agent_log,
    paused_step,
    read_conversation,
    settle_step,
)
from ._public import publish

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
    "LineReader",
    "PausedStep",
    "PendingApprovalError",
    "PendingCall",
    "PendingStep",
    "Recovery",
    "TerminalApproval",
    "needs_approval",
    "open_agent_log",
    "paused_step",
    "read_conversation",
    "settle_step",
]

publish(__name__, globals(), __all__)
