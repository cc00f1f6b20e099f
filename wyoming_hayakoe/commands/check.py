"""Compile a voice, show its self-check: ``python -m wyoming_hayakoe.commands.check --voice NAME``.

Finds the voice as the server does (a HayaKoe folder, an ``.aivmx`` file or a Style-Bert-VITS2
export in any ``--data-dir``), compiles the shared BERT and the voice's models into the
server's cache as the server does (split at the decoder, attention on its band, optimized for
this CPU), runs the self-check against the published synthesizer (or reads its kept result)
and prints what requests will use and how far each step is from the published synthesizer.
Run on a larger machine of the same kind, it fills a cache folder a small board can use as it
is. Exit status 0 when the voice passed, or failed and is served whole (the output says so); 1
when the voice is not there or cannot be loaded; 2 for a bad argument.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..cli.options import DECODERS, DEFAULT_DATA_DIR, OneLineArgumentParser
from ..cli.values import positive_int
from ..errors import HayakoeError
from ..voices.layout import CACHE_DIR

if TYPE_CHECKING:
    from ..engine.voice import Voice


def _parser() -> argparse.ArgumentParser:
    parser = OneLineArgumentParser(
        prog="python -m wyoming_hayakoe.commands.check",
        description="Compile a voice for this machine and check its compiled models against its "
        "published synthesizer.",
    )
    parser.add_argument(
        "--voice",
        required=True,
        help="voice name, as the server lists it (a HayaKoe folder, an .aivmx file or a "
        "Style-Bert-VITS2 export in a data dir)",
    )
    parser.add_argument(
        "--data-dir",
        action="append",
        type=Path,
        help=f"folder with voices, as the server's; repeat for more (default: {DEFAULT_DATA_DIR})",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help=f"compiled models (default: the first DATA_DIR/{CACHE_DIR}, as the server's)",
    )
    parser.add_argument(
        "--threads", type=positive_int, help="CPU threads for ONNX Runtime (default: all cores)"
    )
    parser.add_argument(
        "--again", action="store_true", help="compile and check again even if it was done"
    )
    parser.add_argument(
        "--decoder",
        choices=DECODERS,
        default="auto",
        help="as the server's --decoder: make (or read) the fast decoder as the server would, "
        "and show which one serves and why (default: auto)",
    )
    parser.add_argument(
        "--keep-float",
        nargs="+",
        metavar="GROUP",
        help="make the fast decoder with every layer group but these in int8, instead of "
        "choosing them by measurement (conv_pre, 'stage N', a stage's 'block N', conv_post); "
        "with --decoder fast",
    )
    parser.add_argument("--debug", action="store_true", help="log what happens")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.WARNING, format=logging.BASIC_FORMAT
    )
    # Imported after parsing: --help and argument errors need no ONNX Runtime.
    from ..compiling.voice_models import voice_folder
    from ..engine import Engine
    from ..service.voice_names import VoiceNames
    from ..voices.store import VoiceStore

    data_dirs = args.data_dir or [Path(DEFAULT_DATA_DIR)]
    # The server's own look at the data dirs: whatever it would serve can be checked here.
    store = VoiceStore(data_dirs, local_files_only=True, catalog={})
    installed = store.sources()
    source = installed.get(args.voice)
    if source is None:
        why = VoiceNames(store, local_files_only=True).unknown_voice_message(args.voice)
        there = ", ".join(sorted(installed)) or "none"
        folders = ", ".join(str(d) for d in data_dirs)
        print(f"error: {why}; the voices in {folders}: {there}", file=sys.stderr)
        return 1
    cache_dir = args.cache_dir or data_dirs[0] / CACHE_DIR
    if args.again:
        shutil.rmtree(voice_folder(cache_dir, source), ignore_errors=True)
    try:
        # The BERT is compiled too: its calibration inputs check the voice, and a cache
        # filled here serves a small board from its first start.
        engine = Engine(store.ensure_bert(), threads=args.threads, cache_dir=cache_dir)
        engine.open_bert()
        voice = engine.voices.load(source)
        engine.voices.gain(voice)
        keep = tuple(args.keep_float) if args.keep_float else None
        engine.choose_decoder(voice, args.decoder, keep)
    except HayakoeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print("\n".join(_describe(voice) + _decoder(voice)))
    return 0


def _decoder(voice: Voice) -> list[str]:
    """Which decoder serves, why, and the figures it was chosen on."""
    choice = voice.decoder_choice
    if choice is None:
        return []
    lines = [f"Decoder: {choice.describe()}"]
    if choice.reference_speed is not None:
        fast = f", fast {choice.fast_speed:.2f}x" if choice.fast_speed is not None else ""
        lines.append(f"  speed here: reference {choice.reference_speed:.2f}x real time{fast}")
    if choice.precision is not None:
        lines.append(f"  fast decoder: {choice.precision}")
    return lines


def _describe(voice: Voice) -> list[str]:
    result = voice.self_check
    configured = voice.config.decoder_shape.context_frames()
    lines = [f"Voice {voice.name} ({voice.source.path})"]
    if voice.compiled is not None:
        lines.append(
            f"Compiled into {voice.compiled} (copy the cache folder to another machine of the "
            "same kind, with the same ONNX Runtime, and it starts from there)"
        )
    if result is None:
        lines.append(
            "Not split (no writable cache folder, the synthesizer cannot be split, or its "
            "compilation failed: see the warning above). Served by the whole synthesizer: "
            "sound starts when a sentence is finished."
        )
        return lines
    band = (
        f"{result.band_layers} attention layers on their band"
        if result.band_layers
        else ("attention as exported")
    )
    lines += [
        f"Compiled: split at the decoder, {band}, decoder context {result.context_frames} "
        f"frames either side (config.json: {configured})",
        f"Calibration: {result.audio_seconds:.2f} s of audio, peak {result.peak:.3f}, decoded "
        f"in windows of {'/'.join(str(w) for w in result.windows)} frames",
        f"Largest difference from the published synthesizer, relative to the peak "
        f"(tolerance {result.tolerance:.0e}):",
    ]
    for step in result.steps:
        verdict = "ok" if step.difference <= result.tolerance else "DIFFERS"
        detail = f"  ({step.detail})" if step.detail else ""
        lines.append(f"  {step.step:<15} {step.difference:.1e}  {verdict}{detail}")
    lines.append(f"  {'overall':<15} {result.max_difference:.1e}")
    if result.passed:
        lines.append("Passed: requests use the compiled models.")
    else:
        failed = result.failed_step
        lines.append(
            f"FAILED at step '{failed.step if failed else 'overall'}': the compiled models "
            "are discarded and the voice is served by its whole synthesizer (sound starts "
            "when a sentence is finished)."
        )
    return lines


if __name__ == "__main__":
    sys.exit(main())
