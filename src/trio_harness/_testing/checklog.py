"""The session-log checker of ``check-log`` and ``check_session``: the pool's invariants in a log.

Any port's log can be checked: one event per line in the wire form of the API (``seq``, ``type``,
``data``, ``sourceEventSeqs``). Events other than ``tool/call`` and ``tool/result`` are only
checked for their ``seq``. The rules, each reported with the ``seq`` of the offending event:

``seq``
    seqs are 0, 1, 2, … in file order.
``cites-call``
    every ``tool/result`` cites exactly one earlier ``tool/call`` of the same call id, turn and step.
``one-result``
    no call gets two results.
``model-order``
    within a step, results are committed in the order of their calls.
``abort-shape``
    an ``ABORTED`` / ``ABORTED_BEFORE_DISPATCH`` result is an error named ``AbortError``; once a
    step records a skipped pair (a call directly followed by its ``ABORTED_BEFORE_DISPATCH``
    result, with every earlier call of the step answered) every later call of that step is a
    synthetic pair too, showing exactly ``Error: tool call aborted before dispatch``.
``unpaired``
    at the end of each step every call has its result. A step that ended in a scheduler failure
    legitimately leaves started calls unpaired: ``allow_unpaired`` accepts those.

Human approval (an agent app's ``approval/pending`` and ``approval/decision`` events; a log
without them is judged exactly as before):

``approval-shape``
    a record has integer ``turn`` and ``step``, a non-empty ``calls`` array of objects with an
    integer ``index`` and string ``id`` (``approval/pending``), or an integer ``index``, a
    string ``id`` and a boolean ``approved`` (``approval/decision``).
``approval-cites-pending``
    a decision answers a call an earlier ``approval/pending`` of its turn and step listed.
``one-decision``
    no listed call gets two decisions.
``approved-before-run``
    a call listed as waiting (``inline: false``) starts (its ``tool/call``) only after a
    decision, unless it is answered as never started (its synthetic ``ABORTED_BEFORE_DISPATCH``
    pair, as a crash recovery answers it); a call asked inline succeeds only with an approval
    recorded before its result; a rejected call's result is an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import attrs

from .._json import MAX_FINITE_JSON_INT, loads_any_depth

__all__ = ["LogFormatError", "LogViolation", "check_log", "check_log_text"]

_ABORT_TEXT: Final = {
    "ABORTED": "tool call aborted",
    "ABORTED_BEFORE_DISPATCH": "tool call aborted before dispatch",
}


class LogFormatError(ValueError):
    """A line of the log is not a session event; ``line`` is its 1-based number."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@attrs.frozen
class LogViolation:
    """One broken invariant: the event's ``seq``, the rule's name and what is wrong."""

    seq: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"seq {self.seq}: [{self.rule}] {self.message}"


@attrs.frozen
class _Call:
    seq: int
    call_id: str
    turn: Any
    step: Any


@attrs.frozen
class _Result:
    seq: int
    call_id: str
    turn: Any
    step: Any
    cites: tuple[Any, ...] | None
    is_error: Any
    texts: tuple[str, ...]
    error: Any


def _parse_event(raw: Any, line: int) -> tuple[int, str, Any]:
    if type(raw) is not dict:
        raise LogFormatError(line, "an event must be a JSON object")
    for key in ("seq", "type", "data"):
        if key not in raw:
            raise LogFormatError(line, f'event has no "{key}"')
    seq = raw["seq"]
    if type(seq) is not int:
        raise LogFormatError(line, '"seq" must be an integer')
    if not -MAX_FINITE_JSON_INT <= seq <= MAX_FINITE_JSON_INT:
        # Checked before anything formats it (Python refuses to print past 4,300 digits).
        raise LogFormatError(line, '"seq" is beyond the range of a JSON number')
    if type(raw["type"]) is not str:
        raise LogFormatError(line, '"type" must be a string')
    return seq, raw["type"], raw


def _position(data: dict[str, Any], kind: str, line: int) -> tuple[int | None, int | None]:
    # ``turn`` and ``step`` key the per-step bookkeeping: integers (or absent) only, so a
    # hostile value (an array, an object) is a format error, never a crash.
    turn, step = data.get("turn"), data.get("step")
    for key, value in (("turn", turn), ("step", step)):
        if value is not None and type(value) is not int:
            raise LogFormatError(line, f"{kind} data.{key} must be an integer")
    return turn, step


