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
  (``ABORTED`` when its body may have run, ``ABORTED_BEFORE_DISPATCH`` when it never started).
"""

from __future__ import annotations

from ._apps import (
    CONVERSATION_EVENT,
    TURN_END_EVENT,
    Agent,
    AgentLog,
    ConversationState,
    PendingStep,
    Recovery,
    open_agent_log,
    read_conversation,
    settle_step,
)
from ._public import publish

__all__ = [
    "CONVERSATION_EVENT",
    "TURN_END_EVENT",
    "Agent",
    "AgentLog",
    "ConversationState",
    "PendingStep",
    "Recovery",
    "open_agent_log",
    "read_conversation",
    "settle_step",
]

publish(__name__, globals(), __all__)
