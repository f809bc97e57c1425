"""The session log: an append-only list of events, and its JSON Lines form.

The log keeps only what it can give back: :meth:`Session.append` rejects, with the path of the
offending field, anything the wire form would write differently (``nan``, ``-0.0``, a set, an
``int`` key, a typed value with a mistyped field, a source that is not an earlier event), and
:meth:`Session.from_jsonl` reads exactly the forms :meth:`Session.to_jsonl` writes, strictly,
with the one reader of :mod:`.read` (which ``load_session_log`` uses too).

Appending checks and stores the typed value only; the wire form is produced on demand
(``SessionEvent.to_json``, :mod:`.events`), so logging costs a few type checks and two small
allocations per call on the hot path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, NoReturn

import attrs

from .._json import (
    MAX_FINITE_JSON_INT,
    NOT_JSON,
    is_json_value,
    js_json,
    json_node_limit,
    node_limit_message,
    snapshot_json_value,
)
from .._values import UNSET, ErrorInfo
from .events import (
    CONTENT,
    JSON,
    TOOL_CALL,
    TOOL_RESULT,
    TYPED_DATA,
    TYPED_EVENT,
    WIRE,
    MessageSource,
    SessionEvent,
    ToolCallData,
    ToolResultBlock,
    ToolResultData,
    ToolResultMessage,
    unstructure_event,
)
from .read import JSON_BLANK, InvalidLine, Problem, flat_json_ok, json_problem, read_line

__all__ = ["Session"]

_type_of: Final = type


@attrs.define(eq=False)
class Session:
    """An append-only event log."""

    _events: list[SessionEvent] = attrs.field(factory=list, alias="events")

    @property
    def events(self) -> list[SessionEvent]:
        """The events so far, in seq order. Treat as read-only."""
        return self._events

    def append(
        self, type: str, data: Any, *, source_event_seqs: Sequence[int] | None = None
    ) -> SessionEvent:
        """Append an event and return it (its ``seq`` is the next position).

        Args:
            type: The event type. ``"tool/call"`` takes a :class:`ToolCallData` and
                ``"tool/result"`` a :class:`ToolResultData`, and those two classes are the data
                of those two types only; any other type takes lossless JSON data.
            data: The event's data. Custom (JSON) data is kept as a detached copy, so later
                changes to the caller's value do not reach the log; typed data is stored as
                given (it is frozen).
            source_event_seqs: Seqs of the events this one answers.

        Raises:
            TypeError: ``type`` is not a ``str``; a source seq is not an ``int``; the data does
                not fit the event type; a typed field has the wrong type; or custom data holds a
                value JSON has no type for (a set, a tuple, an object, a ``dict``/``list``/``str``
                subclass, a non-``str`` key). The message names the field, e.g.
                ``data.items[2].key``. Nothing is appended.
            ValueError: A number JSON cannot keep (``nan``, ``±inf``, ``-0.0``, an ``int``
                beyond the double range) or a cycle, named the same way; custom data larger
                than the JSON node limit (``th.lowlevel.set_json_node_limit``; the message
                names the limit); or a source seq that is not the seq of an earlier event (the
                reader would refuse the line).
        """
        events = self._events
        event = checked_event(type, data, source_event_seqs, len(events))
        events.append(event)
        return event

    def to_jsonl(self) -> str:
        """The log as JSON Lines (one compact event per line, each line ending in ``\\n``)."""
        return "".join(js_json(unstructure_event(event)) + "\n" for event in self._events)

    @classmethod
    def from_jsonl(cls, text: str) -> Session:
        """Rebuild a log from :meth:`to_jsonl` output.

        Lines are separated by ``"\\n"`` only; a line that is empty or only JSON whitespace
        (space, tab, CR) is skipped. Each line is read strictly: exactly the fields the wire form
        writes, with their JSON types (an integer is never read from a string or a float), and
        only data :meth:`append` would accept. Object keys keep the line's order at any depth.

        Raises:
            ValueError: A line is not JSON, not an event, out of seq order, or cites a source
                that is not an earlier event; the message names the line and the field
                (``session line 3: data.step must be an integer, got string``).
        """
        session = cls()
        events = session._events
        # Only "\n" separates lines: str.splitlines() would also split inside strings that hold
        # U+2028, U+0085 and friends (js_json keeps them raw, as JSON.stringify does).
        for number, line in enumerate(text.split("\n"), 1):
            if not line.strip(JSON_BLANK):
                continue
            try:
                event, _ = read_line(line, len(events))
            except InvalidLine as invalid:
                raise ValueError(f"session line {number}: {invalid.problem.render()}") from None
            events.append(event)
        return session


def checked_event(
    type: str, data: Any, source_event_seqs: Sequence[int] | None, seq: int
) -> SessionEvent:
    """The event ``Session.append`` would append as ``seq`` (its checks; see there)."""
    # The checks of the hot path; every error is worded by ``_refuse`` (slow path).
    kind = _type_of(data)
    if kind is ToolCallData:
        if type != TOOL_CALL or not _call_data_ok(data):
            _refuse(type, data)
    elif kind is ToolResultData:
        if type != TOOL_RESULT or not _result_data_ok(data):
            _refuse(type, data)
    else:
        if _type_of(type) is not str or type in TYPED_DATA:
            _refuse(type, data)
        kept = snapshot_json_value(data)  # checks and detaches in one pass
        if kept is NOT_JSON:
            _refuse(type, data)
        data = kept
    sources = None if source_event_seqs is None else _sources(source_event_seqs, seq)
    event = SessionEvent(seq, type, data, sources)
    return event


_E21: Final = 10**21


def checked_event_kept_as_given(
    type: str, data: Any, source_event_seqs: Sequence[int] | None, seq: int
) -> tuple[SessionEvent, bool | None]:
    """:func:`checked_event` without the detached copy of custom data (for a log that keeps no
    event: its line is written at once), and whether every number of the data is plain
    (:func:`json_verdict`; ``None``: not known)."""
    kind = _type_of(data)
    if kind is ToolCallData or kind is ToolResultData:
        event = checked_event(type, data, source_event_seqs, seq)
        return event, typed_plain(data)
    if _type_of(type) is not str or type in TYPED_DATA:
        return checked_event(type, data, source_event_seqs, seq), None
    verdict = json_verdict(data)
    if verdict is NOT_JSON:
        _refuse(type, data)
    sources = None if source_event_seqs is None else _sources(source_event_seqs, seq)
    return SessionEvent(seq, type, data, sources), verdict


def typed_plain(data: ToolCallData | ToolResultData) -> bool:
    """Whether every number of typed data :func:`checked_event` accepted is plain (see
    :func:`json_verdict`): its turn and step, and those in a result's content and meta (the
    rest of its wire form is strings and booleans under ``str`` keys)."""
    if not (-_E21 < data.turn < _E21 and -_E21 < data.step < _E21):
        return False
    if not isinstance(data, ToolResultData):
        return True
    for block in data.message.content:
        for item in block.content:
            if _type_of(item) is dict:
                # A content block, usually: a flat dict of strings (its keys are ``str``: the
                # data was accepted) is plain whatever its size, without the general walk.
                for value in item.values():
                    if _type_of(value) is not str:
                        break
                else:
                    continue
            if json_verdict(item) is not True:
                return False
    meta = data.meta
    return meta is UNSET or json_verdict(meta) is True


def json_verdict(value: Any) -> Any:
    """:data:`NOT_JSON` where ``snapshot_json_value`` refuses ``value`` (not lossless JSON, a
    cycle, over the JSON node limit); otherwise whether every number in it is *plain*: an
    ``int`` below 10**21 in magnitude, or a float that is not integral with
    ``1e-4 <= abs(x) < 1e16`` (Python's text of it is then JavaScript's). One walk, no copy."""
    kind = _type_of(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        if not -MAX_FINITE_JSON_INT <= value <= MAX_FINITE_JSON_INT:
            return NOT_JSON
        return -_E21 < value < _E21
    if kind is float:
        if not is_json_value(value):
            return NOT_JSON
        return 1e-4 <= abs(value) < 1e16 and not value.is_integer()
    if kind is not dict and kind is not list:
        return NOT_JSON
    limit = json_node_limit()
    plain = True
    # Every place counts against the limit, as in snapshot_json_value: a shared container is
    # walked at each place, and a cycle expands until it is over the limit (refused either way).
    nodes = 1
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        kind = _type_of(item)
        # A container's strings, booleans and nulls are judged where they are (most of its
        # children, usually); only the others go on the stack.
        if kind is dict:
            nodes += len(item)
            if nodes > limit:
                return NOT_JSON
            for key, child in item.items():
                if _type_of(key) is not str:
                    return NOT_JSON
                kind = _type_of(child)
                if kind is not str and kind is not bool and child is not None:
                    push(child)
        elif kind is list:
            nodes += len(item)
            if nodes > limit:
                return NOT_JSON
            for child in item:
                kind = _type_of(child)
                if kind is not str and kind is not bool and child is not None:
                    push(child)
        elif kind is int:
            if not -MAX_FINITE_JSON_INT <= item <= MAX_FINITE_JSON_INT:
                return NOT_JSON
            if plain and not -_E21 < item < _E21:
                plain = False
        elif kind is float:
            if not 1e-4 <= abs(item) < 1e16 or item.is_integer():
                if not is_json_value(item):  # nan, the infinities, -0.0
                    return NOT_JSON
                plain = False
        else:
            return NOT_JSON
    return plain


def _refuse(event_type: Any, data: Any) -> NoReturn:
    """Raise the error for an event :meth:`Session.append` refused (the slow path)."""
    if _type_of(event_type) is not str:
        raise TypeError(f"Session.append: type must be a str, got {_type_of(event_type).__name__}")
    kind = _type_of(data)
    typed = TYPED_DATA.get(event_type)
    if typed is not None or kind in TYPED_EVENT:
        if kind is not typed:
            raise TypeError(f"Session.append: {_misfiled(event_type, kind)}")
        problem = _typed_problem(data, kind)
    else:
        problem = json_problem(data)
        if problem is None:
            # Lossless JSON in every part, but larger than the node limit as a whole (the check
            # counts a container shared by several places at each; a cycle is refused earlier).
            limit = json_node_limit()
            problem = Problem(ValueError, node_limit_message("", limit).lstrip())
    if problem is None:  # pragma: no cover - pinned by test_fast_typed_checks_agree_...
        raise AssertionError("Session.append: the fast check and the field table disagree")
    raise problem.error(f"Session.append: {problem.render('data')}")


def _sources(seqs: Sequence[int], seq: int) -> tuple[int, ...]:
    sources = seqs if _type_of(seqs) is tuple else _tuple_of(seqs)
    for index, source in enumerate(sources):
        if _type_of(source) is not int:
            raise TypeError(
                f"Session.append: source_event_seqs[{index}] must be an int, "
                f"got {_type_of(source).__name__}"
            )
        if not 0 <= source < seq:
            earlier = f"0 to {seq - 1}" if seq else "none yet"
            # Python prints no int over 4,300 digits (int_max_str_digits): a huge one by size.
            shown = str(source) if abs(source) < 10**20 else f"a {source.bit_length()}-bit integer"
            raise ValueError(
                f"Session.append: source_event_seqs[{index}] is {shown}, not the seq of an "
                f"earlier event ({earlier})"
            )
    return sources  # type: ignore[return-value]


def _tuple_of(seqs: Sequence[int]) -> tuple[int, ...]:
    try:
        return tuple(seqs)
    except TypeError:
        raise TypeError(
            "Session.append: source_event_seqs must be a sequence of ints, "
            f"got {_type_of(seqs).__name__}"
        ) from None


def _misfiled(event_type: str, kind: type) -> str:
    typed = TYPED_DATA.get(event_type)
    if typed is not None:
        return f"{event_type} data must be a {typed.__name__}, got {kind.__name__}"
    return (
        f"a {kind.__name__} is the data of {TYPED_EVENT[kind]} events only, not of {event_type!r}"
    )


_PYTHON_NAMES: Final = {int: "an int", str: "a str", bool: "a bool"}


def _typed_problem(value: Any, cls: type) -> Problem | None:
    """The first field of typed ``value`` the wire form could not give back, or ``None``.

    Nothing is formatted unless a problem is found (this runs for every call the pool logs).
    """
    for field in WIRE[cls]:
        item = getattr(value, field.name)
        if item is field.absent:
            continue
        problem = _kind_problem(item, field.kind)
        if problem is not None:
            return problem.at("." + field.key)
    return None


def _kind_problem(item: Any, kind: Any) -> Problem | None:
    got = _type_of(item)
    if kind is int or kind is str or kind is bool:
        if got is kind:
            return None
        return Problem(TypeError, f"must be {_PYTHON_NAMES[kind]}, got {got.__name__}")
    if kind is JSON:
        return None if is_json_value(item) else json_problem(item)
    if kind is CONTENT or _type_of(kind) is tuple:
        if got is not tuple:
            return Problem(TypeError, f"must be a tuple, got {got.__name__}")
        for index, element in enumerate(item):
            if kind is CONTENT:
                # A block is whatever the tool rendered (upstream's blocks are objects, but the
                # pipeline only asks for lossless JSON): a stricter log would lose such a result.
                if is_json_value(element):
                    continue
                problem: Problem | None = json_problem(element)
            else:
                problem = _kind_problem(element, kind[0])
            if problem is not None:
                return problem.at(f"[{index}]")
        return None
    if got is not kind:
        return Problem(TypeError, f"must be a {kind.__name__}, got {got.__name__}")
    return _typed_problem(item, kind)


# The same rules unrolled for the two typed data of the hot path: ``True`` exactly when
# ``_typed_problem`` finds nothing (pinned by tests/log/test_session.py), in a fraction of its time.


def _call_data_ok(data: ToolCallData) -> bool:
    return (
        _type_of(data.turn) is int
        and _type_of(data.step) is int
        and _type_of(data.call_id) is str
        and _type_of(data.name) is str
        and _type_of(data.arguments) is str
    )


def _result_data_ok(data: ToolResultData) -> bool:
    if _type_of(data.turn) is not int or _type_of(data.step) is not int:
        return False
    message = data.message
    if _type_of(message) is not ToolResultMessage or _type_of(message.role) is not str:
        return False
    source = message.source
    if (
        _type_of(source) is not MessageSource
        or _type_of(source.kind) is not str
        or _type_of(source.call_id) is not str
    ):
        return False
    blocks = message.content
    if _type_of(blocks) is not tuple:
        return False
    for block in blocks:
        if (
            _type_of(block) is not ToolResultBlock
            or _type_of(block.type) is not str
            or _type_of(block.tool_call_id) is not str
            or _type_of(block.is_error) is not bool
            or _type_of(block.content) is not tuple
        ):
            return False
        for item in block.content:
            if not flat_json_ok(item):
                return False
    error = data.error
    if error is not None and (
        _type_of(error) is not ErrorInfo
        or _type_of(error.name) is not str
        or _type_of(error.code) is not str
    ):
        return False
    meta = data.meta
    return meta is UNSET or is_json_value(meta)


_TYPED_OK: Final[dict[type, Any]] = {ToolCallData: _call_data_ok, ToolResultData: _result_data_ok}
