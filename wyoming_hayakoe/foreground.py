"""Requests first: background processes (compile children) stop while a request is synthesized.

A compile child runs at a low priority (compiling/child.py), but on a machine of two cores a
priority is not enough: a request's decoder runs its operators on both cores in step, and
each step waits for a core the child holds until the scheduler takes it back. Measured on the
full-size voice, a short request's first audio took 2.9 times as long beside a niced child
(docs/memory.md). So the service marks each synthesis while it is in progress
(:meth:`Foreground.begin` / :meth:`Foreground.end`), and every background process registered
here is stopped (SIGSTOP, at once, from the thread that begins the request) and continued
(SIGCONT) once no request has been in progress for IDLE_SECONDS.

It is never starved: a process stopped for STOPPED_AT_MOST_SECONDS runs for
RUN_AT_LEAST_SECONDS whatever the requests, at its low priority, so a machine answering
requests back to back still finishes its compilation.
The service owns one Foreground and runs its loading work inside ``giving_way_to(it)``; the
layers below find it with :func:`current_foreground` (with none in effect, nothing stops).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_LOGGER = logging.getLogger(__name__)

IDLE_SECONDS = 0.3
"""Requests this close together (a stream's sentences, a client's next announcement) keep the
background stopped between them."""
STOPPED_AT_MOST_SECONDS = 20.0
RUN_AT_LEAST_SECONDS = 4.0
"""With requests back to back, the background gets RUN_AT_LEAST_SECONDS of every
STOPPED_AT_MOST_SECONDS + RUN_AT_LEAST_SECONDS, at its low priority."""


@dataclass
class _Background:
    """One registered process group and whether (and since when) it is stopped."""

    pid: int
    stopped_since: float | None = None
    running_until: float = 0.0
    """It runs whatever the requests until then (the starvation guard)."""
    stopped_seconds: float = 0.0
    """In all, up to its last continue."""


class Foreground:
    """The requests in progress, and the background process groups that stop for them."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._requests = 0
        self._idle_since = clock()
        self._background: dict[int, _Background] = {}

    @property
    def busy(self) -> bool:
        with self._lock:
            return self._requests > 0

    def begin(self) -> None:
        """A synthesis starts: stop every background process (but those in their run)."""
        with self._lock:
            self._requests += 1
            now = self._clock()
            for process in self._background.values():
                if process.stopped_since is None and now >= process.running_until:
                    self._stop(process, now)

    def end(self) -> None:
        with self._lock:
            self._requests = max(0, self._requests - 1)
            if self._requests == 0:
                self._idle_since = self._clock()

    @contextlib.contextmanager
    def background(self, pid: int) -> Iterator[Callable[[], float]]:
        """Register process group ``pid`` while the block runs; yields ``tick``, to be
        called every so often: it continues or stops the group as the requests say and
        returns the seconds it has been stopped in all (a watchdog does not count them)."""
        process = _Background(pid)
        with self._lock:
            self._background[pid] = process
            if self._requests:
                self._stop(process, self._clock())

        def tick() -> float:
            with self._lock:
                return self._tick(process, self._clock())

        try:
            yield tick
        finally:
            with self._lock:
                del self._background[pid]
                if process.stopped_since is not None:
                    self._continue(process, self._clock())

    def _tick(self, process: _Background, now: float) -> float:
        if process.stopped_since is not None:
            idle = self._requests == 0 and now - self._idle_since >= IDLE_SECONDS
            if idle or now - process.stopped_since >= STOPPED_AT_MOST_SECONDS:
                if not idle:
                    process.running_until = now + RUN_AT_LEAST_SECONDS
                    _LOGGER.debug("Letting process %d run while requests go on", process.pid)
                self._continue(process, now)
        elif self._requests and now >= process.running_until:
            self._stop(process, now)
        stopped = process.stopped_seconds
        return stopped + (now - process.stopped_since if process.stopped_since else 0.0)

    def _stop(self, process: _Background, now: float) -> None:
        if _signal(process.pid, signal.SIGSTOP):
            process.stopped_since = now

    def _continue(self, process: _Background, now: float) -> None:
        if process.stopped_since is not None:
            process.stopped_seconds += now - process.stopped_since
        process.stopped_since = None
        _signal(process.pid, signal.SIGCONT)


def _signal(group: int, signum: int) -> bool:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        return False  # it has ended (its waiter reaps it)
    return True


_CURRENT: contextvars.ContextVar[Foreground | None] = contextvars.ContextVar(
    "hayakoe_foreground", default=None
)


@contextlib.contextmanager
def giving_way_to(foreground: Foreground) -> Iterator[None]:
    """Background processes started in this block (on this thread) stop for its requests."""
    token = _CURRENT.set(foreground)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_foreground() -> Foreground:
    """The foreground in effect, or one with no requests ever (a command-line tool, a test)."""
    return _CURRENT.get() or Foreground()
