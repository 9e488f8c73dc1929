"""Result reports in the background: a guarded function returns as soon as the tool returns, and its result is sent
by a small pool of worker threads, with the client's retries. ``flush()`` waits for the reports in flight.

The pool's threads are not daemons: a process that ends normally sends the reports still queued first (bounded by
the retries). One that is killed before its report leaves the call ``executed`` with no result.

A report is first kept as carried by its conversation, and a worker is given it as before: whoever comes first
takes it. The worker sends it alone; the conversation's next proposal sends it with itself (``results``): one
request and one commit for both, as the TypeScript SDK's ``carry``. In a tight loop of guarded calls the caller's
thread keeps the GIL from the report to its next proposal (the pool starts all its threads at once, and a proposal
takes its reports before anything that releases the GIL), so that proposal usually wins (measured: 19 of 20 calls
back to back); after any blocking work in between the worker does. The worker of a report a proposal took waits for
its fate (``flush()`` waits for it in turn): done with the proposal, or handed back, and then it sends it alone.

A proposal also waits for the other reports in flight of its conversation (not for those it carries, nor those
another proposal carries). The server would otherwise take the report and the proposal of one conversation at the
same time, and the one that lost the race would be done again: measured, back-to-back guarded calls in one
conversation took twice as long as with ``await``.

A process that forks (Celery's prefork pool, ``gunicorn --preload``, ``multiprocessing`` with fork) copies the pool
but not its threads: the child would queue reports that no thread sends, and wait forever for the parent's reports in
flight. So a forked child starts each client's reports afresh: no pool (a report starts one), nothing in flight or
carried (the parent's reports are the parent's to send).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Literal

ReportMode = Literal["background", "await"]
REPORT_MODES: tuple[ReportMode, ...] = ("background", "await")

#: Reports sent at the same time. Each is one short request; more threads only help during an outage.
WORKERS = 4
#: At most this many results go with one proposal (the server's bound).
MAX_CARRIED = 64

log = logging.getLogger("tollgate")
_worker = threading.local()


def report_mode(value: str, what: str = "report") -> ReportMode:
    if value not in REPORT_MODES:
        raise ValueError(f'{what} must be "background" or "await", not {value!r}')
    return value  # type: ignore[return-value]


class Carried:
    """A background report that the conversation's next proposal may take along (``results``)."""

    __slots__ = ("conversation_id", "tool_call_id", "body", "send", "state", "sent_before", "future")

    def __init__(self, conversation_id: str, tool_call_id: str, body: dict[str, Any],
                 send: Callable[[bool], None]) -> None:
        self.conversation_id = conversation_id
        self.tool_call_id = tool_call_id
        #: ``{"outcome", "output"?, "error"?}``, as the result endpoint takes it.
        self.body = body
        #: Sends it alone; its argument is ``sent_before`` (see ``Reports.hand_back``).
        self.send = send
        #: ``carried`` (nobody has it yet), ``alone`` (its worker sends it), ``taken`` (a proposal carries it),
        #: ``done`` (it landed with the proposal) or ``back`` (handed back: its worker sends it alone).
        self.state = "carried"
        self.sent_before = False
        self.future: Future[None] | None = None

    def result(self) -> dict[str, Any]:
        """As an item of a proposal's ``results``."""
        return {"toolCallId": self.tool_call_id, **self.body}


