"""What a turn reports while it runs: the events :func:`~trio_harness.run_turn` passes to its
``on_event`` callback, in order.

One turn is: :class:`ModelRequested`, a :class:`TextDelta` per piece of text while a reply
streams, :class:`ModelReplied`, then for every reply with tool calls
:class:`StepStarted`, a :class:`ToolStarted` per call whose body starts, a :class:`ToolCommitted`
per result in model order, :class:`StepFinished`; :data:`TurnEvent` is their union. A
:class:`~trio_harness.TurnResult` says why the turn ended (its :data:`FinishReason`) and what it
cost (:class:`Usage`). A model that streams its tool calls is a :class:`StreamingTurnModel`
(its ``step_streaming`` is a :data:`StepStreaming`); a model streams its text to the turn
with :func:`report_text`.
"""

from __future__ import annotations

from ._apps import (
    FinishReason,
    HoldPolicy,
    ModelReplied,
    ModelRequested,
    StepFinished,
    StepStarted,
    StepStreaming,
    StreamingTurnModel,
    TextDelta,
    ToolCommitted,
    ToolStarted,
    TurnEvent,
    Usage,
    report_text,
)
from ._public import publish

__all__ = [
    "FinishReason",
    "HoldPolicy",
    "ModelReplied",
    "ModelRequested",
    "StepFinished",
    "StepStarted",
    "StepStreaming",
    "StreamingTurnModel",
    "TextDelta",
    "ToolCommitted",
    "ToolStarted",
    "TurnEvent",
    "Usage",
    "report_text",
]

publish(__name__, globals(), __all__)
