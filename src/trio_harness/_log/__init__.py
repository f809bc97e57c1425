"""The session log: its events, the log in memory, the durable log on disk, replay checks.

Modules, in dependency order:

* :mod:`.events`: the typed events (``tool/call``, ``tool/result``), :class:`SessionEvent`, the
  field table and the wire writer;
* :mod:`.read`: the one strict reader of the wire form, and the problems it reports;
* :mod:`.session`: :class:`Session`, its append checks and its JSON Lines form;
* :mod:`.stored`: a durable log's events read back from its file on demand (``keep_events=False``);
* :mod:`.syncer`: the thread that runs a durable log's fsyncs, in order, off the appending one;
* :mod:`.journal`: :class:`DurableSession`, a session backed by a file (fsync policies, crash-cut
  recovery, the single-writer lock) and :func:`load_session_log`;
* :mod:`.replay`: is a stored log replay-valid, repair what a crash left unanswered, present it.

The durable log and the replay checks load on first use of one of their names (:data:`_LAZY`).

Private package (layer 5): it imports the JSON foundations, the errors, validation and the plain
values only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._public import lazy_attributes
from .events import (
    TOOL_CALL,
    TOOL_RESULT,
    MessageSource,
    SessionEvent,
    ToolCallData,
    ToolResultBlock,
    ToolResultData,
    ToolResultMessage,
)
from .read import Problem, js_type
from .session import Session

if TYPE_CHECKING:
    from .journal import (
        FSYNC_POLICIES,
        DurableSession,
        FsyncPolicy,
        LoadedSessionLog,
        LogCut,
        SessionLogError,
        SessionLogLockedError,
        load_session_log,
        open_checked,
    )
    from .replay import (
        PresentedCall,
        ReplayReport,
        UnansweredCall,
        check_replay,
        format_presented,
        present_log,
        repair_replay,
    )
    from .stored import StoredEvents, StoredTimes

__all__ = [
    "FSYNC_POLICIES",
    "TOOL_CALL",
    "TOOL_RESULT",
    "DurableSession",
    "FsyncPolicy",
    "LoadedSessionLog",
    "LogCut",
    "MessageSource",
    "PresentedCall",
    "Problem",
    "ReplayReport",
    "Session",
    "SessionEvent",
    "SessionLogError",
    "SessionLogLockedError",
    "StoredEvents",
    "StoredTimes",
    "ToolCallData",
    "ToolResultBlock",
    "ToolResultData",
    "ToolResultMessage",
    "UnansweredCall",
    "check_replay",
    "format_presented",
    "js_type",
    "load_session_log",
    "open_checked",
    "present_log",
    "repair_replay",
]

#: Loaded on first use (issue 30): the durable log and the replay checks; a pool recording into
#: a :class:`Session` in memory needs neither.
_LAZY: dict[str, str] = {
    **dict.fromkeys(
        (
            "FSYNC_POLICIES",
            "DurableSession",
            "FsyncPolicy",
            "LoadedSessionLog",
            "LogCut",
            "SessionLogError",
            "SessionLogLockedError",
            "load_session_log",
            "open_checked",
        ),
        "._log.journal",
    ),
    **dict.fromkeys(("StoredEvents", "StoredTimes"), "._log.stored"),
    **dict.fromkeys(
        (
            "PresentedCall",
            "ReplayReport",
            "UnansweredCall",
            "check_replay",
            "format_presented",
            "present_log",
            "repair_replay",
        ),
        "._log.replay",
    ),
}

__getattr__ = lazy_attributes(__name__, globals(), _LAZY)
