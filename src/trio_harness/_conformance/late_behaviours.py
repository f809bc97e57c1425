"""Predicates of the behaviours added when blind mutants of upstream survived the kit (issue 33).

Each reads a scenario and the reference's answer (:class:`~.answer_view.AnswerView`), as those of
:mod:`.behaviours` do: a wrapper-authored success cancelled before its commit, a call not
dispatched after another call's dispatch failed while it prepared, a tool resolved again after
an earlier commit removed it.
"""

from __future__ import annotations

from .._values import UNSET
from .answer_view import AnswerView

__all__ = ["failure_stops_prepared", "removed_before_commit", "wrapper_success_aborted"]


def failure_stops_prepared(view: AnswerView) -> bool:
    """A dispatch failed while a later call's prepare was awaited (its pre-execute hook or
    approval): that call, allowed, is never dispatched."""
    failure = view.s.failure
    if not view.raised() or failure is None or failure.phase != "dispatch":
        return False
    failed_at = view.outcome["failedAt"]
    return any(
        call.id != failure.call
        and call.guard is None
        and (
            call.pre is None
            or call.pre.decision == "allow"
            or (call.pre.decision == "ask" and call.pre.approval in (None, "allowed-once"))
        )
        and view.times[call.id]["prepared"] is not None
        and view.times[call.id]["prepared"] > failed_at
        and view.times[call.id]["settled"] is None
        for call in view.s.calls
    )


def wrapper_success_aborted(view: AnswerView) -> bool:
    """A wrapper returned a success of its own (the body never ran) on an aborted step, and the
    call is committed ``ABORTED_BEFORE_DISPATCH``."""
    return view.aborted() and any(
        call.wrapper is not None
        and call.wrapper.kind == "returns"
        and view.times[call.id]["bodyStarted"] is None
        and view.times[call.id]["settled"] is not None
        and view.results.get(call.id, {}).get("code") == "ABORTED_BEFORE_DISPATCH"
        for call in view.s.calls
    )


def removed_before_commit(view: AnswerView) -> bool:
    """A call of a tool registered at the start, prepared, ends ``UNKNOWN_TOOL`` through a
    wrapper-authored success or a replacement value: an earlier commit removed its tool."""
    return any(
        call.name in view.tools
        and view.times[call.id]["prepared"] is not None
        and view.results.get(call.id, {}).get("code") == "UNKNOWN_TOOL"
        and (
            (call.wrapper is not None and call.wrapper.kind == "returns")
            or (call.post is not None and call.post.value is not UNSET)
        )
        for call in view.s.calls
    )