class Reports:
    """The reports of one client in flight."""

    def __init__(self, workers: int = WORKERS) -> None:
        self._workers = workers
        self._lock = threading.Lock()
        #: Told when a carried report a proposal took is done or handed back.
        self._settled = threading.Condition(self._lock)
        self._pool: ThreadPoolExecutor | None = None
        self._in_flight: dict[Future[None], str] = {}
        #: Per conversation, its background reports no one has taken yet, oldest first.
        self._carried: dict[str, list[Carried]] = {}
        #: The workers of the reports proposals carry (a proposal does not wait for them).
        self._taken: set[Future[None]] = set()
        #: False once the server refused ``results`` as an unknown field (a server older than 0.6).
        self.carries_results = True
        _live.add(self)

    def _after_fork(self) -> None:
        """In a forked child: the parent's lock may have been held by a thread the child does not have, and its
        pool's threads are gone. A new lock, no pool, nothing in flight, nothing carried (the parent's to send)."""
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._pool = None
        self._in_flight = {}
        self._carried = {}
        self._taken = set()

    def submit(self, conversation_id: str, send: Callable[[], None]) -> None:
        """Sends a report of the conversation in a worker thread. ``send`` passes its own failures to the
        report-error hook."""
        with self._lock:
            future = self._start(conversation_id, send)
        if future is None:
            _quietly(send)
            return
        future.add_done_callback(self._done)

    def carry(self, conversation_id: str, tool_call_id: str, body: dict[str, Any],
              send: Callable[[bool], None]) -> None:
        """A report of the conversation in the background, which its next proposal may take along: a worker is
        given it too, and sends it alone unless a proposal took it first. ``send(sent_before)`` passes its own
        failures to the report-error hook."""
        item = Carried(conversation_id, tool_call_id, body, send)
        # Carried and given to its worker at once: a proposal that takes it knows the worker not to wait for.
        with self._lock:
            item.future = self._start(conversation_id, lambda: self._settle(item))
            if item.future is not None:
                self._carried.setdefault(conversation_id, []).append(item)
        if item.future is None:
            _quietly(lambda: send(False))
            return
        item.future.add_done_callback(self._done)

    def _start(self, conversation_id: str, send: Callable[[], None]) -> Future[None] | None:
        """Under the lock: ``send`` given to a worker; None when the interpreter is shutting down (no new threads:
        the caller sends it itself)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="tollgate-report")
            # Every worker started now: a pool starts one when a report finds none idle, and the reporting thread
            # waits for it to start, which lets that worker send at once the report its next proposal was to take.
            ready = threading.Barrier(self._workers, timeout=10)  # bounded: a worker that never starts holds none
            try:
                for _ in range(self._workers):
                    self._pool.submit(ready.wait)
            except RuntimeError:
                ready.abort()
                return None
        try:
            future = self._pool.submit(_in_worker, send)
        except RuntimeError:
            return None
        self._in_flight[future] = conversation_id
        return future

    def _settle(self, item: Carried) -> None:
        """The worker's part of a carried report: sends it alone when no proposal has it; else waits until its
        proposal is done with it (nothing left to do) or hands it back (then it is sent alone after all)."""
        with self._lock:
            if item.state == "carried":
                self._untrack(item)
                item.state = "alone"
            while item.state == "taken":
                self._settled.wait()
            if item.state == "done":
                return
        item.send(item.sent_before)

    def _untrack(self, item: Carried) -> None:
        queue = self._carried.get(item.conversation_id)
        if queue is not None:
            queue.remove(item)
            if not queue:
                del self._carried[item.conversation_id]

    def take(self, conversation_id: str) -> list[Carried]:
        """For a proposal of the conversation: its carried reports no one has taken, up to ``MAX_CARRIED``. The
        proposal must then say ``done`` or ``hand_back`` of each, or their workers wait forever."""
        if not self.carries_results:
            return []
        with self._lock:
            queue = self._carried.get(conversation_id)
            if not queue:
                return []
            taken, rest = queue[:MAX_CARRIED], queue[MAX_CARRIED:]
            if rest:
                self._carried[conversation_id] = rest
            else:
                del self._carried[conversation_id]
            for item in taken:
                item.state = "taken"
                if item.future is not None:
                    self._taken.add(item.future)
            return taken

    def done(self, items: list[Carried]) -> None:
        """They landed with their proposal."""
        self._settle_all(items, "done", False)

    def hand_back(self, items: list[Carried], sent_before: bool) -> None:
        """Their proposal failed: each is sent alone by its worker. ``sent_before``: the proposal may have landed
        (its answer was lost), so a first ``already_completed`` of the report alone means it did."""
        self._settle_all(items, "back", sent_before)

    def _settle_all(self, items: list[Carried], state: str, sent_before: bool) -> None:
        if not items:
            return
        with self._lock:
            for item in items:
                item.state, item.sent_before = state, sent_before
                if item.future is not None:
                    self._taken.discard(item.future)
            self._settled.notify_all()

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
        at most: the wait only spares the server a race, so when the caller's time is up the proposal goes anyway.
        Not for those a proposal carries: its own would wait for it (a deadlock), another's ride with a request
        that races this one anyway. A proposal takes its reports before it waits, so two proposals of one
        conversation never wait for each other."""
        self._wait(conversation_id, timeout)

    def _wait(self, conversation_id: str | None, timeout: float | None) -> bool:
        """Until none is in flight, reports sent meanwhile included (as the TypeScript SDK's ``flush``). Not in a
        report worker (the report-error hook): it would wait for itself."""
        if getattr(_worker, "active", False):
            return False
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                if conversation_id is None:
                    pending = list(self._in_flight)
                else:
                    pending = [f for f, c in self._in_flight.items() if c == conversation_id and f not in self._taken]
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
