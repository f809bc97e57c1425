"""The session log on disk, checked, repaired and presented.

:class:`~trio_harness.Session` and :class:`~trio_harness.SessionEvent` (the log in memory) are in
the top-level namespace; this namespace holds the rest of the log:

* the durable log: :class:`DurableSession` (a session backed by a JSON Lines file, its fsync
  policy :data:`FsyncPolicy`, :data:`FSYNC_POLICIES`), :func:`load_session_log` and what it
  returns (:class:`LoadedSessionLog`, :class:`LogCut`), and its errors
  (:class:`SessionLogError`, :class:`SessionLogLockedError`); the events of a log that keeps
  none in memory, read from its file (:class:`StoredEvents`, :class:`StoredTimes`);
* replay: :func:`check_replay` (:class:`ReplayReport`, :class:`UnansweredCall`),
  :func:`repair_replay`, :func:`present_log` and :func:`format_presented`
  (:class:`PresentedCall`);
* the typed data of the pool's events: :class:`ToolCallData`, :class:`ToolResultData`,
  :class:`ToolResultMessage`, :class:`ToolResultBlock`, :class:`MessageSource`.
"""

from __future__ import annotations

from ._log import (
    FSYNC_POLICIES,
    DurableSession,
    FsyncPolicy,
    LoadedSessionLog,
    LogCut,
    MessageSource,
    PresentedCall,
    ReplayReport,
    SessionLogError,
    SessionLogLockedError,
    StoredEvents,
    StoredTimes,
    ToolCallData,
    ToolResultBlock,
    ToolResultData,
    ToolResultMessage,
    UnansweredCall,
    check_replay,
    format_presented,
    load_session_log,
    present_log,
    repair_replay,
)
from ._public import publish

__all__ = [
    "FSYNC_POLICIES",
    "DurableSession",
    "FsyncPolicy",
    "LoadedSessionLog",
    "LogCut",
    "MessageSource",
    "PresentedCall",
    "ReplayReport",
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
    "load_session_log",
    "present_log",
    "repair_replay",
]

publish(__name__, globals(), __all__)
