"""``script/benchmark --offline``: a start with the hub unreachable, and switching voices in a
memory cgroup.

1. The default voice is a catalog voice that is not on disk, ``--voice`` is installed (its
   models compiled by a start before), and the hub refuses connections (``HF_ENDPOINT`` on a
   loopback port nothing listens on). Reports when the server listened, when the installed
   voice's first request was answered, and when a request for the missing default voice was
   refused (at once: the background retry already knows why).
2. Four copies of ``--voice`` (tools/benchmark/voices.py) served from one server inside a
   memory cgroup of ``--offline-memory`` MB (default 1,000): a start without a limit prepares
   their models first, then the measured start asks each voice in turn, twice round. Reports
   the time of each request (the first round loads each voice: a switch), the cgroup's peak
   and the OOM kills.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tools.benchmark import voices
from tools.benchmark.memory_cgroup import MemoryCgroup
from tools.server_process import ServerProcess, free_port, start_server
from tools.wyoming_requests import synthesize

_LOGGER = logging.getLogger("tools.benchmark")

TEXT = "了解です。"
MISSING_DEFAULT = "jvnv-F1-jp"
"""A catalog voice: the server offers it, and its download is what the unreachable hub fails."""


@dataclass
class OfflineResult:
    listening_s: float | None = None
    installed_answered_s: float | None = None
    missing_refused_s: float | None = None
    refusal: str = ""
    switch_limit_mb: int = 0
    switch_seconds: list[list[float]] = field(default_factory=list)
    """Per round, per voice: seconds from the request to its last audio."""
    switch_peak_mb: float = 0.0
    switch_oom_kills: int = 0
    failure: str = ""


def run(
    repo: Path, root: Path, voice: str, threads: int, limit_mb: int, work: Path
) -> OfflineResult:
    result = OfflineResult(switch_limit_mb=limit_mb)
    _unreachable_hub(result, repo, root, voice, threads, work)
    _switching(result, repo, root, voice, threads, limit_mb, work)
    return result


def _unreachable_hub(
    result: OfflineResult, repo: Path, root: Path, voice: str, threads: int, work: Path
) -> None:
    data = work / "offline-data"
    (installed,) = voices.make_multi_voice_root(root, voice, data, 1)  # and the BERT
    options = ("--data-dir", str(data), "--threads", str(threads),
               "--cache-dir", str(work / "offline-cache"))  # fmt: skip
    # A start that prepares the installed voice's models first: the measured start is a
    # compiled one, as on a box that lost its network after it had been set up.
    with start_server(work, *options, "--voice", installed, "--local-files-only", base_args=(),
                      tree=repo, log_name="offline-prepare.log"):  # fmt: skip
        pass
    server = start_server(
        work, *options, "--voice", MISSING_DEFAULT, base_args=(), timed=True, tree=repo,
        env={"HF_ENDPOINT": f"http://127.0.0.1:{free_port()}"}, log_name="offline-start.log",
    )  # fmt: skip
    try:
        _wait_for(server, "Cannot load the default voice")
        result.listening_s = server.seen_s("listening")
        result.installed_answered_s = asyncio.run(_answered_at(server, installed))
        result.missing_refused_s, result.refusal = asyncio.run(_refused_at(server))
    except (RuntimeError, OSError, TimeoutError, AssertionError) as err:
        result.failure = str(err).strip().splitlines()[0][:200]
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)


def _switching(
    result: OfflineResult,
    repo: Path,
    root: Path,
    voice: str,
    threads: int,
    limit_mb: int,
    work: Path,
) -> None:
    data = work / "switch-data"
    names = voices.make_multi_voice_root(root, voice, data, 4)
    base = ("--data-dir", str(data), "--voice", names[0], "--local-files-only")
    extra = ("--cache-dir", str(work / "switch-cache"), "--threads", str(threads))
    try:
        with start_server(work, *extra, base_args=base, tree=repo,
                          log_name="switch-prepare.log") as server:  # fmt: skip
            for name in names:  # prepares each copy's models, without a limit
                asyncio.run(_answered_at(server, name, read_timeout=3600))
        with MemoryCgroup(limit_mb) as group:
            # No audio cache: the second round synthesizes again, as a switch back would.
            server = start_server(
                work, *extra, "--audio-cache-mb", "0", base_args=base, wrapper=group.wrapper(),
                tree=repo, log_name="switch-limited.log",
            )  # fmt: skip
            try:
                server.wait_ready(timeout=600)
                for _ in range(2):
                    result.switch_seconds.append(
                        [asyncio.run(_request_seconds(server, name)) for name in names]
                    )
            except (RuntimeError, OSError, TimeoutError, AssertionError) as err:
                result.failure = str(err).strip().splitlines()[0][:200]
            finally:
                server.stop()
            result.switch_peak_mb, result.switch_oom_kills = group.peak_mb(), group.oom_kills()
    finally:
        shutil.rmtree(data, ignore_errors=True)


def _wait_for(server: ServerProcess, text: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while text not in server.log():
        if server.process.poll() is not None:
            raise RuntimeError(f"the server exited ({server.process.returncode})")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {text!r} after {timeout} s")
        time.sleep(0.05)


async def _answered_at(server: ServerProcess, voice: str, read_timeout: float = 600) -> float:
    """Seconds from the server's start to the last audio of one request for ``voice``."""
    async with server.client(read_timeout=read_timeout) as client:
        response = await synthesize(client, TEXT, voice)
    if response.errors or not response.pcm:
        raise RuntimeError(f"request for {voice} failed: {response.types}")
    return time.perf_counter() - server.started


async def _refused_at(server: ServerProcess) -> tuple[float, str]:
    """Seconds from the server's start to the refusal of a request for the missing default."""
    async with server.client() as client:
        response = await synthesize(client, TEXT)
    if not response.errors:
        raise RuntimeError(f"the missing default voice was not refused: {response.types}")
    return time.perf_counter() - server.started, response.errors[0].text[:120]


async def _request_seconds(server: ServerProcess, voice: str) -> float:
    started = time.perf_counter()
    await _answered_at(server, voice)
    return time.perf_counter() - started


def save(result: OfflineResult, path: Path) -> None:
    path.write_text(json.dumps(asdict(result), indent=2), encoding="utf-8")


def table(result: OfflineResult) -> str:
    def seconds(value: float | None) -> str:
        return f"{value:.1f} s" if value is not None else "—"

    lines = [
        "| hub unreachable | from the start |",
        "|---|---|",
        f"| listening | {seconds(result.listening_s)} |",
        f"| installed voice answered | {seconds(result.installed_answered_s)} |",
        f"| missing default voice refused | {seconds(result.missing_refused_s)} |",
        "",
        f"Refusal: {result.refusal or '—'}",
        "",
        f"| four voices in {result.switch_limit_mb:,} MB | voice 1 | voice 2 | voice 3 | voice 4 |",
        "|---|---|---|---|---|",
    ]
    for number, round_seconds in enumerate(result.switch_seconds, 1):
        cells = " | ".join(f"{s:.1f} s" for s in round_seconds)
        lines.append(f"| round {number} | {cells} |")
    lines += [
        "",
        f"Cgroup peak {result.switch_peak_mb:,.0f} MB, OOM kills {result.switch_oom_kills}."
        + (f" Failure: {result.failure}" if result.failure else ""),
    ]
    return "\n".join(lines)
