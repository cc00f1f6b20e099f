"""``script/benchmark``: this project against the reference, same voice, same threads, one run.

script/benchmark                       # full run: its results replace theirs in BENCHMARKS.md
script/benchmark --voice-root /tmp/full-voice --rounds 3 --threads 2
script/benchmark --quick --out /tmp/quick.md   # smoke run: two texts, one round
script/benchmark --several-clients --baseline ../main   # several listeners at once
script/benchmark --memory 1000 [--compiled-memory 700] [--slow-board]   # starts in a cgroup
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path

from tools.benchmark import (
    beside_compiling,
    conversation,
    decoders,
    document,
    memory_mode,
    offline_mode,
    report,
    runner,
    sections,
    several,
    voices,
)
from tools.benchmark.ours import Server, server_options
from tools.benchmark.procinfo import machine
from tools.benchmark.results import Results, from_json, to_json
from tools.benchmark.slow_board import busy_core, slow_board
from tools.benchmark.texts import QUICK, TEXTS

_LOGGER = logging.getLogger("tools.benchmark")
AUDIO_CACHE_OPTION = "--audio-cache-mb"


def _default_threads() -> int:
    from wyoming_hayakoe.runtime.sessions import default_thread_count

    return default_thread_count()


def _uncached_options() -> tuple[str, ...]:
    """Options that turn the server's audio cache off, if it has one."""
    if AUDIO_CACHE_OPTION in server_options():
        return (AUDIO_CACHE_OPTION, "0")
    return ()


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="script/benchmark", description="Benchmark wyoming-hayakoe against hayakoe 1.3.1."
    )
    parser.add_argument(
        "--voice-root",
        type=Path,
        default=voices.DEFAULT_ROOT,
        help=f"voice root to use, built there if missing (default: {voices.DEFAULT_ROOT})",
    )
    parser.add_argument("--voice", help="voice name (default: the only one in the root)")
    parser.add_argument(
        "--no-build", action="store_true", help="fail instead of building a missing voice"
    )
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds (default 3)")
    parser.add_argument(
        "--threads",
        type=int,
        help="ONNX Runtime threads for both sides "
        "(default: this project's default, the usable physical cores)",
    )
    parser.add_argument(
        "--texts",
        nargs="+",
        choices=sorted(TEXTS),
        help=f"texts to time (default: all; --quick: {' '.join(QUICK)})",
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: two texts, one round, no four-voice phase"
    )
    parser.add_argument(
        "--slow-board",
        action="store_true",
        help="simulate a slow board: both sides with 1 thread, pinned to one CPU that a "
        "busy loop shares (no four-voice, wyoming-bench or parity phase)",
    )
    parser.add_argument(
        "--several-clients",
        action="store_true",
        help="only our server, several clients at once: 4 and 8 different announcements, "
        "4 identical ones (no reference, no other phase)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="TREE",
        help="with --several-clients: also run the server of this other checkout (with its own "
        ".venv) side by side, one client at a time, and compare",
    )
    parser.add_argument(
        "--one-word",
        action="store_true",
        help="a one-word request (「はい。」) before each measured one, on both sides",
    )
    parser.add_argument(
        "--busy-core",
        action="store_true",
        help="a busy loop on one CPU while both sides run where they like (a machine slowed "
        "near real time, not pinned)",
    )
    parser.add_argument(
        "--decoders",
        action="store_true",
        help="only the fast decoder against the reference decoder: their speed at 1 and 2 "
        "threads, and what a listener hears from each on a simulated slow board "
        "(tools/benchmark/decoders.py)",
    )
    parser.add_argument(
        "--conversation",
        action="store_true",
        help="only a conversation partner's first sound on a simulated slow board: replies "
        "asked in one synthesize and streamed as Home Assistant streams them, with each "
        "decoder, the first-audio deadline off and on (tools/benchmark/conversation.py)",
    )
    parser.add_argument(
        "--beside-compiling",
        action="store_true",
        help="only requests while the fast decoder is being made: short requests every 3 s "
        "with nothing compiling and while the child compiles, a server killed while it does "
        "(tools/benchmark/beside_compiling.py)",
    )
    parser.add_argument(
        "--back-to-back",
        action="store_true",
        help="with --beside-compiling: also requests back to back until the fast decoder is "
        "made (long)",
    )
    parser.add_argument("--no-four-voices", action="store_true")
    parser.add_argument("--no-wyoming-bench", action="store_true")
    parser.add_argument("--no-parity", action="store_true")
    parser.add_argument(
        "--out",
        type=Path,
        default=voices.REPO / "BENCHMARKS.md",
        help="the results file whose topic this run replaces, keeping the others "
        "(default: BENCHMARKS.md in the repository)",
    )
    parser.add_argument(
        "--work",
        type=Path,
        help="scratch folder for logs and copies (default: a new temporary one)",
    )
    parser.add_argument(
        "--memory",
        type=int,
        metavar="MB",
        help="measure nothing else: a first start without a limit, one in a memory cgroup of "
        "MB megabytes (server and children, page cache included) and a start on the cache it "
        "filled in --compiled-memory MB; ready time, peak, OOM kills, audio (needs root)",
    )
    parser.add_argument(
        "--compiled-memory",
        type=int,
        default=700,
        metavar="MB",
        help="the compiled start's limit in the memory mode (default 700)",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="measure a start with the hub unreachable and switching four voices in a memory "
        "cgroup (tools/benchmark/offline_mode.py; root)",
    )
    parser.add_argument(
        "--offline-memory",
        type=int,
        default=1000,
        metavar="MB",
        help="the four voices' memory limit in the offline mode (default 1000)",
    )
    parser.add_argument(
        "--repo",
        type=Path,
        default=voices.REPO,
        help="checkout whose server the memory mode starts (default: this one)",
    )
    parser.add_argument(
        "--render",
        type=Path,
        metavar="RESULTS_JSON",
        help="measure nothing: write --out again from the results.json of an earlier run",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds = 1 if args.rounds == 3 else args.rounds
        args.texts = args.texts or list(QUICK)
        args.no_four_voices = True
    if args.slow_board:
        args.threads = 1
        args.no_four_voices = args.no_wyoming_bench = args.no_parity = True
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    if args.render is not None:
        _write(from_json(args.render.read_text(encoding="utf-8")), args.out, _topic(args))
        return 0
    root = voices.ensure_voice(args.voice_root.resolve(), build=not args.no_build)
    names = voices.voice_names(root)
    voice = args.voice or names[0]
    if voice not in names:
        _LOGGER.error("No voice %s in %s (found: %s)", voice, root, ", ".join(names))
        return 1
    threads = args.threads or _default_threads()
    work = args.work or Path(tempfile.mkdtemp(prefix="hayakoe-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.several_clients:
        return _several_clients(args, root, voice, threads, work)
    if args.decoders:
        return _decoders_mode(args, root, voice, work)
    if args.conversation:
        return _conversation_mode(args, root, voice, work)
    if args.beside_compiling:
        return _beside_compiling_mode(args, root, voice, threads, work)
    if args.memory is not None:
        return _memory_mode(args, root, voice, threads, work)
    if args.offline:
        return _offline_mode(args, root, voice, threads, work)
    cfg = runner.Config(
        root=root,
        voice=voice,
        threads=threads,
        rounds=args.rounds,
        texts=[TEXTS[k] for k in (args.texts or TEXTS)],
        work=work,
        four_voices=not args.no_four_voices,
        wyoming_bench=not args.no_wyoming_bench,
        parity=not args.no_parity,
        uncached=_uncached_options(),
        one_word=args.one_word,
    )
    res = Results(
        machine=machine(),
        settings={
            "voice": f"{voice} in {root}",
            "threads (both sides)": threads,
            "measured rounds": args.rounds,
            "server options for timing": " ".join(cfg.uncached) or "none (no audio cache)",
            "run": "quick smoke run (not for comparison)" if args.quick else "full",
        },
    )
    bert = root / voices.BERT_FILE
    res.bert_mb = bert.stat().st_size / 2**20
    _LOGGER.info(
        "Benchmark of %s, %d threads, %d rounds; logs in %s",
        voice,
        threads,
        args.rounds,
        work / "logs",
    )
    started = time.monotonic()
    if args.one_word:
        res.settings["before each measured request"] = "「はい。」, on both sides"
    condition = slow_board() if args.slow_board else busy_core() if args.busy_core else None
    with condition or nullcontext(-1) as cpu:
        if cpu >= 0 and args.slow_board:
            res.settings["condition"] = (
                f"simulated slow board: each side pinned to CPU {cpu} (taskset) next to a "
                "CPU-bound busy loop, 1 thread"
            )
        elif cpu >= 0:
            res.settings["condition"] = f"a CPU-bound busy loop on CPU {cpu}, both sides free"
        server, ref = runner.startup_phase(cfg, res)
        try:
            runner.repeat_phase(cfg, server, ref, res)
            server.stop()
            server = runner.start_timing_server(cfg)
            runner.timing_phase(cfg, server, ref, res)
            ref.stop()  # wyoming-bench exercises only our server
            if cfg.wyoming_bench:
                runner.wyoming_bench_phase(cfg, server, res)
        finally:
            server.stop()
            ref.stop()
    if cfg.four_voices:
        runner.four_voice_phase(cfg, res)
    if cfg.parity:
        runner.parity_phase(cfg, res)
    res.settings["duration of the run"] = f"{(time.monotonic() - started) / 60:.1f} min"
    res.settings["load average at end"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    res.notes.append(
        "The machine may be shared with other work while the benchmark runs: compare the "
        "load averages above; medians damp, but do not remove, that noise."
    )
    (work / "results.json").write_text(to_json(res), encoding="utf-8")
    _write(res, args.out, _topic(args))
    sys.stdout.write(f"Logs and results.json (for --render) in {work}\n")
    return 0


def _several_clients(
    args: argparse.Namespace, root: Path, voice: str, threads: int, work: Path
) -> int:
    """Several clients at once against our server (and, with --baseline, one client against
    both trees side by side)."""
    extra = (*_uncached_options(), "--debug")
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    res = several.SeveralResults(
        settings={
            "machine": ", ".join(f"{k} {v}" for k, v in machine().items() if k in _MACHINE),
            "voice": f"{voice} in {root}",
            "threads": str(threads),
            "rounds": str(args.rounds),
            "server options": " ".join(extra),
            "load average at start": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
        }
    )
    servers = [Server(root, voice, threads, logs / "ours-several.log", extra)]
    try:
        servers[0].wait_ready()
        several.run_modes(servers[0], args.rounds, res)
        servers.pop().stop()
        if args.baseline is not None:
            # Both fresh, so that their memory is that of one client's requests alone.
            cache = ("--cache-dir", str(work / "baseline-cache"))
            servers.append(Server(root, voice, threads, logs / "ours-alone.log", extra))
            servers.append(
                Server(root, voice, threads, logs / "baseline.log", (*extra, *cache), args.baseline)
            )
            for server in servers:
                server.wait_ready()
            several.run_baseline(servers[0], servers[1], args.rounds, res)
    finally:
        for server in servers:
            server.stop()
    res.settings["load average at end"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    several.save(res, work / "several.json")
    report = several.markdown(res)
    _write_topic(args.out, "several", "Several clients at once", "--several-clients", report)
    sys.stdout.write(report + f"Wrote {args.out}; logs in {logs}\n")
    return 0


_MACHINE = ("date", "cpu", "cpus usable")


def _decoders_mode(args: argparse.Namespace, root: Path, voice: str, work: Path) -> int:
    """The decoders mode (tools/benchmark/decoders.py)."""
    info = machine()
    cache = work / "cache"
    results = decoders.DecoderResults()
    _LOGGER.info("Decoders mode; logs in %s", work)
    results.made = decoders.make_fast(root, voice, cache, 2)
    for threads in (1, 2):
        results.speed[threads] = decoders.speeds(root, voice, cache, threads, 5 * args.rounds)
    results.heard = decoders.slow_board_run(root, voice, cache, work, args.rounds)
    report = _conditions(info, "1 and 2 threads; slow board 1 thread", args.repo)
    report += decoders.markdown(results)
    _write_topic(args.out, "decoders", "The decoders on this CPU", "--decoders", report)
    sys.stdout.write(report + f"Wrote {args.out}\n")
    return 0


def _memory_mode(args: argparse.Namespace, root: Path, voice: str, threads: int, work: Path) -> int:
    """The memory mode (tools/benchmark/memory_mode.py), on the slow board if asked."""
    info = machine()
    with slow_board() if args.slow_board else nullcontext(-1) as cpu:
        condition = f", pinned to CPU {cpu} beside a busy loop" if cpu >= 0 else ""
        _LOGGER.info("Memory mode, %d threads%s; logs in %s", threads, condition, work)
        results = memory_mode.run(
            args.repo, root, voice, threads, args.memory, args.compiled_memory, work
        )
    memory_mode.save(results, work / "memory.json")
    sys.stdout.write(_conditions(info, f"{threads} threads{condition}", args.repo))
    sys.stdout.write(memory_mode.table(results) + "\n")
    return 0


def _offline_mode(
    args: argparse.Namespace, root: Path, voice: str, threads: int, work: Path
) -> int:
    """The offline mode (tools/benchmark/offline_mode.py)."""
    info = machine()
    _LOGGER.info("Offline mode, %d threads; logs in %s", threads, work)
    result = offline_mode.run(args.repo, root, voice, threads, args.offline_memory, work)
    offline_mode.save(result, work / "offline.json")
    sys.stdout.write(_conditions(info, f"{threads} threads", args.repo))
    sys.stdout.write(offline_mode.table(result) + "\n")
    return 0


def _conversation_mode(args: argparse.Namespace, root: Path, voice: str, work: Path) -> int:
    """A conversation partner's first sound (tools/benchmark/conversation.py)."""
    info = machine()
    cache = work / "cache"
    _LOGGER.info("Conversation mode; logs in %s", work)
    made = decoders.make_fast(root, voice, cache, 2)
    results = conversation.run(root, voice, cache, work, args.rounds)
    report = _conditions(info, "slow board, 1 thread", args.repo)
    report += results.markdown() + "\nThe fast decoder:\n\n"
    report += "\n".join(f"    {line}" for line in made.splitlines()) + "\n"
    heading = "A conversation partner's first sound, measured"
    _write_topic(args.out, "conversation", heading, "--conversation", report)
    sys.stdout.write(report + f"Wrote {args.out}\n")
    return 0


def _beside_compiling_mode(
    args: argparse.Namespace, root: Path, voice: str, threads: int, work: Path
) -> int:
    """Requests while the fast decoder is made (tools/benchmark/beside_compiling.py)."""
    info = machine()
    _LOGGER.info("Beside-compiling mode; logs in %s", work)
    results = beside_compiling.run(root, voice, work, threads, args.back_to_back)
    report = _conditions(info, f"{threads} threads", args.repo) + results.markdown()
    heading = "Requests while the fast decoder is made"
    _write_topic(args.out, "beside-compiling", heading, "--beside-compiling", report)
    sys.stdout.write(report + f"Wrote {args.out}\n")
    return 0


def _conditions(info: dict[str, str], threads: str, repo: Path) -> str:
    """The line above a mode's table: when, on what, how loaded the machine was, which tree."""
    return (
        f"{info['date']}, {info['cpu']}, {threads}, load average "
        f"{info['load average at start']} at the start, "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} at the end; {repo}\n\n"
    )


def _write_topic(out: Path, topic: str, heading: str, flag: str, report: str) -> None:
    """A mode's results as its topic of ``out`` (BENCHMARKS.md by default): the other topics
    are kept."""
    body = f"## {heading}\n\n`script/benchmark {flag}`: {report}"
    sections.write_topic(out, topic, body)


def _topic(args: argparse.Namespace) -> str:
    """The topic a timing run writes: on a normal machine, a slow board or a busy core."""
    return "slow-board" if args.slow_board else "busy-core" if args.busy_core else "speed"


def _write(res: Results, out: Path, topic: str) -> None:
    sections.write_topic(out, topic, document.markdown(res))
    sys.stdout.write(report.table(report.rows(res)) + "\n")
    sys.stdout.write(f"Wrote {out}\n")
