"""What :func:`~trio_harness.turn.run_turn` needs of a model: its reply, and the protocols.

:class:`ModelStep` is one reply, provider-neutral (text, tool calls, finish reason, usage);
:class:`TurnModel` is one request plus a way to hand results back; :class:`StreamingTurnModel`
adds the streaming step that hands each tool call over while the reply still streams;
:func:`report_text` is how a model hands the turn its text while the reply streams.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Protocol, TypeAlias

import attrs

from .._pool import StepResult, ToolCallBlock

__all__ = [
    "FinishReason",
    "ModelStep",
    "StepStreaming",
    "StreamingTurnModel",
    "TextDelta",
    "TurnModel",
    "Usage",
    "report_text",
    "text_to",
]


@attrs.frozen(kw_only=True)
class Usage:
    """Tokens one reply (or a whole turn, summed) used, provider-neutral.

    Attributes:
        input_tokens: Prompt tokens, cached ones included.
        output_tokens: Generated tokens (reasoning included).
        cached_input_tokens: The part of ``input_tokens`` read from the provider's cache.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """``input_tokens + output_tokens``."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
        )


#: Why a reply ended, provider-neutral (``ModelStep.finish``): ``"tool_calls"``, ``"end"`` (a
#: normal end, stop sequences included), ``"length"`` (the output token limit or the context
#: window), ``"refusal"``, ``"content_filter"``, ``"incomplete"`` (incomplete for another reason),
#: ``"pause"`` (Anthropic's ``pause_turn``: send the conversation again to continue).
FinishReason: TypeAlias = Literal[
    "tool_calls", "end", "length", "refusal", "content_filter", "incomplete", "pause"
]


@attrs.frozen(kw_only=True)
class ModelStep:
    """One model reply, provider-neutral.

    Attributes:
        text: The reply's text (``""`` when none).
        tool_calls: The tool calls to run, in model order (never the calls of a reply cut short;
            in a streamed step, the calls handed over before the cut, which ran).
        stop_reason: The provider's stop/finish reason, when known.
        raw: The provider message or output the model appended to its conversation.
        finish: The neutral reason (see :data:`FinishReason`), when known.
        refusal: The model's refusal text, when it refused.
        cut_calls: Tool calls of a reply that ended before it was complete (``finish`` is
            ``"length"``, ``"content_filter"`` or ``"refusal"``): never run, and left out of the
            stored conversation (in a streamed step, the calls not yet complete at the cut).
        usage: Tokens used, when the provider reported them.
        response_id: The provider's id of the reply (completion, response or message id).
    """

    text: str = ""
    tool_calls: tuple[ToolCallBlock, ...] = ()
    stop_reason: str | None = None
    raw: Any = None
    finish: FinishReason | None = None
    refusal: str | None = None
    cut_calls: tuple[ToolCallBlock, ...] = ()
    usage: Usage | None = None
    response_id: str | None = None


class TurnModel(Protocol):
    """What :func:`run_turn` needs of a model: one request, and a way to hand results back.

    The model owns its conversation: ``step`` sends it (with the tools) and appends the reply;
    ``add_tool_results`` appends the step's results in the provider's format.
    """

    async def step(self, tools: Sequence[dict[str, Any]], /) -> ModelStep:
        """Ask the model; ``tools`` is the neutral list (``name``, ``description``, ``parameters``)."""
        ...

    def add_tool_results(self, results: Sequence[StepResult], /) -> None:
        """Append a step's committed results (model order) to the conversation."""
        ...


#: What :attr:`StreamingTurnModel.step_streaming` is: ``(tools, on_call) -> ModelStep``.
StepStreaming: TypeAlias = Callable[
    [Sequence[dict[str, Any]], Callable[[ToolCallBlock], object]], Awaitable[ModelStep]
]


class StreamingTurnModel(TurnModel, Protocol):
    """A :class:`TurnModel` that can hand each tool call over while its reply still streams.

    The whole opt-in is one attribute, ``step_streaming``: ``None`` when the model does not
    stream now (the ready provider models return ``None`` unless constructed with
    ``stream=True``), else an async callable ``(tools, on_call) -> ModelStep`` that does what
    ``step`` does and, while the reply streams, calls ``on_call(call)`` synchronously with each
    tool call the moment it is complete (its block closed, or the next call began), in model
    order, each once. :func:`run_turn` uses it when present (unless ``stream_calls=False``).

    The contract, which keeps the conversation valid for a strict provider:

    * the returned reply's ``tool_calls`` are exactly the calls handed to ``on_call``; a call
      cut off by the end of the reply (mid-arguments) is never handed over;
    * a reply cut short (``finish`` ``"length"``, ``"content_filter"``, ``"refusal"``) after
      some calls were handed over keeps those calls (they ran) in ``tool_calls`` and in the
      stored assistant message, and the rest in ``cut_calls``;
    * when ``step_streaming`` ends by an exception (the stream broke, the SDK raised, or the
      request was cancelled by an abort) after handing over calls, it has first appended a
      partial assistant message (the text so far and exactly the calls handed over), so the
      results :func:`run_turn` then hands to ``add_tool_results`` answer a call message;
      before any call was handed over it appends nothing, as ``step`` does.
    """

    @property
    def step_streaming(self) -> StepStreaming | None:
        """The streaming step (see the class docstring), or ``None``."""
        ...


@attrs.frozen
class TextDelta:
    """A turn event: a piece of the reply's text as it streams (a model made with
    ``stream=True``, or any model calling :func:`report_text`), before the reply's
    :class:`~trio_harness.turn.ModelReplied`; the pieces of one reply, joined, are its text.

    Attributes:
        turn: The turn.
        step: The step (the model request) the text belongs to.
        text: The new text (never empty).
    """

    turn: int
    step: int
    text: str


# Where report_text sends a fragment: the turn asking the model now, when it has a listener. A
# context variable, so the TurnModel protocol needs no new argument: it is set in the task that
# awaits the model's request, around that request only (tool bodies never see it).
_text_sink: contextvars.ContextVar[Callable[[str], object] | None] = contextvars.ContextVar(
    "trio_harness_text_sink", default=None
)


def report_text(fragment: str) -> None:
    """Hand a fragment of the reply's text to the turn that asked, while the reply streams.

    A :class:`TurnModel` that streams calls it from ``step`` (or ``step_streaming``) with each
    piece of text, in order, as it arrives; :func:`~trio_harness.run_turn` passes each on to its
    ``on_event`` as a :class:`~trio_harness.turn.TextDelta`. The ready provider models call it
    when made with ``stream=True``. Outside a turn's request, or in a turn without ``on_event``,
    it does nothing (nothing is built for an event nobody listens to).

    Args:
        fragment: The new text (an empty string is not reported).
    """
    sink = _text_sink.get()
    if sink is not None and fragment:
        sink(fragment)


class text_to:
    """``with text_to(sink):`` — :func:`report_text` in this block (and in tasks it starts)
    calls ``sink``; ``None`` reports nowhere. Class-based, so no generator is left to finalize
    when an exception enters the block."""

    def __init__(self, sink: Callable[[str], object] | None) -> None:
        self._sink = sink
        self._token: contextvars.Token[Callable[[str], object] | None] | None = None

    def __enter__(self) -> None:
        self._token = _text_sink.set(self._sink)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _text_sink.reset(self._token)
            self._token = None
