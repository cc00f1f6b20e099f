"""Where one request's time went (``--debug`` logs it), waiting for the caller excluded."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

_LOGGER = logging.getLogger(__name__)


@dataclass
class RequestProfile:
    seconds: dict[str, float] = field(default_factory=dict)
    audio_samples: int = 0

    @contextmanager
    def timing(self, step: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[step] = self.seconds.get(step, 0.0) + time.perf_counter() - started

    def log(self, sample_rate: int) -> None:
        steps = ", ".join(f"{step} {spent:.3f} s" for step, spent in self.seconds.items())
        _LOGGER.debug("%.2f s of audio; %s", self.audio_samples / sample_rate, steps or "no work")
