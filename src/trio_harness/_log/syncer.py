"""Forcing a log file to stable storage off the caller's thread.

A durable log writes each line inline (``os.write`` hands it to the operating system, which
keeps it across a crash of the process), but ``os.fsync`` waits for the disk: 0.2 ms on a quiet
SSD, milliseconds under load, and the Trio loop that appended would wait with it. So the log
only *requests* a sync (:meth:`Syncer.request`: the first ``size`` bytes, ``events`` events,
must reach stable storage) and a thread of its own runs the fsyncs, one at a time, each for
everything requested when it starts: a burst of requests costs one fsync (group commit), and
since every requested byte was written before its request, nothing is synced out of order.

A failed fsync is kept (:attr:`Syncer.error`), raised by every later wait, and the log refuses
appends: the kernel may have dropped the pages it could not write, so a later fsync that
succeeds would not prove they reached the disk. The thread starts at the first request, so a log
that never syncs never has one; when no thread can be started (a process at its thread limit),
the request syncs in the caller's thread instead. A log whose policy syncs by itself starts it
when it is opened (:meth:`Syncer.start`), so that a first step does not pay for it.
"""

from __future__ import annotations

import os
import threading

__all__ = ["Syncer"]

#: How often a waiting caller returns to the interpreter, where a pending Ctrl-C is raised.
_SIGNAL_CHECK_SECONDS = 0.05


class Syncer:
    """Runs ``os.fsync`` on one file descriptor in a thread, in request order.

    Attributes:
        synced_bytes: How many bytes of the file are known to be on stable storage.
        synced_events: How many events those bytes hold.
        error: The ``OSError`` of a failed fsync, if one failed.
    """

    def __init__(self, fd: int, path: str) -> None:
        self._fd = fd
        self._path = path
        # Every state change is made holding ``_lock``. The callers' threads take it only with
        # ``with self._lock`` (a C lock: a Ctrl-C cannot land between its acquire and the block
        # that releases it, as it can inside ``threading.Condition``'s Python methods) and wait on
        # a lock of their own (``_waiters``), never on the condition: a Ctrl-C while waiting
        # leaves nothing held. Only the syncer thread waits on ``_changed``.
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._waiters: list[threading.Lock] = []
        self._requested_bytes = 0
        self._requested_events = 0
        self._stopping = False
        self._close_fd = False  # abandoned: the thread closes the descriptor when it ends
        self._thread: threading.Thread | None = None
        self.synced_bytes = 0
        self.synced_events = 0
        self.error: OSError | None = None

    def request(self, size: int, events: int) -> None:
        """Ask for the first ``size`` bytes (``events`` events) to reach stable storage.

        Returns at once and never raises: a failed fsync is raised by :meth:`wait` (and the log
        checks :attr:`error` before it appends).
        """
        with self._lock:
            if self.error is not None or size <= self._requested_bytes:
                return
            self._requested_bytes = size
            self._requested_events = events
            if self._thread is None and not self._start_thread():
                # No thread to be had (the process is at its thread limit): sync here, in the
                # caller's thread; a later request tries to start one again.
                self._sync_inline(size, events)
                return
            self._notify()

    def start(self) -> None:
        """Start the thread now (a log whose policy will sync), not at the first request.

        Never raises: without a thread to be had, the first request tries again."""
        with self._lock:
            if self._thread is None and not self._stopping:
                self._start_thread()

    def _start_thread(self) -> bool:
        # Called with the lock held.
        thread = threading.Thread(
            target=self._run, name=f"trio_harness fsync {self._path}", daemon=True
        )
        try:
            thread.start()
        except RuntimeError:
            return False
        self._thread = thread
        return True

    def _sync_inline(self, size: int, events: int) -> None:
        # Called with the lock held and no syncer thread: nothing else fsyncs meanwhile.
        try:
            os.fsync(self._fd)
        except OSError as error:
            self.error = error
        else:
            self.synced_bytes, self.synced_events = size, events
        self._notify()

    def _notify(self) -> None:
        # Called with ``_lock`` held: wake the syncer thread and every waiting caller.
        self._changed.notify_all()
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.release()

    def wait(self, size: int) -> None:
        """Block until the first ``size`` bytes are on stable storage (requested earlier).

        Raises:
            OSError: An fsync failed before they were.
        """
        while True:
            with self._lock:
                if self.synced_bytes >= size:
                    return
                if self.error is not None:
                    raise self.failure()
                waiter = threading.Lock()
                waiter.acquire()
                self._waiters.append(waiter)
            # Released by the next change of the synced state (``_notify``). Interrupted here,
            # the waiter holds nothing of the syncer's; its lock is released, unheard, later.
            # The timeout returns to the interpreter now and then: a Ctrl-C that arrived just
            # before the acquire began (its handler ran, but no wait was there to interrupt)
            # is raised within that time, not when the fsync ends.
            while not waiter.acquire(timeout=_SIGNAL_CHECK_SECONDS):
                pass

    def failure(self) -> OSError:
        """The error to raise for the kept failed fsync."""
        error = self.error
        assert error is not None
        return OSError(
            error.errno,
            f"{self._path}: fsync failed ({error.strerror or error}); events from seq "
            f"{self.synced_events} on may not be on disk, and the log takes no more appends",
        )

    def stop(self) -> None:
        """Let the thread finish what was requested, then end it (idempotent)."""
        with self._lock:
            self._stopping = True
            self._notify()
            thread = self._thread
        if thread is not None:
            thread.join()

    def abandon(self) -> None:
        """The log was dropped unclosed: finish what was requested, then close the descriptor.

        Never waits (it may run in a garbage collection, in any thread).
        """
        with self._lock:
            self._stopping = True
            if self._requested_bytes > self.synced_bytes and self.error is None:
                self._close_fd = True  # an fsync is due or running: the thread closes after it
                self._notify()
                return
            self._notify()
        os.close(self._fd)  # the thread, if any, has nothing left to do with it

    def _run(self) -> None:
        try:
            self._sync_until_stopped()
        finally:
            if self._close_fd:
                os.close(self._fd)

    def _sync_until_stopped(self) -> None:
        changed = self._changed
        with changed:
            while True:
                while self._requested_bytes <= self.synced_bytes and not self._stopping:
                    changed.wait()
                if self._requested_bytes <= self.synced_bytes:
                    return  # stopping, and nothing is left to sync
                size, events = self._requested_bytes, self._requested_events
                changed.release()
                try:
                    os.fsync(self._fd)  # every byte up to ``size`` was written before
                except OSError as error:
                    failed: OSError | None = error
                else:
                    failed = None
                finally:
                    changed.acquire()
                if failed is not None:
                    self.error = failed
                    self._notify()
                    return
                self.synced_bytes, self.synced_events = size, events
                self._notify()
