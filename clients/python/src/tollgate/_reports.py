"""Result reports in the background: a guarded function returns as soon as the tool returns, and its result is sent
by a small pool of worker threads, with the client's retries. ``flush()`` waits for the reports in flight.

The pool's threads are not daemons: a process that ends normally sends the reports still queued first (bounded by
the retries). One that is killed before its report leaves the call ``executed`` with no result.

A proposal first waits for the reports in flight of its conversation. The server would otherwise take the report
and the next proposal of one conversation at the same time, and the one that lost the race would be done again:
measured, back-to-back guarded calls in one conversation took twice as long as with ``await``. When the agent does
anything between its calls (its model's turn), the report has landed by then and nothing waits.

A process that forks (Celery's prefork pool, ``gunicorn --preload``, ``multiprocessing`` with fork) copies the pool
but not its threads: the child would queue reports that no thread sends, and wait forever for the parent's reports in
flight. So a forked child starts each client's reports afresh: no pool (a report starts one), nothing in flight (the
parent's reports are the parent's to send).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Callable, Literal

ReportMode = Literal["background", "await"]
REPORT_MODES: tuple[ReportMode, ...] = ("background", "await")

#: Reports sent at the same time. Each is one short request; more threads only help during an outage.
WORKERS = 4

log = logging.getLogger("tollgate")
_worker = threading.local()


def report_mode(value: str, what: str = "report") -> ReportMode:
    if value not in REPORT_MODES:
        raise ValueError(f'{what} must be "background" or "await", not {value!r}')
    return value  # type: ignore[return-value]


class Reports:
    """The reports of one client in flight."""

    def __init__(self, workers: int = WORKERS) -> None:
        self._workers = workers
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._in_flight: dict[Future[None], str] = {}
        _live.add(self)

    def _after_fork(self) -> None:
        """In a forked child: the parent's lock may have been held by a thread the child does not have, and its
        pool's threads are gone. A new lock, no pool, nothing in flight."""
        self._lock = threading.Lock()
        self._pool = None
        self._in_flight = {}

    def submit(self, conversation_id: str, send: Callable[[], None]) -> None:
        """Sends a report of the conversation in a worker thread. ``send`` passes its own failures to the
        report-error hook."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="tollgate-report")
            try:
                future = self._pool.submit(_in_worker, send)
            except RuntimeError:  # the interpreter is shutting down: no new threads, so send it here
                future = None
            else:
                self._in_flight[future] = conversation_id
        if future is None:
            _quietly(send)
            return
        future.add_done_callback(self._done)

    def _done(self, future: Future[None]) -> None:
        with self._lock:
            self._in_flight.pop(future, None)
        error = None if future.cancelled() else future.exception()
        if error is not None:  # the report-error hook itself raised
            log.warning("tollgate: a result report failed in the background: %s", error)

    def flush(self, timeout: float | None = None) -> bool:
        """Waits until no report is in flight: each sent, or given up and passed to the report-error hook. False
        when ``timeout`` (seconds) passed first, and at once in that hook (a report worker would wait for itself)."""
        return self._wait(None, timeout)

    def before_proposal(self, conversation_id: str, timeout: float | None = None) -> None:
        """Waits for the reports in flight of this conversation (each bounded by its retries), ``timeout`` seconds
        at most: the wait only spares the server a race, so when the caller's time is up the proposal goes anyway."""
        self._wait(conversation_id, timeout)

    def _wait(self, conversation_id: str | None, timeout: float | None) -> bool:
        """Until none is in flight, reports sent meanwhile included (as the TypeScript SDK's ``flush``). Not in a
        report worker (the report-error hook): it would wait for itself."""
        if getattr(_worker, "active", False):
            return False
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                pending = [f for f, c in self._in_flight.items() if conversation_id is None or c == conversation_id]
            if not pending:
                return True
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            _, not_done = wait(pending, timeout=left)
            if not_done:
                return False

    def close(self, timeout: float | None = None) -> bool:
        """Flushes, then lets the worker threads end. A later report starts a new pool."""
        flushed = self.flush(timeout)
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)
        return flushed


#: Every client's reports, for the fork handler (weakly: a client that is gone needs no reset).
_live: weakref.WeakSet[Reports] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    _worker.active = False  # forked from a report worker (its error hook), the child's thread is not one
    for reports in list(_live):
        reports._after_fork()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _in_worker(send: Callable[[], None]) -> None:
    _worker.active = True
    try:
        send()
    finally:
        _worker.active = False


def _quietly(send: Callable[[], None]) -> None:
    try:
        send()
    except Exception as e:  # the report-error hook itself raised
        log.warning("tollgate: a result report failed: %s", e)
