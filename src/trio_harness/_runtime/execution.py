"""One execution: its input, its identity and run context, and the phase shapes the pool drives.

A :class:`ToolExecution` is created by ``scheduler.prepare`` for every call and is the single
object every phase sees: pre-execute hooks, guards, the approval request, execute wrappers, the
tool body (as its ``ctx``), post-execute hooks, ``finalize_content`` and result observers. It is
both upstream's "exec" and its run context: ``ctx.exec is ctx``.

Invariant: the identity fields (``token``, ``call_id``, ``name``, ``arguments``, ``agent``,
``parent``, ``root_call_id``, ``runtime``) never change after creation; only ``abort`` may be
replaced, by an execute wrapper, and only until the execution is finished.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

import attrs
import trio

from .._json import parse_arguments_frozen, thaw
from .._values import ExecutionMode, ToolExecutionResult

__all__ = [
    "DispatchOutcome",
    "ParsedArguments",
    "Preparation",
    "Runtime",
    "Scheduler",
    "ToolExecution",
    "ToolExecutionInput",
    "context_message",
    "normalize_context",
    "parsed_input",
    "parsed_note",
]


def _content_blocks(content: object) -> object:
    # A bare string is shorthand for one text block; anything else is kept as given and checked
    # for lossless JSON when the result is materialized.
    if type(content) is str:
        return [{"type": "text", "text": content}]
    return content


def _fresh_id() -> str:
    # ``uuid`` is imported on the first context message, not with ``import trio_harness``.
    import uuid

    return uuid.uuid4().hex


def context_message(content: object, *, source: object = None) -> dict[str, Any]:
    """Build a context message in upstream shape.

    Args:
        content: Content blocks (a ``str`` is shorthand for one text block).
        source: Where the context comes from, e.g. ``{"kind": "plugin", "plugin": "audit"}``;
            omitted from the message when ``None``.

    Returns:
        ``{"id": <fresh hex id>, "role": "user", "content": [...], "source": {...}}``.
    """
    message: dict[str, Any] = {
        "id": _fresh_id(),
        "role": "user",
        "content": _content_blocks(content),
    }
    if source is not None:
        message["source"] = source
    return message


def normalize_context(context: object) -> dict[str, Any]:
    """Give a hook-supplied context message its ``id`` and ``role``.

    A context is a ``dict`` with ``content`` and optionally ``source`` (and ``id``, kept when it
    is a string); the result is a fresh dict in the key order ``id, role, content, source``.

    Raises:
        TypeError: ``context`` is not a dict with a ``content`` key.
    """
    if not isinstance(context, dict) or "content" not in context:
        raise TypeError("additional context must be a dict with content")
    given_id = context.get("id")
    message: dict[str, Any] = {
        "id": given_id if type(given_id) is str else _fresh_id(),
        "role": "user",
        "content": _content_blocks(context["content"]),
    }
    if context.get("source") is not None:
        message["source"] = context["source"]
    return message


@attrs.define(eq=False)
class ToolExecution:
    """One tool call in flight: its identity, and the run context its body receives.

    Attributes:
        token: A unique object identifying this execution.
        call_id: The model's tool-call id.
        name: The tool name the call asked for.
        arguments: The detached lossless-JSON copy of the call's arguments that every phase sees,
            or ``UNSET`` when the arguments were not lossless JSON (the call then fails at once).
        agent: The agent the call runs for (opaque), or ``None``.
        parent: The execution of the composite tool that issued this nested call, or ``None``.
        root_call_id: The top-level call id of the call tree (``call_id`` unless given).
        runtime: The runtime executing the call (a composite body calls ``ctx.runtime.execute``).
    """

    _token: object
    _call_id: str
    _name: str
    _arguments: Any
    _agent: object | None
    _parent: ToolExecution | None
    _root_call_id: str
    _runtime: Runtime
    # The caller's event (fixed) and the current one (an execute wrapper may replace it; the
    # body sees the fusion of both).
    _caller_abort: trio.Event | None
    _abort: trio.Event | None
    # ``finalize_content`` of the definition resolved when the call was prepared.
    _finalize_content: Callable[[Any, ToolExecutionResult], Any] | None
    _deferred: list[dict[str, Any]] = attrs.field(factory=list)
    _concluded: bool = False
    _body_invoked: bool = False
    _deferring_closed: bool = False
    _finished: bool = False
    # The result the body dispatch produced for THIS execution; a wrapper returning exactly this
    # object is passed through unchanged, any other result is re-normalized.
    _body_result: ToolExecutionResult | None = None
    # A result the pipeline built itself from fresh snapshots: ``finish`` need not copy it again.
    _fresh_result: ToolExecutionResult | None = None
    # What the call's classification already checked: ``(check, violations)`` of the arguments
    # this execution holds, or ``None``. The body takes that verdict instead of checking again
    # while no phase was handed the arguments (``_arguments_shared``): see ``body._begin``.
    _checked: tuple[Callable[[object, str], list[str]], list[str]] | None = None
    # Set when the arguments were handed out (``exec.arguments``): a phase may have changed them.
    _arguments_shared: bool = False

    @property
    def token(self) -> object:
        """A unique object identifying this execution."""
        return self._token

    @property
    def call_id(self) -> str:
        """The model's tool-call id."""
        return self._call_id

    @property
    def name(self) -> str:
        """The tool name the call asked for."""
        return self._name

    @property
    def arguments(self) -> Any:
        """The detached lossless-JSON arguments (``UNSET`` when they were not lossless)."""
        # Whoever reads them may change them: the body checks them again.
        self._arguments_shared = True
        return self._arguments

    @property
    def agent(self) -> object | None:
        """The agent the call runs for, or ``None``."""
        return self._agent

    @property
    def parent(self) -> ToolExecution | None:
        """The composite execution that issued this nested call, or ``None``."""
        return self._parent

    @property
    def root_call_id(self) -> str:
        """The top-level call id of the call tree."""
        return self._root_call_id

    @property
    def runtime(self) -> Runtime:
        """The runtime executing this call."""
        return self._runtime

    @property
    def exec(self) -> ToolExecution:
        """The execution itself (the run context and the execution are one object)."""
        return self

    @property
    def finished(self) -> bool:
        """Whether the final result was produced (the execution is then frozen)."""
        return self._finished

    @property
    def abort(self) -> trio.Event | None:
        """The abort event of the current phase.

        The caller's event, except inside an execute wrapper that replaced it, and inside the body
        when a wrapper replaced it: then an event set when either the caller's or the wrapper's
        is set.
        """
        return self._abort

    @abort.setter
    def abort(self, event: trio.Event | None) -> None:
        # Upstream lets an execute wrapper replace only the signal; restore it after ``next()``.
        if self._finished:
            raise attrs.exceptions.FrozenInstanceError()
        self._abort = event

    def defer_context(self, content: object, *, source: object = None) -> dict[str, Any]:
        """Queue a context message for this call's own result (ahead of hook-supplied contexts).

        Args:
            content: Content blocks (a ``str`` is shorthand for one text block).
            source: The message's ``source``, e.g. ``{"kind": "plugin", "plugin": "search"}``.

        Returns:
            The queued message.

        Raises:
            RuntimeError: The call's dispatch phase is over (the context could not be delivered).
        """
        if self._deferring_closed:
            raise RuntimeError(
                f'tool "{self._name}" ({self._call_id}): defer_context after dispatch settled'
            )
        message = context_message(content, source=source)
        self._deferred.append(message)
        return message

    def conclude_turn(self) -> None:
        """Ask the agent loop to end the turn after this step (sets ``result.concludes_turn``)."""
        if self._finished:
            raise RuntimeError(
                f'tool "{self._name}" ({self._call_id}): conclude_turn after the call finished'
            )
        self._concluded = True


