"""``script/benchmark --memory MB``: a first start and a compiled start inside a memory cgroup.

Three starts of the server, each in a memory cgroup of its own that also holds every child it
starts (tools/benchmark/memory_cgroup.py):

1. a first start (empty cache) without a limit: the reference;
2. a start on the cache it filled, without a limit: how far two unconstrained starts differ;
3. a first start (another empty cache) limited to ``--memory`` MB;
4. a start on the cache the third one filled, limited to ``--compiled-memory`` MB.

Each reports when the server was ready, the cgroup's peak (page cache included), the OOM
kills, and, after one request at zero noise, whether its audio equals the reference's (in
16-bit steps: windows are sized from the speed each start measures, and a window's edge moves
the float rounding by about 1e-6 of the peak, so two starts may differ by 1 LSB where the
rounding crosses a step) and whether the compiled files are the same. Warnings the server
logged are listed under the table.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from tools.benchmark.memory_cgroup import MemoryCgroup
from tools.benchmark.slow_board import command_prefix
from tools.server_process import ServerProcess, start_server
from tools.wyoming_requests import synthesize

_LOGGER = logging.getLogger("tools.benchmark")

TEXT = "了解です。Merossのプラグを切りました、今日は良い天気ですね。"
"""A name no dictionary knows among the words: the English model is loaded too."""
QUIET = ("--noise-scale", "0", "--noise-scale-w", "0", "--tempo-dynamics-scale", "0")
"""Zero noise: the audio depends on the models only."""
_RECORD = "compiled.json"


@dataclass
class StartResult:
    label: str
    limit_mb: int | None
    ready_s: float | None
    peak_mb: float
    oom_kills: int
    failure: str = ""
    pcm: bytes = field(default=b"", repr=False)
    compiled: dict[str, str] = field(default_factory=dict, repr=False)
    warnings: list[str] = field(default_factory=list)


def run(
    repo: Path,
    root: Path,
    voice: str,
    threads: int,
    first_mb: int,
    compiled_mb: int,
    work: Path,
) -> list[StartResult]:
    """The four starts, one after another."""
    plan = [
        ("first start, no limit", None, work / "cache-unlimited"),
        ("compiled start, no limit", None, work / "cache-unlimited"),
        (f"first start in {first_mb} MB", first_mb, work / "cache-limited"),
        (f"compiled start in {compiled_mb} MB", compiled_mb, work / "cache-limited"),
    ]
    results = []
    for label, limit, cache in plan:
        _LOGGER.info("Memory mode: %s", label)
        results.append(_start(label, limit, repo, root, voice, threads, cache, work))
        _LOGGER.info("%s", results[-1])
    return results


def _start(
    label: str,
    limit_mb: int | None,
    repo: Path,
    root: Path,
    voice: str,
    threads: int,
    cache: Path,
    work: Path,
) -> StartResult:
    repo = repo.resolve()
    base = ("--data-dir", str(root), "--voice", voice, "--local-files-only")
    extra = ("--cache-dir", str(cache), "--threads", str(threads), *QUIET)
    log_name = f"memory-{label.replace(' ', '-')}.log"
    _evict_from_page_cache([root, cache])
    with MemoryCgroup(limit_mb) as group:
        wrapper = (*group.wrapper(), *command_prefix())
        server = start_server(
            work, *extra, base_args=base, wrapper=wrapper, log_name=log_name, timed=True, tree=repo
        )
        result = StartResult(label, limit_mb, None, 0.0, 0)
        try:
            result.ready_s = server.wait_ready(timeout=3600)
            result.pcm = asyncio.run(_request(server, voice))
        except (RuntimeError, OSError, TimeoutError) as err:
            result.failure = str(err).strip().splitlines()[0][:200]
        finally:
            server.stop()
        result.peak_mb, result.oom_kills = group.peak_mb(), group.oom_kills()
    log = (work / log_name).read_text(encoding="utf-8", errors="replace")
    result.warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    result.compiled = _digests(cache)
    return result


def _evict_from_page_cache(folders: list[Path]) -> None:
    """Drop the files' pages from the page cache, so that the start reads them again and its
    cgroup is charged for them (a page is charged to the cgroup that first reads it: without
    this a start on files an earlier start read would look smaller than it is)."""
    for folder in folders:
        for path in folder.rglob("*") if folder.is_dir() else []:
            if not path.is_file():
                continue
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)  # dirty pages cannot be dropped
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


async def _request(server: ServerProcess, voice: str) -> bytes:
    async with server.client(read_timeout=600) as client:
        response = await synthesize(client, TEXT, voice)
    if response.errors or not response.pcm:
        raise RuntimeError(f"request failed: {response.types}")
    return response.pcm


def _digests(cache: Path) -> dict[str, str]:
    """sha256 of every compiled file (records name paths and hosts: left out)."""
    return {
        str(path.relative_to(cache)): hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        for path in sorted(cache.rglob("*"))
        if path.is_file() and path.name != _RECORD and not path.name.startswith(".")
    }


def _audio_vs(result: StartResult, reference: StartResult) -> str:
    if not result.pcm or not reference.pcm:
        return "—"
    got = np.frombuffer(result.pcm, np.int16).astype(np.int32)
    want = np.frombuffer(reference.pcm, np.int16).astype(np.int32)
    if got.shape != want.shape:
        return f"length differs ({got.size} vs {want.size} samples)"
    largest = int(np.max(np.abs(got - want))) if got.size else 0
    return "identical" if largest == 0 else f"max {largest} LSB apart"


def table(results: list[StartResult]) -> str:
    reference = results[0]
    lines = [
        "| start | limit | ready | cgroup peak | OOM kills | audio vs no limit | compiled files |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in results:
        limit = f"{result.limit_mb:,} MB" if result.limit_mb else "none"
        ready = f"{result.ready_s:.1f} s" if result.ready_s is not None else result.failure
        same = result.compiled == reference.compiled if result.compiled else None
        compiled = "—" if same is None else ("the same" if same else "DIFFER")
        lines.append(
            f"| {result.label} | {limit} | {ready} | {result.peak_mb:,.0f} MB | "
            f"{result.oom_kills} | {_audio_vs(result, reference)} | {compiled} |"
        )
    for result in results:
        for warning in result.warnings:
            lines.append(f"\n{result.label}: `{warning.strip()[:400]}`")
    return "\n".join(lines)


def save(results: list[StartResult], path: Path) -> None:
    raw = [{k: v for k, v in asdict(r).items() if k != "pcm"} for r in results]
    path.write_text(json.dumps(raw, indent=1) + "\n", encoding="utf-8")
