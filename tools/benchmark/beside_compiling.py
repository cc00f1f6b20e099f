"""Requests while a fast decoder is being made: ``script/benchmark --beside-compiling``.

The compile child gives way to requests (foreground.py, compiling/child.py). On the voice
(its models compiled beforehand, its fast decoder not yet made):

1. *Nothing compiling*: ``--decoder reference``, one short request every 3 s, each a new text
   (no audio cache): the first audio of each.
2. *While compiling*: a first start with ``--decoder fast``, the same requests until the log
   says the fast decoder serves: the first audio of the requests made while the child ran.
3. *Killed*: a first start with ``--decoder fast``, killed with SIGKILL once its child runs:
   whether a compile child is left 5 s later.
4. *Back to back* (``--back-to-back``): a first start with ``--decoder fast``, each request
   sent as the last one ends: how long until the fast decoder serves, and the requests' first
   audio meanwhile.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from tools.benchmark.ours import Server
from tools.process_stats import alive, compile_children

_LOGGER = logging.getLogger(__name__)

EVERY_S = 3.0
CHOSEN = "fast decoder (fast)"
"""What the log says once the fast decoder serves (compiling/decoder_choice.py)."""


def text(index: int) -> str:
    return f"了解です、{index}番です。"


@dataclass
class Phase:
    first_s: list[float] = field(default_factory=list)
    seconds: float = 0.0
    """How long the phase ran (for the compiling ones: until the fast decoder served)."""

    def line(self, name: str) -> str:
        if not self.first_s:
            return f"| {name} | 0 | - | - | {self.seconds:.0f} s |"
        median = statistics.median(self.first_s)
        return (f"| {name} | {len(self.first_s)} | {median:.3f} s | {max(self.first_s):.3f} s "
                f"| {self.seconds:.0f} s |")  # fmt: skip


@dataclass
class BesideResults:
    idle: Phase = field(default_factory=Phase)
    compiling: Phase = field(default_factory=Phase)
    back_to_back: Phase | None = None
    left_after_kill: list[int] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [
            "| requests | count | first audio, median | worst | phase |",
            "|---|---|---|---|---|",
            self.idle.line("every 3 s, nothing compiling"),
            self.compiling.line("every 3 s, the fast decoder being made"),
        ]
        if self.back_to_back is not None:
            lines.append(self.back_to_back.line("back to back, the fast decoder being made"))
        ratio = statistics.median(self.compiling.first_s) / statistics.median(self.idle.first_s)
        left = ", ".join(map(str, self.left_after_kill)) or "none"
        lines += [
            "",
            f"First audio while compiling over nothing compiling (medians): {ratio:.2f}. "
            f"Compile children left 5 s after the server was killed with SIGKILL: {left}.",
        ]
        return "\n".join(lines) + "\n"


def run(root: Path, voice: str, work: Path, threads: int, back_to_back: bool) -> BesideResults:
    data = work / "data"
    _link_tree(root, data)
    cache = work / "cache"
    options = ("--cache-dir", str(cache), "--audio-cache-mb", "0")
    # the voice compiled once: only the fast decoder is left to make
    _serve(data, voice, work, threads, (*options, "--decoder", "reference"), lambda s: None)
    results = BesideResults()
    results.idle = _serve(data, voice, work, threads, (*options, "--decoder", "reference"),
                          lambda s: _every(s, 20))  # fmt: skip
    _forget_decoders(cache)
    results.compiling = _serve(data, voice, work, threads, (*options, "--decoder", "fast"),
                               lambda s: _every(s, None))  # fmt: skip
    _forget_decoders(cache)
    results.left_after_kill = _killed(data, voice, work, threads, (*options, "--decoder", "fast"))
    if back_to_back:
        _forget_decoders(cache)
        results.back_to_back = _serve(data, voice, work, threads,
                                      (*options, "--decoder", "fast"), _back_to_back)  # fmt: skip
    return results


def _serve(data: Path, voice: str, work: Path, threads: int, options: tuple[str, ...],
           ask: object) -> Phase:  # fmt: skip
    log = work / f"server-{time.monotonic_ns()}.log"
    server = Server(data, voice, threads, log, options)
    try:
        server.wait_ready()
        phase: Phase = ask(server) or Phase()  # type: ignore[operator]
    finally:
        server.stop()
    return phase


def _every(server: Server, count: int | None) -> Phase:
    """A new short text every EVERY_S: ``count`` of them, or until the fast decoder serves."""
    phase, started, index = Phase(), time.monotonic(), 0
    while count is None or index < count:
        asked = time.monotonic()
        sample = server.synthesize(text(index))
        if count is None and CHOSEN in server.process.log():
            break  # made by now: this request may already have had the fast decoder
        phase.first_s.append(sample.first_s)
        index += 1
        time.sleep(max(0.0, asked + EVERY_S - time.monotonic()))
    phase.seconds = time.monotonic() - started
    return phase


def _back_to_back(server: Server) -> Phase:
    phase, started, index = Phase(), time.monotonic(), 0
    while CHOSEN not in server.process.log():
        phase.first_s.append(server.synthesize(text(index)).first_s)
        index += 1
        if index % 100 == 0:
            _LOGGER.info("%d requests back to back, %.0f s", index, time.monotonic() - started)
    phase.seconds = time.monotonic() - started
    return phase


def _killed(
    data: Path, voice: str, work: Path, threads: int, options: tuple[str, ...]
) -> list[int]:
    server = Server(data, voice, threads, work / "server-killed.log", options)
    try:
        server.wait_ready()
        deadline = time.monotonic() + 120
        while not (children := compile_children(server.process.pid)):
            if time.monotonic() > deadline:
                raise RuntimeError("no compile child started")
            time.sleep(0.1)
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.process.wait()
        time.sleep(5)
        left = [pid for pid in children if alive(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        return left
    finally:
        server.stop()


def _forget_decoders(cache: Path) -> None:
    for folder in [*cache.glob("decoder-*"), *cache.glob(".progress-decoder-*")]:
        shutil.rmtree(folder)


def _link_tree(source: Path, target: Path) -> None:
    for path in source.rglob("*"):
        if path.is_file():
            copy = target / path.relative_to(source)
            copy.parent.mkdir(parents=True, exist_ok=True)
            if not copy.exists():
                os.link(path, copy)
