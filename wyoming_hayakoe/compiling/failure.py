"""A compilation that did not finish: what was compiled, the kind of failure (children.py
says how each is told), the step and the memory seen."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import HayakoeError
from ..memory import MemorySeen

KINDS = ("memory", "timeout", "disk", "model", "error")


@dataclass
class CompileFailure(HayakoeError):
    """A compilation child that did not finish, and why."""

    what: str
    """What was being compiled (a voice's name, the BERT's file name)."""
    kind: str
    """One of KINDS."""
    step: str
    """The step the child was in."""
    detail: str
    child_peak_mb: float | None = None
    memory: MemorySeen = field(default_factory=MemorySeen)

    def __str__(self) -> str:
        return f"Compiling {self.what} failed at step '{self.step}': {self.detail}"

    def memory_clause(self) -> str:
        """The memory seen, in one clause for a warning."""
        child = (
            f"the child process's peak {self.child_peak_mb:,.0f} MB; " if self.child_peak_mb else ""
        )
        return child + self.memory.describe()
