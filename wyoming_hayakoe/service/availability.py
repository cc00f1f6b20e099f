"""Whether each voice (and the shared BERT) can be served now, and if not, why.

A voice is *available* (loaded), *loading*, or *unavailable* with a reason. What the start
needs (the default voice and the BERT) is retried in the background with backoff
(:class:`Backoff`) when it cannot be had, and its state says when the next attempt is; a
request for it is refused at once with that reason instead of waiting for a download that is
known to fail. Any other voice that failed is tried again by the next request that asks for it.

The server and the web page read these states; only the service's event loop writes them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from enum import Enum

from ..errors import DownloadError, HayakoeError

_LOGGER = logging.getLogger(__name__)

FIRST_RETRY_S = 10.0
"""The first background retry: a hub that hiccupped is back by then, and ten seconds of a
refused download per attempt cost nothing."""
LAST_RETRY_S = 600.0
"""Retries double up to every ten minutes: an outage of hours costs a few requests an hour."""
LOG_EVERY_S = 300.0
"""A failure that repeats is logged again at most this often (the first one and the recovery
always are): an add-on's log stays readable through a day offline."""

BERT = "the shared BERT model"
"""The name the BERT's state is kept under (no voice can be called that: it has spaces)."""


class State(Enum):
    """Retrying is an unavailable voice with a time for its next attempt (``retry_at``)."""

    AVAILABLE = "available"
    LOADING = "loading"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class Availability:
    """One voice's state as the adapters show it."""

    state: State
    reason: str | None = None
    """Why it is unavailable: the error a request for it gets."""
    retry_at: float | None = None
    """Wall-clock time (``time.time()``) of the next background attempt; None: it is not
    retried in the background (the next request for it tries again)."""
    error: HayakoeError | None = None

    def refusal(self, name: str) -> HayakoeError | None:
        """The error a request gets at once while a background retry owns the voice."""
        if self.state is not State.UNAVAILABLE or self.retry_at is None or self.error is None:
            return None
        wait_s = max(0.0, self.retry_at - time.time())
        return type(self.error)(
            f"{name} is not available yet: {self.reason}; retrying in the background "
            f"(next attempt in {wait_s:.0f} s)"
        )


def retried_in_background(err: BaseException) -> bool:
    """Whether a failure may heal by itself: a download (the network, the hub, a full disk,
    files not there yet). A damaged file, a failed check or too little memory stays as it is
    until someone acts, so the next request tries again instead."""
    return isinstance(err, (DownloadError, OSError))


def as_hayakoe_error(err: BaseException) -> HayakoeError:
    """The error to answer requests with (an unexpected one is shown as it is)."""
    return err if isinstance(err, HayakoeError) else HayakoeError(f"{err!r}")


class Availabilities:
    """The state of every voice that was asked for, and of the BERT."""

    def __init__(self) -> None:
        self._states: dict[str, Availability] = {}

    def get(self, name: str) -> Availability | None:
        return self._states.get(name)

    def snapshot(self) -> dict[str, Availability]:
        return dict(self._states)

    def loading(self, name: str) -> None:
        """A load has begun; an unavailable voice keeps its reason (and the refusal) until
        the load succeeds."""
        previous = self._states.get(name)
        if previous is None or previous.state is not State.UNAVAILABLE:
            self._states[name] = Availability(State.LOADING)

    def available(self, name: str) -> None:
        self._states[name] = Availability(State.AVAILABLE)

    def unavailable(self, name: str, err: BaseException, retry_at: float | None = None) -> None:
        error = as_hayakoe_error(err)
        self._states[name] = Availability(State.UNAVAILABLE, str(error), retry_at, error)

    def refusal(self, name: str) -> HayakoeError | None:
        """The error to answer at once for ``name`` (None: go ahead and load it)."""
        state = self._states.get(name)
        return state.refusal(name) if state is not None else None


@dataclass
class Backoff:
    """Delays between background attempts: ``FIRST_RETRY_S`` doubling up to ``LAST_RETRY_S``,
    and when a repeated failure is worth a log line."""

    first_s: float = FIRST_RETRY_S
    last_s: float = LAST_RETRY_S
    log_every_s: float = LOG_EVERY_S
    failures: int = 0
    _next_s: float = 0.0
    _logged_at: float | None = None

    def failed(
        self, what: str, err: BaseException, installed: str = "", next_steps: str | None = None
    ) -> float:
        """Record a failure and log its outcome; returns the seconds to wait. The first one
        says what is installed (``installed``) and what the user can do (``next_steps``), and
        so does a failure that repeats, at most every ``log_every_s``; every attempt between
        says in one line that it failed too, so that the log never ends on the download it
        began."""
        self.failures += 1
        delay = self._next_s = min(self._next_s * 2, self.last_s) if self._next_s else self.first_s
        now = time.monotonic()
        # The first line says what failed and what happens next; what is installed and what
        # the user can do follow on lines of their own, indented.
        details = "".join(
            f"\n    {line[:1].upper()}{line[1:]}" for line in (installed, next_steps) if line
        )
        if self._logged_at is None:
            _LOGGER.warning(
                "Cannot load %s: %s; retrying in the background (first in %.0f s, then less "
                "often, up to every %.0f min)%s",
                what, err, delay, self.last_s / 60, details,
            )  # fmt: skip
            self._logged_at = now
        elif now - self._logged_at >= self.log_every_s:
            _LOGGER.warning(
                "Still cannot load %s after %d attempts: %s; next attempt in %.0f s%s",
                what, self.failures, err, delay, details,
            )  # fmt: skip
            self._logged_at = now
        else:
            _LOGGER.info(
                "Attempt %d to load %s failed: %s; next attempt in %.0f s",
                self.failures, what, err, delay,
            )  # fmt: skip
        return delay

    def recovered(self, what: str) -> None:
        if self.failures:
            _LOGGER.info("Loaded %s after %d failed attempts", what, self.failures)
        self.failures = 0
        self._next_s = 0.0
        self._logged_at = None