def _call(seq: int, event: dict[str, Any], line: int) -> _Call:
    data = event["data"]
    if type(data) is not dict or type(data.get("callId")) is not str:
        raise LogFormatError(line, "tool/call data must be an object with a string callId")
    turn, step = _position(data, "tool/call", line)
    return _Call(seq, data["callId"], turn, step)


def _result(seq: int, event: dict[str, Any], line: int) -> _Result:
    data = event["data"]
    try:
        message = data["message"]
        block = message["content"][0]
        call_id = block["toolCallId"]
        source_id = message["source"]["callId"]
        content = block["content"]
        texts = tuple(part.get("text", "") if type(part) is dict else "" for part in content)
    except (KeyError, TypeError, IndexError):
        raise LogFormatError(
            line, "tool/result data must carry message.content[0] with toolCallId and content"
        ) from None
    if type(call_id) is not str or source_id != call_id:
        raise LogFormatError(line, "tool/result message.source.callId and toolCallId must agree")
    cites = event.get("sourceEventSeqs")
    turn, step = _position(data, "tool/result", line)
    return _Result(
        seq,
        call_id,
        turn,
        step,
        tuple(cites) if type(cites) is list else None,
        block.get("isError"),
        texts,
        data.get("error"),
    )


def check_log(events: Iterable[Any], *, allow_unpaired: bool = False) -> list[LogViolation]:
    """Check decoded session events (wire form) for the pool's invariants.

    Args:
        events: The events in log order (each a decoded JSON object).
        allow_unpaired: Accept calls left without a result (steps that raised a scheduler
            failure leave them).

    Returns:
        Every violation, in log order (``[]`` for a valid log).

    Raises:
        LogFormatError: An event is not a session event (its 1-based position is named).

    Time and memory are linear in the number of events.
    """
    events = list(events)
    violations: list[LogViolation] = _approval_violations(events)
    calls: dict[int, _Call] = {}
    answered: dict[int, int] = {}
    # Per (turn, step): the last cited call seq, whether skipping started, how many of its
    # calls are still unanswered.
    last_cited: dict[tuple[Any, Any], int] = {}
    skipping: dict[tuple[Any, Any], int] = {}
    unanswered: dict[tuple[Any, Any], int] = {}
    previous: tuple[str, int, _Call | None] | None = None
    expected_seq = 0
    for line, raw in enumerate(events, 1):
        seq, kind, event = _parse_event(raw, line)
        if seq != expected_seq:
            violations.append(LogViolation(seq, "seq", f"seq {seq} where {expected_seq} was due"))
        expected_seq = seq + 1
        if kind == "tool/call":
            call = _call(seq, event, line)
            key = (call.turn, call.step)
            calls[seq] = call
            unanswered[key] = unanswered.get(key, 0) + 1
            previous = ("call", seq, call)
            continue
        if kind != "tool/result":
            previous = (kind, seq, None)
            continue
        result = _result(seq, event, line)
        key = (result.turn, result.step)
        cites = result.cites
        cited: _Call | None = None
        if (
            cites is None
            or len(cites) != 1
            or type(cites[0]) is not int
            or not -MAX_FINITE_JSON_INT <= cites[0] <= MAX_FINITE_JSON_INT
        ):
            violations.append(
                LogViolation(seq, "cites-call", "a result must cite exactly one call seq")
            )
        else:
            cited = calls.get(cites[0])
            if cited is None:
                where = "a later event" if cites[0] >= seq else "no tool/call"
                violations.append(
                    LogViolation(seq, "cites-call", f"cites seq {cites[0]}, which is {where}")
                )
            elif cited.call_id != result.call_id:
                violations.append(
                    LogViolation(
                        seq,
                        "cites-call",
                        f"result of {result.call_id} cites the call of {cited.call_id} (seq {cited.seq})",
                    )
                )
                cited = None
            elif (cited.turn, cited.step) != key:
                violations.append(
                    LogViolation(seq, "cites-call", "result and its call belong to different steps")
                )
        if cited is not None:
            if cited.seq in answered:
                violations.append(
                    LogViolation(
                        seq,
                        "one-result",
                        f"second result for call {cited.call_id} (seq {cited.seq}); "
                        f"the first is seq {answered[cited.seq]}",
                    )
                )
            else:
                answered[cited.seq] = seq
                unanswered[(cited.turn, cited.step)] -= 1
                last = last_cited.get(key, -1)
                if cited.seq < last:
                    violations.append(
                        LogViolation(
                            seq,
                            "model-order",
                            f"result of {result.call_id} (call seq {cited.seq}) committed after "
                            f"the result of a later call (call seq {last})",
                        )
                    )
                last_cited[key] = max(last, cited.seq)
        code = result.error.get("code") if type(result.error) is dict else None
        if type(code) is not str:
            code = None
        skipped_pair = (
            code == "ABORTED_BEFORE_DISPATCH"
            and previous is not None
            and previous[0] == "call"
            and cited is not None
            and previous[1] == cited.seq
        )
        violations.extend(_abort_shape(result, synthetic=key in skipping and skipped_pair))
        if key in skipping and not skipped_pair:
            violations.append(
                LogViolation(
                    seq,
                    "abort-shape",
                    f"result of {result.call_id} is not a skipped pair, but skipping began at "
                    f"seq {skipping[key]}",
                )
            )
        # A skipped pair starts skipping only if nothing of the step is still unanswered
        # before it (otherwise it is an ordinary pre-aborted call inside a group).
        if skipped_pair and key not in skipping and cited is not None and not unanswered.get(key):
            skipping[key] = cited.seq
        previous = ("result", seq, None)
    if not allow_unpaired:
        for call_seq, call in calls.items():
            if call_seq not in answered:
                violations.append(
                    LogViolation(
                        call_seq,
                        "unpaired",
                        f"call {call.call_id} has no result by the end of its step "
                        "(legitimate only after a scheduler failure)",
                    )
                )
    violations.sort(key=lambda violation: violation.seq)
    return violations


