"""What a compilation child tells the server while it works (see child.py, children.py).

Each step is announced on standard output as one JSON line, ``{"step": NAME}``, so the server
can tell a slow step from a hung one (and log and show how far it is); a step may add
``"steps": N``, the steps of the whole job as far as they are known by then. A failure is one
line too, ``{"failed": {...}}``. The first line of all is ``{"ready": true}`` (child.py).
"""

from __future__ import annotations

import json
import sys


def step(name: str, steps: int | None = None) -> None:
    """Announce the next step, with the number of steps in all if it is known (and free what
    the last one left on the heap)."""
    # Imported here: the child says it is ready before it imports ONNX Runtime (child.py).
    from ..runtime.sessions import release_freed_heap

    release_freed_heap()
    say({"step": name} if steps is None else {"step": name, "steps": steps})


def say(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
