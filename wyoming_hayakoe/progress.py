"""Long work in progress (downloads, first-start compiles): what it is, which step, how far.

The service owns a :class:`ProgressBoard` and runs its loading work inside
``reporting_to(board)``; the layers below (voices/ downloads, compiling/ compiles) find it with
:func:`current_board` and report into it, from whatever thread they run on. The web page reads
:meth:`ProgressBoard.snapshot`. Work started with no board in effect (a command-line tool, a
test) reports into a board nobody reads. Logging stays with the work itself.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

DOWNLOAD = "download"
COMPILE = "compile"


@dataclass(frozen=True)
class WorkProgress:
    """One piece of long work as it stands."""

    kind: str
    """DOWNLOAD or COMPILE."""
    what: str
    """What is being fetched or compiled ("voice jvnv-F1-jp", "bert_q8.onnx")."""
    step: str = ""
    """The file being downloaded, or the compile step."""
    step_number: int | None = None
    steps: int | None = None
    """How many steps in all (None: not known yet)."""
    done_bytes: int | None = None
    total_bytes: int | None = None
    """Of the current step (a file); None when it is not counted in bytes."""
    eta_seconds: float | None = None
    """Time left for the current step, where it can be known (from the download rate)."""
    started: float = 0.0
    """time.monotonic() at the start of the work."""

    @property
    def fraction(self) -> float | None:
        """How far the work is, 0 to 1: the bytes of the file within the files, or the steps
        done; None when neither is known."""
        part = (
            min(self.done_bytes / self.total_bytes, 1.0)
            if self.done_bytes is not None and self.total_bytes
            else None
        )
        if self.step_number is None or not self.steps:
            return part
        return min((self.step_number - 1 + (part or 0.0)) / self.steps, 1.0)

    def as_json(self) -> dict[str, object]:
        fraction = self.fraction
        return {
            "kind": self.kind,
            "what": self.what,
            "step": self.step,
            "step_number": self.step_number,
            "steps": self.steps,
            "done_bytes": self.done_bytes,
            "total_bytes": self.total_bytes,
            "percent": None if fraction is None else round(100.0 * fraction, 1),
            "eta_seconds": None if self.eta_seconds is None else round(self.eta_seconds),
            "elapsed_seconds": round(time.monotonic() - self.started, 1),
        }


class ProgressBoard:
    """The work in progress of one service; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._works: dict[int, WorkProgress] = {}
        self._ids = itertools.count()

    def begin(self, kind: str, what: str) -> Work:
        work_id = next(self._ids)
        with self._lock:
            self._works[work_id] = WorkProgress(kind, what, started=time.monotonic())
        return Work(self, work_id)

    def snapshot(self) -> list[WorkProgress]:
        """What is in progress now, oldest first."""
        with self._lock:
            return [self._works[key] for key in sorted(self._works)]

    def _update(self, work_id: int, **changes: object) -> None:
        with self._lock:
            current = self._works.get(work_id)
            if current is not None:
                self._works[work_id] = replace(current, **changes)  # type: ignore[arg-type]

    def _end(self, work_id: int) -> None:
        with self._lock:
            self._works.pop(work_id, None)


class Work:
    """A handle on one piece of work on a board; ``with`` ends it however it goes."""

    def __init__(self, board: ProgressBoard, work_id: int) -> None:
        self._board, self._id = board, work_id

    def step(self, name: str, number: int | None = None, steps: int | None = None) -> None:
        """The next step begins (its byte counts are cleared)."""
        self._board._update(
            self._id, step=name, step_number=number, steps=steps,
            done_bytes=None, total_bytes=None, eta_seconds=None,
        )  # fmt: skip

    def amounts(self, done: int, total: int | None, eta_seconds: float | None) -> None:
        self._board._update(self._id, done_bytes=done, total_bytes=total, eta_seconds=eta_seconds)

    def end(self) -> None:
        self._board._end(self._id)

    def __enter__(self) -> Work:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()


_UNREAD = ProgressBoard()
_current: contextvars.ContextVar[ProgressBoard] = contextvars.ContextVar(
    "hayakoe_progress_board", default=_UNREAD
)


def current_board() -> ProgressBoard:
    """The board the work running here reports into."""
    return _current.get()


@contextlib.contextmanager
def reporting_to(board: ProgressBoard) -> Iterator[None]:
    """Within: long work started on this thread reports into ``board``."""
    token = _current.set(board)
    try:
        yield
    finally:
        _current.reset(token)


def format_duration(seconds: float) -> str:
    """A time left for a log line: "45 s", "3 min 20 s", "1 h 05 min"."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
