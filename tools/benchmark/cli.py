"""``script/benchmark``: this project against the reference, same voice, same threads, one run.

script/benchmark                       # full run: its results replace theirs in BENCHMARKS.md
script/benchmark --voice-root /tmp/full-voice --rounds 3 --threads 2
script/benchmark --quick --out /tmp/quick.md   # smoke run: two texts, one round
script/benchmark --several-clients --baseline ../main   # several listeners at once
script/benchmark --memory 1000 [--compiled-memory 700] [--slow-board]   # starts in a cgroup
script/benchmark --dev-tools                 # script/lint and script/test, timed

Each mode writes its own topic of BENCHMARKS.md (sections.py); the modes are in modes.py.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from tools.benchmark import document, modes, options, report, runner, sections, voices
from tools.benchmark.busy_core import busy_core
from tools.benchmark.ours import server_options
from tools.benchmark.procinfo import conditions, machine
from tools.benchmark.results import Results, from_json, to_json
from tools.benchmark.slow_board import Board, slow_board
from tools.benchmark.texts import TEXTS

_LOGGER = logging.getLogger("tools.benchmark")
AUDIO_CACHE_OPTION = "--audio-cache-mb"
END_LOAD = "load average at end"


def _default_threads() -> int:
    from wyoming_hayakoe.runtime.sessions import default_thread_count

    return default_thread_count()


def _uncached_options() -> tuple[str, ...]:
    """Options that turn the server's audio cache off, if it has one."""
    if AUDIO_CACHE_OPTION in server_options():
        return (AUDIO_CACHE_OPTION, "0")
    return ()


def main(argv: Sequence[str] | None = None) -> int:
    args = options.parse(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    if args.render is not None:
        _write(from_json(args.render.read_text(encoding="utf-8")), args)
        return 0
    if args.dev_tools is not None:
        return modes.dev_tools(args)
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
        return modes.several_clients(args, root, voice, threads, work, _uncached_options())
    if args.decoders:
        return modes.decoders_mode(args, root, voice, work)
    if args.conversation:
        return modes.conversation_mode(args, root, voice, work)
    if args.beside_compiling:
        return modes.beside_compiling_mode(args, root, voice, threads, work)
    if args.memory is not None:
        return modes.memory(args, root, voice, threads, work)
    if args.offline:
        return modes.offline(args, root, voice, threads, work)
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
    for board in args.board if args.slow_board else [None]:
        _timing_run(args, cfg, board)
    sys.stdout.write(f"Logs and results-TOPIC.json (for --render) in {work}\n")
    return 0


def _timing_run(args: argparse.Namespace, cfg: runner.Config, board: str | None) -> None:
    """One timing run against the reference (on the slow board ``board`` if given), written
    as its topic."""
    res = Results(
        machine=machine(),
        settings={
            "voice": f"{cfg.voice} in {voices.shown(cfg.root)}",
            "threads (both sides)": cfg.threads,
            "measured rounds": args.rounds,
            "server options for timing": " ".join(cfg.uncached) or "none (no audio cache)",
            "run": "quick smoke run (not for comparison)" if args.quick else "full",
        },
    )
    bert = cfg.root / voices.BERT_FILE
    res.bert_mb = bert.stat().st_size / 2**20
    _LOGGER.info("Benchmark of %s, %d threads, %d rounds; logs in %s", cfg.voice, cfg.threads,
                 args.rounds, cfg.work / "logs")  # fmt: skip
    started = time.monotonic()
    if args.one_word:
        res.settings["before each measured request"] = "「はい。」, on both sides"
    condition: AbstractContextManager[Board | int | None]
    if board is not None:
        condition = slow_board(cfg.root, cfg.voice, cfg.root / "cache", board, args.board_speed)
    else:
        condition = busy_core() if args.busy_core else nullcontext(None)
    with condition as on:
        if isinstance(on, Board):
            res.settings["condition"] = on.describe()
        elif on is not None:
            res.settings["condition"] = f"a CPU-bound busy loop on CPU {on}, both sides free"
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
    res.settings[END_LOAD] = f"{os.getloadavg()[0]:.2f}"
    res.settings["topic"] = _topic(args, board)
    (cfg.work / f"results-{res.settings['topic']}.json").write_text(to_json(res), encoding="utf-8")
    _write(res, args)


def _topic(args: argparse.Namespace, board: str | None) -> str:
    """The topic a timing run writes: on a normal machine, a slow board or a busy core."""
    if board is not None:
        return "slow-board" if board == "steady" else f"slow-board-{board}"
    return "busy-core" if args.busy_core else "speed"


def _write(res: Results, args: argparse.Namespace) -> None:
    threads = f"{res.settings.get('threads (both sides)', '?')} threads"
    end_load = str(res.settings.get(END_LOAD, "?")).split(",")[0]
    said = conditions(res.machine, threads, end_load)
    topic = str(res.settings.get("topic", "speed"))
    text = sections.body(topic, args.command, said, document.markdown(res))
    sections.write_topic(args.out, topic, text)
    sys.stdout.write(report.table(report.rows(res)) + "\n")
    sys.stdout.write(f"Wrote {args.out}\n")
