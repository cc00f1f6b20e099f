"""The oracle's command line (run from the repository root with the project's .venv)::

    python -m tools.decoder_quality examples DIR
    python -m tools.decoder_quality study DIR [--only NAME ...] [--no-timing] [--markdown FILE]
    python -m tools.decoder_quality report DIR [--markdown FILE]

``examples`` writes joe's decoder graph and the three sets of latents (examples.py), which the
product's command also reads (``python -m wyoming_hayakoe.commands.fast_decoder
DIR/decoder.onnx --calibration DIR/calibration --check DIR/check -o OUT.onnx --sample-rate
22050``). ``study`` measures every variant of the grid (variants.py) not yet in DIR/study.json, and
those named by ``--only`` again, saving after each one (delete the file to start afresh), then
prints the derivation of the thresholds; ``report`` prints it again from DIR/study.json.
``--markdown FILE`` writes the study's topic of FILE (BENCHMARKS.md: the other topics kept).
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tools.benchmark import sections

from .derivation import derive, describe, in_short
from .examples import SETS, prepare
from .joe import SAMPLE_RATE, missing_requirements
from .report import section
from .variants import Measured, Study, grid

_LOGGER = logging.getLogger("decoder_quality")
STUDY_FILE = "study.json"


def _machine() -> str:
    import onnxruntime

    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    text = cpuinfo.read_text() if cpuinfo.exists() else ""
    names = [line.split(":", 1)[1].strip() for line in text.splitlines()
             if line.startswith("model name")]  # fmt: skip
    model = names[0] if names else model
    # the int8 dot-product instructions, which decide what int8 gains (x86, ARM)
    dot = [flag for flag in ("avx512_vnni", "avx_vnni", "asimddp") if f" {flag}" in text]
    return (f"{model} ({', '.join(dot) or 'no int8 dot-product instructions'}), "
            f"{os.cpu_count()} cores, ONNX Runtime {onnxruntime.__version__}")  # fmt: skip


def _load(folder: Path) -> dict[str, Any]:
    path = folder / STUDY_FILE
    return json.loads(path.read_text("utf-8")) if path.exists() else {"variants": []}


def _save(folder: Path, study: dict[str, Any]) -> None:
    partial = folder / (STUDY_FILE + ".partial")
    partial.write_text(json.dumps(study, indent=1), "utf-8")
    partial.replace(folder / STUDY_FILE)


def _study(folder: Path, only: Sequence[str] | None, timed: bool, command: str) -> dict[str, Any]:
    examples = prepare(folder)
    study = _load(folder)
    runner = Study(examples.decoder, examples.sets, folder / "work", SAMPLE_RATE, timed)
    variants = grid(runner.generator)
    unknown = set(only or ()) - {v.name for v in variants}
    if unknown:
        raise SystemExit(f"no variant {', '.join(sorted(unknown))} in the grid")
    kept = {raw["name"]: raw for raw in study["variants"]}
    earlier = study.get("facts", {})
    study["facts"] = {
        "sets": {name: len(examples.sets[name]) for name in SETS},
        "check_seconds": sum(len(a) for a in runner.references["check"]) / SAMPLE_RATE,
        "timed_seconds": runner.longest_seconds,
        "machine": _machine(),
        "date": earlier.get("date", datetime.date.today().isoformat()),
        "command": earlier.get("command", command),  # the run that measured the grid
        "remeasured": [
            *earlier.get("remeasured", []),
            *(f"{name} ({datetime.date.today().isoformat()})" for name in only or ()),
        ],
    }
    for variant in variants:
        if variant.name not in kept or variant.name in (only or ()):
            kept[variant.name] = runner.measure(variant).as_dict()
            study["variants"] = [kept[v.name] for v in variants if v.name in kept]
            _save(folder, study)
    return study


def _report(study: dict[str, Any], markdown: Path | None) -> None:
    measured = [Measured.from_dict(raw) for raw in study["variants"]]
    derivation = derive(measured)
    for line in describe(derivation):
        print(line)
    print("Compared: " + in_short(derive(measured, ("tuning",))))
    if markdown is not None:
        text = section(measured, derivation, study["facts"])
        sections.write_topic(markdown, "decoder-quality", text)
        print(f"Wrote {markdown}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.decoder_quality",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    commands = parser.add_subparsers(dest="command", required=True)
    examples = commands.add_parser("examples", help="write the decoder and the latents")
    study = commands.add_parser("study", help="measure the variants, derive the thresholds")
    report = commands.add_parser("report", help="the derivation from DIR/study.json")
    for command in (examples, study, report):
        command.add_argument("folder", type=Path, metavar="DIR")
    for command in (study, report):
        command.add_argument("--markdown", type=Path, metavar="FILE",
                             help="replace the study's topic in FILE")  # fmt: skip
    study.add_argument("--only", nargs="+", metavar="NAME",
                       help="re-measure these variants only (the grid's names)")  # fmt: skip
    study.add_argument("--no-timing", action="store_true", help="skip the speed runs")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    missing = missing_requirements()
    if missing:
        print("error: this machine lacks " + "; ".join(missing), file=sys.stderr)
        return 1
    args.folder.mkdir(parents=True, exist_ok=True)
    command = "python -m tools.decoder_quality " + " ".join(sys.argv[1:] if argv is None
                                                           else argv)  # fmt: skip
    if args.command == "examples":
        examples = prepare(args.folder)
        sizes = ", ".join(f"{len(v)} {k}" for k, v in examples.sets.items())
        print(f"Wrote {examples.decoder} and the latents of {sizes} sentences")
        return 0
    if args.command == "study":
        study = _study(args.folder, args.only, not args.no_timing, command)
    else:
        study = _load(args.folder)
        if not study["variants"]:
            print(f"error: {args.folder / STUDY_FILE}: nothing measured yet", file=sys.stderr)
            return 1
    _report(study, args.markdown)
    return 0