# ---------------------------------------------------------------------------------------------
# The input of one call, and the phases the pool drives
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ToolExecutionInput:
    """One call as the runtime receives it.

    Attributes:
        call_id: The model's tool-call id.
        name: The tool name the model asked for.
        arguments: Parsed arguments (any object; snapshotted to lossless JSON by the runtime).
        abort: Setting this event aborts the call (``None``: never aborted).
        parent: The execution of the composite tool that issued this call, for nested calls.
        agent: The agent the call runs for (opaque; routed to the approval service).
        root_call_id: The top-level call id of a nested call tree (defaults to ``call_id``).
    """

    call_id: str
    name: str
    arguments: Any
    abort: trio.Event | None = None
    parent: ToolExecution | None = attrs.field(default=None, kw_only=True)
    agent: object | None = attrs.field(default=None, kw_only=True)
    root_call_id: str | None = attrs.field(default=None, kw_only=True)
    # The runtime's note between classifying this call and preparing it (see
    # :func:`parsed_input`); not a field of the value (no init, eq, hash or repr).
    _memo: object = attrs.field(default=None, init=False, eq=False, repr=False)

    if not TYPE_CHECKING:  # (a ``__getattr__`` would make every attribute name type-check)

        def __getattr__(self, name: str) -> Any:
            # Python calls this only for an attribute that is not set: the ``arguments`` of an
            # input made by ``parsed_input`` that nobody has read yet. It is made now, once,
            # from the parse's frozen form: a value of the input's own, as parsed, which the
            # execution running with the parsed value itself never shares.
            if name == "arguments":
                note = self._memo
                if type(note) is ParsedArguments and note.frozen is not None:
                    return note.arguments_of(self)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class _Unnoted:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNNOTED"

    def __reduce__(self) -> str:
        # Copies and pickles of a note keep the one sentinel (``is UNNOTED`` stays true).
        return "UNNOTED"