_PENDING: Final = "approval/pending"
_DECISION: Final = "approval/decision"


def _approval_shape(kind: str, data: Any) -> str | None:
    if type(data) is not dict or type(data.get("turn")) is not int:
        return "turn must be an integer"
    if type(data.get("step")) is not int:
        return "step must be an integer"
    if kind == _DECISION:
        if type(data.get("index")) is not int or type(data.get("id")) is not str:
            return "a decision needs an integer index and a string id"
        return None if type(data.get("approved")) is bool else "approved must be a boolean"
    calls = data.get("calls")
    if type(calls) is not list or not calls:
        return "calls must be a non-empty array"
    for call in calls:
        if type(call) is not dict or type(call.get("index")) is not int:
            return "every call needs an integer index"
        if type(call.get("id")) is not str:
            return "every call needs a string id"
    return None


def _approval_violations(events: list[Any]) -> list[LogViolation]:
    """The approval rules (see the module docstring); ``[]`` for a log without approval."""
    violations: list[LogViolation] = []
    # Per call (turn, step, id): how it was listed last ("deferred" or "inline") and its decision.
    listed: dict[tuple[Any, Any, str], str] = {}
    decided: dict[tuple[Any, Any, str], tuple[int, bool]] = {}
    # A started call of a deferred listing: its key and the decision it had when it started.
    started: dict[int, tuple[tuple[Any, Any, str], tuple[int, bool] | None]] = {}
    keys: dict[int, tuple[Any, Any, str]] = {}  # every call seq -> its key
    for raw in events:
        if type(raw) is not dict or type(raw.get("seq")) is not int:
            continue  # check_log reports it
        kind, seq = raw.get("type"), int(raw["seq"])
        data: Any = raw.get("data")
        if kind in (_PENDING, _DECISION):
            problem = _approval_shape(kind, data)
            if problem is not None:
                violations.append(LogViolation(seq, "approval-shape", problem))
            elif kind == _PENDING:
                how = "inline" if data.get("inline") is True else "deferred"
                for call in data["calls"]:
                    listed[(data["turn"], data["step"], call["id"])] = how
            else:
                key = (data["turn"], data["step"], data["id"])
                if key not in listed:
                    message = f"no pending call {data['id']} to decide"
                    violations.append(LogViolation(seq, "approval-cites-pending", message))
                elif key in decided:
                    message = (
                        f"second decision for {data['id']} (the first is seq {decided[key][0]})"
                    )
                    violations.append(LogViolation(seq, "one-decision", message))
                else:
                    decided[key] = (seq, data["approved"])
        elif kind == "tool/call" and type(data) is dict and _positioned(data):
            key = (data.get("turn"), data.get("step"), data.get("callId"))
            keys[seq] = key
            if listed.get(key) == "deferred":
                started[seq] = (key, decided.get(key))
                del listed[key]
        elif kind == "tool/result" and type(data) is dict:
            cites = raw.get("sourceEventSeqs")
            call_seq = cites[0] if type(cites) is list and len(cites) == 1 else None
            if type(call_seq) is int and call_seq in keys:
                problem = _answered(data, call_seq, keys.pop(call_seq), started, listed, decided)
                if problem is not None:
                    violations.append(LogViolation(seq, "approved-before-run", problem))
    return violations


