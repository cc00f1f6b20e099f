"""The modes of ``script/benchmark`` beside the full run: each measures one topic and writes
it into BENCHMARKS.md (sections.py), keeping the others."""

from __future__ import annotations

import argparse
import logging
import re
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from tools.benchmark import (
    beside_compiling,
    conversation,
    decoder_speed,
    decoders,
    memory_mode,
    offline_mode,
    sections,
    several,
    trained_decoder,
    voices,
)
from tools.benchmark.ours import Server
from tools.benchmark.procinfo import conditions, machine
from tools.benchmark.slow_board import slow_board

_LOGGER = logging.getLogger("tools.benchmark")
DEV_TOOLS = ("script/lint", "script/test")
"""What the development tools' mode times when given nothing else."""
_PYTEST_SUMMARY = re.compile(r"=+ (\d[^=]*? in [\d.]+s[^=]*)=+\s*$", re.M)


def write(args: argparse.Namespace, topic: str, info: dict[str, str], threads: str,
          report: str) -> None:  # fmt: skip
    """``report`` as ``topic`` of ``args.out``, under the run's command and conditions."""
    text = sections.body(topic, args.command, conditions(info, threads), report)
    sections.write_topic(args.out, topic, text)
    sys.stdout.write(f"{text}\nWrote {args.out}\n")


def several_clients(args: argparse.Namespace, root: Path, voice: str, threads: int,
                    work: Path, uncached: tuple[str, ...]) -> int:  # fmt: skip
    """Several clients at once against our server (and, with --baseline, one client against
    both trees side by side)."""
    info = machine()
    extra = (*uncached, "--debug")
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    settings = {"voice": f"{voice} in {voices.shown(root)}", "rounds": str(args.rounds),
                "server options": " ".join(extra)}  # fmt: skip
    res = several.SeveralResults(settings)
    servers = [Server(root, voice, threads, logs / "ours-several.log", extra)]
    try:
        servers[0].wait_ready()
        several.run_modes(servers[0], args.rounds, res)
        servers.pop().stop()
        if args.baseline is not None:
            # Both fresh, so that their memory is that of one client's requests alone; both
            # on the reference decoder: a server's compile child gives way to its own
            # requests only, so one making its fast decoder slowed the other's requests.
            cache = ("--cache-dir", str(work / "baseline-cache"))
            alone = (*extra, "--decoder", "reference")
            servers.append(Server(root, voice, threads, logs / "ours-alone.log", alone))
            servers.append(
                Server(root, voice, threads, logs / "baseline.log", (*alone, *cache), args.baseline)
            )
            for server in servers:
                server.wait_ready()
            several.run_baseline(servers[0], servers[1], args.rounds, res)
    finally:
        for server in servers:
            server.stop()
    several.save(res, work / "several.json")
    write(args, "several", info, f"{threads} threads", several.markdown(res))
    return 0


def decoders_mode(args: argparse.Namespace, root: Path, voice: str, work: Path) -> int:
    """The fast decoder made and timed on each CPU this machine can be seen as, then heard on
    a simulated slow board (decoders.py)."""
    info = machine()
    results = decoders.DecoderResults()
    _LOGGER.info("Decoders mode; logs in %s", work)
    for index, (cpu, env) in enumerate(decoder_speed.cpus().items()):
        cache = work / f"cache-{index}"
        results.cpus[cpu] = decoder_speed.measure(root, voice, cache, 5 * args.rounds,
                                                  work / "joe", env)  # fmt: skip
    for board in args.board:
        with slow_board(root, voice, work / "cache-0", board, args.board_speed) as on:
            results.boards[board] = on.describe()
            results.heard[board] = decoders.slow_board_run(root, voice, work / "cache-0", work,
                                                           args.rounds)  # fmt: skip
    threads = "1 and 2 threads; the slow boards 1"
    write(args, "decoders", info, threads, decoders.markdown(results))
    return 0


def memory(args: argparse.Namespace, root: Path, voice: str, threads: int, work: Path) -> int:
    """Starts in a memory cgroup (memory_mode.py), on the slow board if asked."""
    info = machine()
    board = (
        slow_board(root, voice, work / "board-cache", args.board[0], args.board_speed)
        if args.slow_board
        else nullcontext(None)
    )
    with board as on:
        condition = f", on {on.describe()}" if on is not None else ""
        _LOGGER.info("Memory mode, %d threads%s; logs in %s", threads, condition, work)
        results = memory_mode.run(
            args.repo, root, voice, threads, args.memory, args.compiled_memory, work
        )
    memory_mode.save(results, work / "memory.json")
    write(args, "memory", info, f"{threads} threads{condition}", memory_mode.table(results))
    return 0


def offline(args: argparse.Namespace, root: Path, voice: str, threads: int, work: Path) -> int:
    """A start with the hub unreachable, and voices switched in a cgroup (offline_mode.py)."""
    info = machine()
    _LOGGER.info("Offline mode, %d threads; logs in %s", threads, work)
    result = offline_mode.run(args.repo, root, voice, threads, args.offline_memory, work)
    offline_mode.save(result, work / "offline.json")
    write(args, "offline", info, f"{threads} threads", offline_mode.table(result))
    return 0


def conversation_mode(args: argparse.Namespace, root: Path, voice: str, work: Path) -> int:
    """A conversation partner's first sound (conversation.py)."""
    info = machine()
    cache = work / "cache"
    _LOGGER.info("Conversation mode; logs in %s", work)
    keep = trained_decoder.placed_keep_float(work / "joe", decoders.voice_generator(root, voice))
    decoders.make_fast(root, voice, cache, 2, keep)
    results = conversation.ConversationResults()
    for board in args.board:
        with slow_board(root, voice, cache, board, args.board_speed) as on:
            results.boards[board] = on.describe()
            conversation.run(root, voice, cache, work, args.rounds, on, results)
    write(args, "conversation", info, "the slow boards, 1 thread", results.markdown())
    return 0


def beside_compiling_mode(args: argparse.Namespace, root: Path, voice: str, threads: int,
                          work: Path) -> int:  # fmt: skip
    """Requests while the fast decoder is made (beside_compiling.py)."""
    info = machine()
    _LOGGER.info("Beside-compiling mode; logs in %s", work)
    results = beside_compiling.run(root, voice, work, threads, args.back_to_back)
    write(args, "beside-compiling", info, f"{threads} threads", results.markdown())
    return 0


def dev_tools(args: argparse.Namespace) -> int:
    """Each development script timed from this checkout, one after the other, with what it
    said of itself (a test run's summary)."""
    info = machine()
    lines = ["| command | outcome | wall time |", "|---|---|---|"]
    failed = 0
    for command in args.dev_tools or DEV_TOOLS:
        _LOGGER.info("Timing %s", command)
        started = time.monotonic()
        done = subprocess.run(command, shell=True, cwd=args.repo, capture_output=True,
                              text=True, check=False)  # fmt: skip
        seconds = time.monotonic() - started
        summary = [found.strip() for found in _PYTEST_SUMMARY.findall(done.stdout)][-1:]
        outcome = summary[0] if summary else "passed"
        if done.returncode != 0:
            failed += 1
            tail = (done.stdout + done.stderr).splitlines()[-40:]
            _LOGGER.error("%s failed:\n%s", command, "\n".join(tail))
            outcome = ": ".join([f"FAILED (exit {done.returncode})", *summary])
        lines.append(f"| `{command}` | {outcome} | {seconds:.0f} s |")
    write(args, "dev-tools", info, "each script's own threads", "\n".join(lines))
    return 1 if failed else 0