#: ``ParsedArguments.run_with`` when there is no copy to run with (yet, or any more).
UNNOTED: Final = _Unnoted()


class ParsedArguments:
    """``ToolExecutionInput._memo`` of a :func:`parsed_input`: the pool parsed the value itself.

    One note per input, updated in place as the call goes (see ``Registry.execution_mode`` and
    ``ToolScheduler.prepare``).

    Attributes:
        text: The argument text the value was parsed from.
        run_with: The value the call's execution runs with, which no one else is handed: the
            parsed value itself when the parse proved it lossless JSON
            (``parse_arguments_frozen``), else the classification's copy
            (``snapshot_json_value``, taken before the classifier runs); :data:`UNNOTED` before
            that and once an execution took it.
        frozen: The parse's frozen form of the value while the input's own ``arguments`` is not
            made yet (they are made from it when first read), else ``None``.
        checked: ``(check, violations)``: the classification's check's verdict on
            ``run_with``, or ``None``.
    """

    __slots__ = ("checked", "frozen", "run_with", "text")

    def __init__(self, text: str, run_with: object, frozen: bytes | None) -> None:
        self.text = text
        self.run_with = run_with
        self.frozen = frozen
        self.checked: tuple[Callable[[object, str], list[str]], list[str]] | None = None

    def arguments_of(self, input: ToolExecutionInput) -> Any:
        """``input.arguments`` of the input this is the note of, made now if not made yet.

        The one place they are made: ``ToolExecutionInput.__getattr__`` calls it on a first
        read by anyone, and ``Registry.execution_mode`` calls it directly for a classifier
        (without the failed slot lookup a read of an unset attribute costs first)."""
        frozen = self.frozen
        if frozen is None:
            return input.arguments
        value = thaw(frozen)
        object.__setattr__(input, "arguments", value)
        self.frozen = None
        return value

    # A copy or a pickle of an input keeps its note without the verdict (a compiled check is
    # no picklable value): its execution checks the arguments again.
    def __getstate__(self) -> tuple[str, object, bytes | None]:
        return (self.text, self.run_with, self.frozen)

    def __setstate__(self, state: tuple[str, object, bytes | None]) -> None:
        self.text, self.run_with, self.frozen = state
        self.checked = None


