"""Make a generator graph's fast variant and say what it costs and gains:
``python -m wyoming_hayakoe.commands.fast_decoder DECODER.onnx --calibration DIR --check DIR
-o OUT.onnx``.

DECODER.onnx is any VITS-family generator (a HiFi-GAN, its nodes named as PyTorch's exporter
names them: ``/dec/ups.0/ConvTranspose``, ``/dec/resblocks.3/...``, ``/dec/conv_post/Conv``),
taking the latent (and, for a multi-speaker model, the speaker conditioning) and giving the
audio. Each DIR holds ``.npz`` files, one example each, with one array per input of the graph,
named as the input. The calibration examples set the int8 ranges and choose the int8 layer
groups by measured sensitivity (or ``--keep-float`` names the groups to keep in FP32); the
check examples judge the result. The last line printed is JSON: the precision chosen (with the
integer path: where this machine's integer kernels would saturate their sums, 7-bit weights or
the session config entry it names), the quality gate against FP32, the speed of both on this
machine. Exit status 0 when the variant
passed its gate, 1 when it did not (it is written all the same) or none could be made, 2 for a
bad argument.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..cli.options import OneLineArgumentParser
from ..cli.values import positive_int
from ..compiling.fast_decoder.make import VariantMaker
from ..compiling.fast_decoder.timing import interleaved
from ..errors import HayakoeError
from ..runtime.sessions import RuntimeSettings


def _parser() -> argparse.ArgumentParser:
    parser = OneLineArgumentParser(
        prog="python -m wyoming_hayakoe.commands.fast_decoder",
        description="Make a mixed-precision (int8 where it does not hurt) variant of a "
        "VITS-family decoder graph, and measure it against FP32 on this machine.",
    )
    parser.add_argument("decoder", type=Path, metavar="DECODER.onnx")
    parser.add_argument("--calibration", type=Path, required=True, metavar="DIR")
    parser.add_argument("--check", type=Path, required=True, metavar="DIR")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="OUT.onnx")
    parser.add_argument(
        "--sample-rate",
        type=positive_int,
        default=44100,
        help="the audio's sample rate, for the quality measure (default: 44100, "
        "Style-Bert-VITS2's)",
    )
    parser.add_argument(
        "--keep-float",
        nargs="+",
        metavar="GROUP",
        help="keep these layer groups in FP32 and make the others int8, instead of choosing "
        "by measurement (groups: conv_pre, 'stage N' for the blocks after upsampling N, "
        "'block N' for residual block N alone, conv_post)",
    )
    parser.add_argument("--threads", type=positive_int, help="ONNX Runtime threads")
    parser.add_argument("--debug", action="store_true", help="log each trial")
    return parser


def _examples(folder: Path) -> list[dict[str, np.ndarray]]:
    files = sorted(folder.glob("*.npz"))
    if not files:
        raise HayakoeError(f"{folder}: no .npz examples")
    examples = []
    for path in files:
        with np.load(path) as stored:
            examples.append({name: stored[name] for name in stored.files})
    return examples


def _announce(step: str) -> None:
    logging.getLogger(__name__).info("Step: %s", step)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")  # fmt: skip
    settings = RuntimeSettings.create(args.threads)
    try:
        calibration, check = _examples(args.calibration), _examples(args.check)
        with tempfile.TemporaryDirectory(prefix="fast-decoder-") as work:
            maker = VariantMaker(
                args.decoder, calibration, Path(work), settings, args.sample_rate, _announce
            )
            longest = max(check, key=lambda e: max(v.shape[-1] for v in e.values()))
            made = maker.make(args.output, check, longest, args.keep_float)
            reference = maker.session(maker.plain)
            fast = maker.session(args.output, made.precision)
            audio = maker.decode(maker.plain, [longest])[0]
            timed = interleaved(
                {
                    "reference": lambda: reference.run(None, longest),
                    "fast": lambda: fast.run(None, longest),
                },
                len(audio) / args.sample_rate,
            )
    except (HayakoeError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    gate = made.gate
    assert gate is not None  # judged on the check examples
    report = {
        "precision": made.precision.as_dict(),
        # what a session of OUT.onnx must be given to sum as the gate measured (wide sums)
        "session config": made.precision.path.session_config(),
        "integer arithmetic": made.arithmetic.as_dict(),
        "path timing": {name: timing.median for name, timing in made.path_timing.items()},
        "groups": list(maker.generator.names),
        "equalized pairs": made.equalized_pairs,
        "gate": {**gate.as_dict(), "passed": gate.passed},
        "speed": {
            "threads": settings.threads,
            "reference seconds": timed["reference"].median,
            "fast seconds": timed["fast"].median,
            "fast over reference": timed["fast"].median / timed["reference"].median,
            "audio seconds": timed["fast"].audio_seconds,
        },
        "trials": [trial.as_dict() for trial in made.trials],
    }
    told = gate.describe()
    print(told[:1].upper() + told[1:])
    print(json.dumps(report))
    return 0 if gate.passed else 1


if __name__ == "__main__":
    sys.exit(main())
