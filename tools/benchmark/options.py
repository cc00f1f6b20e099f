"""The command line of ``script/benchmark`` (cli.py runs it)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from tools.benchmark import voices
from tools.benchmark.modes import DEV_TOOLS
from tools.benchmark.slow_board import BOARDS, TARGET_SPEED
from tools.benchmark.texts import QUICK, TEXTS

UNSHOWN = ("--out", "--work")
"""Options a results file does not show: where a run wrote, not what it measured."""


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
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
        help="on a simulated slow board: both sides with 1 thread on one CPU, of whose time "
        "they get a share calibrated so that the reference decoder runs at --board-speed "
        "(tools/benchmark/slow_board.py; root); no four-voice, wyoming-bench or parity phase",
    )
    parser.add_argument(
        "--board",
        nargs="+",
        choices=BOARDS,
        default=list(BOARDS),
        help="the slow boards of --slow-board, --decoders and --conversation: 'steady' (the "
        "time in the shortest slices), 'shared' (in 20 ms slices); default both, one after "
        "the other (the memory mode: the first)",
    )
    parser.add_argument(
        "--board-speed",
        type=float,
        default=TARGET_SPEED,
        help=f"the reference decoder's speed on the slow board, x real time on 1 thread "
        f"(default {TARGET_SPEED})",
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
        "--dev-tools",
        nargs="*",
        metavar="COMMAND",
        help="measure nothing else: time each development command from --repo "
        f"(default: {' '.join(DEV_TOOLS)}), with the summary a test run prints",
    )
    parser.add_argument(
        "--render",
        type=Path,
        metavar="RESULTS_JSON",
        help="measure nothing: write --out again from the results.json of an earlier run",
    )
    args = parser.parse_args(argv)
    args.command = shown_command(sys.argv[1:] if argv is None else argv)
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


def shown_command(argv: Sequence[str]) -> str:
    """The command as a results file shows it: without where it wrote (--out, --work)."""
    shown, skip = ["script/benchmark"], False
    for word in argv:
        if not skip and word.split("=")[0] not in UNSHOWN:
            shown.append(word)
        skip = word in UNSHOWN and not skip
    return shlex.join(shown)
