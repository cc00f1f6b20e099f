"""The server process's memory on a first start (empty cache) and a second start.

python -m tools.benchmark.first_start VOICE_ROOT [--repo PATH ...] [--rounds N] [--slow-board B]

Starts ``python -m wyoming_hayakoe`` on VOICE_ROOT (a data dir such as the ``full`` synthetic
voice) with a new, empty ``--cache-dir``, reads its peak RSS (VmHWM) when it is ready and after
one short request, stops it, then starts it again on the now filled cache and reads the same.
Each ``--repo`` is a checkout whose code is measured (default: this one); with several, they
take turns within every round, so a busy machine weighs on all of them alike. ``--slow-board
steady`` (or ``shared``) runs every start (and its children) with one thread on a calibrated
slow board (tools/benchmark/slow_board.py): about how long a first start takes on a small one.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from tools.benchmark.procinfo import machine, memory
from tools.benchmark.slow_board import BOARDS, command_prefix, slow_board
from tools.benchmark.voices import voice_names
from tools.server_process import REPO_ROOT, ServerProcess, start_server
from tools.wyoming_requests import synthesize

SHORT_TEXT = "了解です。"


@dataclass(frozen=True)
class Start:
    """One start of the server: when it was ready and its peak RSS then and after a request."""

    ready_s: float
    peak_ready_mb: float
    peak_request_mb: float
    rss_request_mb: float
    tree_peak_mb: float
    """The most RSS the server and its children had together, sampled every 20 ms."""
    tree_anon_peak_mb: float
    """The same for their anonymous memory (RssAnon: the heap; mapped model files are page
    cache the kernel can drop under pressure)."""


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.benchmark.first_start")
    parser.add_argument("voice_root", type=Path, help="data dir with bert/, onnx/ and a voice")
    parser.add_argument("--voice", help="voice name (default: the first in the root)")
    parser.add_argument(
        "--repo", type=Path, action="append", help="checkout to measure (repeatable)"
    )
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--text", default=SHORT_TEXT, help="the short request")
    parser.add_argument(
        "--slow-board",
        choices=BOARDS,
        help="one thread on a calibrated slow board (tools/benchmark/slow_board.py)",
    )
    args = parser.parse_args(argv)
    if args.slow_board:
        args.threads = 1
    return args


def measure_start(
    repo: Path, root: Path, voice: str, cache_dir: Path, threads: int, text: str
) -> Start:
    """Start the server of ``repo``, wait until ready, send one request, stop it."""
    repo = repo.resolve()
    # The server imports the package from its working directory: run it in ``repo``.
    wrapper = (*command_prefix(), "env", "-C", str(repo), f"PYTHONPATH={repo}")
    base = ("--data-dir", str(root), "--voice", voice, "--local-files-only")
    extra = ("--cache-dir", str(cache_dir), "--threads", str(threads))
    started = time.monotonic()
    server = start_server(cache_dir.parent, *extra, base_args=base, wrapper=wrapper)
    tree = _TreePeak(server.process.pid)
    try:
        server.wait_ready(timeout=900)
        ready_s = time.monotonic() - started
        at_ready = memory(server.process.pid)
        asyncio.run(_request(server, text, voice))
        after = memory(server.process.pid)
    finally:
        tree.stop()
        server.kill()
    return Start(
        ready_s, at_ready.peak_mb, after.peak_mb, after.current_mb, tree.peak_mb, tree.anon_mb
    )


class _TreePeak:
    """Samples the summed RSS of a process and all its descendants in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak_mb, self.anon_mb = pid, 0.0, 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(0.02):
            sizes = [_rss_or_zero(pid) for pid in _tree(self.pid)]
            self.peak_mb = max(self.peak_mb, sum(rss for rss, _ in sizes))
            self.anon_mb = max(self.anon_mb, sum(anon for _, anon in sizes))

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def _tree(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        found += frontier
    return found


def _rss_or_zero(pid: int) -> tuple[float, float]:
    """VmRSS and RssAnon in MB; zeros for a process that has gone."""
    fields: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon"):
                fields[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return fields.get("VmRSS", 0.0), fields.get("RssAnon", 0.0)


async def _request(server: ServerProcess, text: str, voice: str) -> None:
    async with server.client(read_timeout=300) as client:
        response = await synthesize(client, text, voice)
    if response.errors or not response.pcm:
        raise RuntimeError(f"request failed: {response.types}")


def _row(label: str, starts: list[Start]) -> str:
    def median(values: list[float]) -> float:
        return statistics.median(values)

    ready = median([s.ready_s for s in starts])
    peak = median([s.peak_ready_mb for s in starts])
    request = median([s.peak_request_mb for s in starts])
    tree = median([s.tree_peak_mb for s in starts])
    anon = median([s.tree_anon_peak_mb for s in starts])
    return (
        f"| {label} | {ready:.1f} s | {peak:,.0f} MB | {request:,.0f} MB | {tree:,.0f} MB "
        f"({anon:,.0f} MB anonymous) |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    root = args.voice_root.resolve()
    names = voice_names(root)
    voice = args.voice or (names[0] if names else None)
    if voice is None:
        print(f"error: no voice under {root}/onnx/speakers", file=sys.stderr)
        return 1
    repos = args.repo or [REPO_ROOT]
    info = machine()
    print(f"# {info['date']}, load average {info['load average at start']}", flush=True)
    with tempfile.TemporaryDirectory(prefix="board-cache-") as board_cache:
        board = (
            slow_board(root, voice, Path(board_cache), args.slow_board)
            if args.slow_board
            else nullcontext(None)
        )
        with board as on:
            if on is not None:
                print(f"# {on.describe()}", flush=True)
            results = _rounds(args, repos, root, voice)
    print("\n| | ready | peak when ready | peak after a short request | server + children |")
    print("|---|---|---|---|---|")
    for (repo, label), starts in results.items():
        print(_row(f"{repo.name or repo}: {label}", starts))
    print(f"\nload average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def _rounds(
    args: argparse.Namespace, repos: list[Path], root: Path, voice: str
) -> dict[tuple[Path, str], list[Start]]:
    results: dict[tuple[Path, str], list[Start]] = {}
    for round_index in range(args.rounds):
        order = repos if round_index % 2 == 0 else list(reversed(repos))
        for repo in order:
            with tempfile.TemporaryDirectory(prefix="first-start-") as scratch:
                cache = Path(scratch) / "cache"
                for label in ("first start", "second start"):
                    start = measure_start(repo, root, voice, cache, args.threads, args.text)
                    results.setdefault((repo, label), []).append(start)
                    print(f"{repo} {label}: {start}", file=sys.stderr, flush=True)
    return results


if __name__ == "__main__":
    sys.exit(main())
