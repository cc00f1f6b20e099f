"""The fast decoder as a real trained decoder gets it: made and gated on joe (Piper's
en_US-joe-medium, tools/decoder_quality) by the product's maker, timed against joe's FP32
decoder, with a per-operator profile of both (where the time goes, and so how far int8 can
take it). Random-weight voices time arithmetic; they never choose what a trained voice keeps.

``python -m tools.benchmark.trained_decoder DIR`` (DIR holds joe's examples, made there if
missing) prints one line of JSON: the precision chosen, its gate, the seconds of both at 1
and 2 threads, and each one's kernel time by operator at 1 thread as shares of FP32's total.
Run in a process of its own so that it can see the CPU as another CPU (decoder_speed.py).

:func:`same_places` carries the precision chosen to another generator of the family (the
full-size voice): each group to the one at the same upsampling step from the latent, each
residual block to the one at the same place in its stage, the audio-rate groups to the
audio-rate ones; a stage the trained decoder has no counterpart of stays in float.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from tools.decoder_quality.examples import prepare
from tools.decoder_quality.joe import SAMPLE_RATE
from wyoming_hayakoe.compiling.fast_decoder.generator import (
    Generator,
    block_name,
    find_generator,
    stage_name,
)
from wyoming_hayakoe.compiling.fast_decoder.make import VariantMaker
from wyoming_hayakoe.compiling.fast_decoder.savings import ROUNDS
from wyoming_hayakoe.compiling.fast_decoder.timing import interleaved
from wyoming_hayakoe.compiling.fast_decoder.variant import Precision
from wyoming_hayakoe.runtime.sessions import RuntimeSettings

THREADS = (1, 2)
TIMING_ROUNDS = 15


def measure(folder: Path) -> dict[str, Any]:
    examples = prepare(folder, ("calibration", "check"))
    calibration, check = examples.sets["calibration"], examples.sets["check"]
    longest = max(check, key=lambda e: max(v.shape[-1] for v in e.values()))
    result: dict[str, Any] = {"speed": {}}
    with tempfile.TemporaryDirectory(prefix="trained-decoder-") as work:
        for threads in THREADS:
            maker = VariantMaker(examples.decoder, calibration, Path(work) / str(threads),
                                 RuntimeSettings.create(threads), SAMPLE_RATE)  # fmt: skip
            fast = Path(work) / f"fast-{threads}.onnx"
            if threads == THREADS[0]:
                made = maker.make(fast, check, longest)
                precision = made.precision
                assert made.gate is not None
                result |= {"precision": precision.as_dict(), "described": precision.describe(),
                           "gate": {**made.gate.as_dict(), "passed": made.gate.passed},
                           "profile": _profiles(maker, fast, precision, longest)}  # fmt: skip
            else:
                maker.build(precision, fast)
            sessions = {"reference": maker.session(maker.plain),
                        "fast": maker.session(fast, precision)}  # fmt: skip
            audio = len(maker.decode(maker.plain, [longest])[0]) / SAMPLE_RATE
            runs = {name: partial(session.run, None, longest) for name, session in sessions.items()}
            timed = interleaved(runs, audio, TIMING_ROUNDS)
            result["speed"][threads] = {n: t.median for n, t in timed.items()} | {"audio": audio}
    return result


def placed_keep_float(folder: Path, other: Generator) -> list[str]:
    """What ``other`` keeps in float to take joe's choice (made in ``folder``, as
    :func:`measure` makes it, without timing) at the same places."""
    examples = prepare(folder, ("calibration", "check"))
    calibration, check = examples.sets["calibration"], examples.sets["check"]
    with tempfile.TemporaryDirectory(prefix="trained-decoder-") as work:
        maker = VariantMaker(examples.decoder, calibration, Path(work),
                             RuntimeSettings.create(max(THREADS)), SAMPLE_RATE)  # fmt: skip
        longest = max(check, key=lambda e: max(v.shape[-1] for v in e.values()))
        made = maker.make(Path(work) / "fast.onnx", None, longest)
        trained = maker.generator
    return keep_float(same_places(made.precision.int8_groups, trained, other), other)


def _profiles(maker: VariantMaker, fast: Path, precision: Precision, example: Any) -> Any:
    """Kernel time by operator of FP32 and the variant, as shares of FP32's total."""
    by_op = {
        "reference": _by_operator(maker.session(maker.plain, profiled=True), example),
        "fast": _by_operator(maker.session(fast, precision, profiled=True), example),
    }
    total = sum(by_op["reference"].values())
    return {name: {op: us / total for op, us in ops.most_common()} for name, ops in by_op.items()}


def _by_operator(session: Any, example: Any) -> Counter[str]:
    for _ in range(ROUNDS):
        session.run(None, example)
    trace = Path(session.end_profiling())
    found: Counter[str] = Counter()
    for event in json.loads(trace.read_text(encoding="utf-8")):
        if event.get("cat") == "Node" and str(event.get("name", "")).endswith("_kernel_time"):
            found[event["args"]["op_name"]] += int(event.get("dur", 0))
    trace.unlink(missing_ok=True)
    return found


def joe_generator(folder: Path) -> Generator:
    """The layer groups of joe's decoder graph in ``folder`` (made by :func:`measure`)."""
    import onnx

    return find_generator(onnx.load(str(folder / "decoder.onnx"), load_external_data=False))


def same_places(groups: Sequence[str], trained: Generator, other: Generator) -> tuple[str, ...]:
    """The groups of ``other`` at the places of ``trained``'s ``groups`` (module docstring)."""
    stages, other_stages = len(trained.blocks), len(other.blocks)
    per_stage = {len(blocks) for blocks in trained.blocks.values()}.pop()
    other_per_stage = {len(blocks) for blocks in other.blocks.values()}.pop()

    def stage(index: int) -> int | None:
        if index == stages - 1:
            return other_stages - 1
        return index if index < other_stages - 1 else None

    placed: list[str] = []
    for name in groups:
        kind, _, number = name.partition(" ")
        if kind == "stage" and (at := stage(int(number))) is not None:
            placed.append(stage_name(at))
        elif kind == "block" and other_per_stage == per_stage:
            at = stage(int(number) // per_stage)
            if at is not None:
                placed.append(block_name(at * per_stage + int(number) % per_stage))
        elif not number:
            placed.append(name)  # conv_pre, conv_post
    return tuple(placed)


def keep_float(int8: Sequence[str], generator: Generator) -> list[str]:
    """What to keep in float so that exactly ``int8`` goes int8 (Generator.all_but)."""
    kept = []
    for group in generator.groups:
        blocks = [b.name for b in generator.blocks.get(group.name, ())]
        if group.name in int8:
            continue
        if any(block in int8 for block in blocks):
            kept += [block for block in blocks if block not in int8]
        else:
            kept.append(group.name)
    return kept


def main(argv: Sequence[str] | None = None) -> int:
    (folder,) = argv if argv is not None else sys.argv[1:]
    print(json.dumps(measure(Path(folder))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