def parsed_note(input: object) -> ParsedArguments | None:
    """The note of an input :func:`parsed_input` made, else ``None`` (any object with the
    fields of a :class:`ToolExecutionInput` is an input; reading its note never raises)."""
    try:
        note = getattr(input, "_memo", None)
    except Exception:
        return None
    return note if type(note) is ParsedArguments else None


def parsed_input(
    call_id: str,
    name: str,
    text: str,
    abort: trio.Event | None,
    *,
    parent: ToolExecution | None = None,
    agent: object | None = None,
    root_call_id: str | None = None,
) -> ToolExecutionInput:
    """The input of a call whose argument text the pool parses here, once.

    The parsed value is the pool's own. When the parse proved it lossless JSON
    (``parse_arguments_frozen``), the call's first execution runs with that value itself and the
    input's ``arguments`` are made from the parse's frozen form only when somebody reads them
    (a classifier, a tracer, a wrapper): a copy of the value as parsed, whenever it is read, so
    nothing the execution does reaches a reader and nothing a reader does reaches the execution.
    Otherwise ``arguments`` is the parsed value and the call's one copy is taken when it is
    classified (before any classifier is handed the value) or prepared. The value is checked
    once (the body takes the classification's verdict while no phase was handed it). See
    ``registry.Registry.execution_mode`` and ``pipeline.ToolScheduler.prepare``.
    """
    value, frozen = parse_arguments_frozen(text)
    input = ToolExecutionInput(
        call_id,
        name,
        value if frozen is None else None,
        abort,
        parent=parent,
        agent=agent,
        root_call_id=root_call_id,
    )
    if frozen is None:
        note = ParsedArguments(text, UNNOTED, None)
    else:
        # Unset until first read (``ParsedArguments.arguments_of`` makes it from ``frozen``).
        object.__delattr__(input, "arguments")
        note = ParsedArguments(text, value, frozen)
    # A frozen value's private note, set as attrs itself sets fields of frozen classes.
    object.__setattr__(input, "_memo", note)
    return input


@attrs.frozen
class Preparation:
    """What ``scheduler.prepare`` decided.

    ``kind`` is ``"dispatch"`` (run the body next; ``result`` is ``None``), ``"post-result"`` (a
    result that still goes through post-execute) or ``"final-result"`` (a result that bypasses
    post-execute and only needs ``finish``).
    """

    kind: Literal["dispatch", "post-result", "final-result"]
    exec: ToolExecution
    result: ToolExecutionResult | None = None


@attrs.frozen
class DispatchOutcome:
    """What ``scheduler.dispatch`` produced: a result, and whether post-execute still runs."""

    kind: Literal["post-result", "final-result"]
    result: ToolExecutionResult


class Scheduler(Protocol):
    """The three phases the pool drives, and ``finish``; an exception escaping one is a scheduler
    failure."""

    async def prepare(self, input: ToolExecutionInput, /) -> Preparation: ...

    async def dispatch(self, exec: ToolExecution, /) -> DispatchOutcome: ...

    async def finalize(
        self, exec: ToolExecution, result: ToolExecutionResult, /
    ) -> ToolExecutionResult: ...

    def finish(
        self, exec: ToolExecution, result: ToolExecutionResult, /
    ) -> ToolExecutionResult: ...


class Runtime(Protocol):
    """What a running call sees of its runtime as ``ctx.runtime`` (``ToolRuntime`` is one).

    A composite tool body issues nested calls through it: ``ctx.runtime.execute(input)`` for one,
    :func:`~trio_harness.execute_sub_calls` (which reads ``scheduler`` and ``execution_mode``) for
    a parallel batch.
    """

    @property
    def scheduler(self) -> Scheduler: ...

    def execution_mode(self, input: ToolExecutionInput, /) -> ExecutionMode: ...

    async def execute(self, input: ToolExecutionInput, /) -> ToolExecutionResult: ...