def _positioned(data: dict[str, Any]) -> bool:
    # Hashable keys only: check_log reports any other turn, step or id as a format error.
    return all(
        data.get(key) is None or type(data.get(key)) in (int, str)
        for key in ("turn", "step", "callId")
    )


def _answered(
    data: dict[str, Any],
    call_seq: int,
    key: tuple[Any, Any, str],
    started: dict[int, tuple[tuple[Any, Any, str], tuple[int, bool] | None]],
    listed: dict[tuple[Any, Any, str], str],
    decided: dict[tuple[Any, Any, str], tuple[int, bool]],
) -> str | None:
    """What is wrong with the result of call ``key`` under the approval rules, or ``None``."""
    error = data.get("error")
    code = error.get("code") if type(error) is dict else None
    try:
        failed = data["message"]["content"][0].get("isError") is True
    except (KeyError, TypeError, IndexError, AttributeError):
        return None
    if call_seq in started:
        _, decision = started.pop(call_seq)
        decided.pop(key, None)
        if decision is None:
            # Only a synthetic never-started pair may answer it undecided (the caller checks).
            return (
                None
                if code == "ABORTED_BEFORE_DISPATCH" and failed
                else (f"{key[2]} started before its decision")
            )
        if not decision[1] and not failed:
            return f"rejected {key[2]} succeeded"
        return None
    if listed.get(key) == "inline":
        del listed[key]
        decision = decided.pop(key, None)
        if not failed and (decision is None or not decision[1]):
            return f"{key[2]} ran without approval"
    return None


def _abort_shape(result: _Result, *, synthetic: bool) -> list[LogViolation]:
    # A post-execute hook may replace the content of a cancellation result; only synthetic
    # pairs (which bypass the registry) are pinned to the exact text.
    error = result.error
    if type(error) is not dict:
        return []
    code = error.get("code")
    if type(code) is not str or code not in _ABORT_TEXT:
        return []
    problems = []
    if error.get("name") != "AbortError":
        problems.append(f"{code} result must carry name AbortError, got {error.get('name')!r}")
    if result.is_error is not True:
        problems.append(f"{code} result must be an error")
    want = "Error: " + _ABORT_TEXT[code]
    if synthetic and result.texts != (want,):
        problems.append(f"{code} result must show {want!r}, got {list(result.texts)!r}")
    return [LogViolation(result.seq, "abort-shape", problem) for problem in problems]


def check_log_text(text: str, *, allow_unpaired: bool = False) -> list[LogViolation]:
    """:func:`check_log` over JSON Lines text (blank lines are passed over).

    Lines are read as the durable log reads them: at any nesting depth (the library writes and
    reads data of any depth), ``NaN``/``Infinity`` are not JSON.

    Raises:
        LogFormatError: A line is not JSON or not a session event (the line number is named).
    """
    events = []
    numbers = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            events.append(loads_any_depth(line, js_key_order=False))
        except ValueError:
            raise LogFormatError(number, "not JSON") from None
        numbers.append(number)
    try:
        return check_log(events, allow_unpaired=allow_unpaired)
    except LogFormatError as error:
        raise LogFormatError(numbers[error.line - 1], str(error).split(": ", 1)[1]) from None
