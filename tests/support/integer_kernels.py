"""The fast decoder's integer kernels on a CPU: mixed graphs of the tiny voice, built on the
x86_64 host, run wherever the test runs (x86_64 with or without VNNI, aarch64).

The host builds the tiny voice's decoder with its first four stages in int8, once per 8-bit
activation type, on the integer path the product takes there (compiling/fast_decoder/
arithmetic.py: plain 8-bit weights where the kernels add exactly, else 7-bit weights) or on
a path given. The graphs travel in the reference file, so an aarch64 run checks ARM's integer
kernels on the very same graph, not two calibrations.

Two references: the host's own integer kernels on that exact path, and the graph's own
arithmetic, run op by op with nothing fused (every int8 value dequantized, the convolutions in
float: the sums an exact kernel makes, in any float unit). Kernels that saturate are far from
both: ONNX Runtime's x86 kernels without VNNI, given 8-bit weights (measured on an AMD EPYC
with AVX2: 0.55 of the peak and 1.95 dB from the graph's arithmetic, where aarch64 was 0.24 dB
from it). On each CPU it is also counted what became an integer kernel (QLinearConv).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from tools.server_process import TINY_VOICE_DIR
from wyoming_hayakoe.compiling.fast_decoder.arithmetic import (
    ACTIVATION_TYPES,
    WIDE_SUMS_OPTION,
    IntegerPath,
    probe,
)
from wyoming_hayakoe.compiling.fast_decoder.quality import log_mel_distance
from wyoming_hayakoe.runtime.sessions import RuntimeSettings

ACTIVATIONS = ACTIVATION_TYPES
GROUPS = ("conv_pre", "stage 0", "stage 1", "stage 2", "stage 3")
SAMPLE_RATE = 44100
FRAMES = 96
EXACT_DB = 0.5
"""Largest log-mel distance between two exact computations of one mixed graph. An integer
kernel rounds its output to int8 in fixed point where the graph's arithmetic does it in float,
so an output now and then lands one step over, and the steps after carry it on: measured 0.24
dB (0.19 of the peak at one sample) on aarch64 against the graph's arithmetic, 0.12 dB between
aarch64 and x86_64 with VNNI (where x86_64 leaves 12 of the 74 convs in float with int8
activations), 2.4e-7 of the peak with uint8 (ONNX Runtime 1.32). Sums cut by saturation are
further off: 1.95 dB. One sample's difference is not bounded: which output tips over follows
the float unit. The quality gate allows a fast decoder 1.6 dB from the reference on average."""


def host_paths() -> dict[str, IntegerPath]:
    """Per activation type, the exact integer path the product takes on this CPU (the
    first it finds: 8-bit weights where exact, else 7-bit weights)."""
    paths = probe(RuntimeSettings(1)).paths
    return {t: next(p for p in paths if p.activations == t) for t in ACTIVATIONS}


def build(work: Path, paths: dict[str, IntegerPath] | None = None) -> dict[str, np.ndarray]:
    """On the host: each mixed graph's bytes and path, and the latent and conditioning they
    run on. ``paths``: per activation type (default: the host's, :func:`host_paths`)."""
    from wyoming_hayakoe.compiling.fast_decoder.generator import find_generator
    from wyoming_hayakoe.compiling.fast_decoder.ranges import chunks_of, collect, conv_tensors
    from wyoming_hayakoe.compiling.fast_decoder.variant import Precision, mixed_graph, ranges_for
    from wyoming_hayakoe.compiling.graphs.synthesizer_split import split_synthesizer

    paths = host_paths() if paths is None else paths
    split = split_synthesizer(TINY_VOICE_DIR / "synthesizer.onnx", work / "split")
    model = onnx.load(str(split.decoder))
    plain = work / "plain.onnx"
    onnx.save(model, str(plain))
    shapes = {
        i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input
    }
    rng = np.random.default_rng(11)
    latent_channels, gin = shapes[split.latent][1], shapes[split.condition][1]

    def example(frames: int) -> dict[str, np.ndarray]:
        return {
            split.latent: (rng.standard_normal((1, latent_channels, frames)) * 0.8).astype(
                np.float32
            ),
            split.condition: (rng.standard_normal((1, gin, 1)) * 0.1).astype(np.float32),
        }

    generator = find_generator(model)
    chunks = chunks_of([example(120) for _ in range(6)], [split.latent], 32, 12)
    histograms = collect(model, work, chunks, conv_tensors(model, generator.all_convs), _session)
    latent = example(FRAMES)
    built = {
        "fast_latent": latent[split.latent],
        "fast_condition": latent[split.condition],
        "fast_names": np.asarray([split.latent, split.condition]),
    }
    for activations, path in paths.items():
        precision = Precision(GROUPS).on_path(path)
        convs = generator.convs(precision.int8_groups)
        target = work / f"{activations}.onnx"
        ranges = ranges_for(model, convs, histograms, precision)
        mixed_graph(plain, generator, precision, ranges, chunks[0], target)
        built[f"fast_graph_{activations}"] = np.frombuffer(target.read_bytes(), np.uint8)
        built[f"fast_path_{activations}"] = np.asarray(path.name)
        built[f"fast_wide_{activations}"] = np.asarray(path.wide_sums)
    return built


def run(
    built: dict[str, np.ndarray], activations: str, fused: bool = True
) -> tuple[np.ndarray, int]:
    """One mixed graph on this CPU: its audio, and how many integer convolutions ONNX
    Runtime made of it here (none when not ``fused``: the graph's own arithmetic)."""
    with tempfile.TemporaryDirectory() as folder:
        graph = Path(folder) / "mixed.onnx"
        graph.write_bytes(built[f"fast_graph_{activations}"].tobytes())
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.log_severity_level = 3  # not the layout warning of a saved optimized model
        options.optimized_model_filepath = str(Path(folder) / "optimized.onnx")
        if bool(built[f"fast_wide_{activations}"]):
            options.add_session_config_entry(WIDE_SUMS_OPTION, "1")
        if not fused:
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        optimized = onnx.load(options.optimized_model_filepath)
    kernels = sum(node.op_type == "QLinearConv" for node in optimized.graph.node)
    latent, condition = (str(name) for name in built["fast_names"])
    feeds = {latent: built["fast_latent"], condition: built["fast_condition"]}
    return np.asarray(session.run(None, feeds)[0], np.float32).reshape(-1), kernels


def outputs(built: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each graph's arithmetic, its audio with this CPU's integer kernels and how many there
    are, for the reference file."""
    found: dict[str, np.ndarray] = {}
    for activations in ACTIVATIONS:
        found[f"fast_exact_{activations}"] = run(built, activations, fused=False)[0]
        audio, kernels = run(built, activations)
        found[f"fast_audio_{activations}"] = audio
        found[f"fast_kernels_{activations}"] = np.asarray(kernels)
    return found


def distance(ours: np.ndarray, theirs: np.ndarray) -> tuple[float, float]:
    """The largest difference relative to the peak, and the log-mel distance in dB."""
    peak = float(np.max(np.abs(theirs))) or 1.0
    return float(np.max(np.abs(ours - theirs))) / peak, log_mel_distance(theirs, ours, SAMPLE_RATE)


def _session(path: Path) -> ort.InferenceSession:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def measure_paths(work: Path) -> dict[str, object]:
    """On this CPU: what the probe says, and how far each path's integer kernels are from
    the graph's arithmetic (the plain 8-bit path of each type, then each exact path)."""
    found = probe(RuntimeSettings(1))
    distances: dict[str, float] = {}
    plain = {t: IntegerPath(t) for t in ACTIVATIONS}
    candidates = [plain, *({p.activations: p} for p in found.paths if p not in plain.values())]
    for index, paths in enumerate(candidates):
        built = build(work / str(index), paths)
        for activations, path in paths.items():
            fused, _ = run(built, activations)
            exact, _ = run(built, activations, fused=False)
            distances[path.name] = distance(fused, exact)[1]
    return {**found.as_dict(), "distances": distances}


def maker_choice(work: Path) -> dict[str, object]:
    """What the product's maker takes on this CPU for the tiny voice's first stages: the
    integer path of its variant, and the paths it timed."""
    from wyoming_hayakoe.compiling.fast_decoder.make import VariantMaker
    from wyoming_hayakoe.compiling.graphs.synthesizer_split import split_synthesizer

    split = split_synthesizer(TINY_VOICE_DIR / "synthesizer.onnx", work / "split")
    built = build(work / "examples", {t: IntegerPath(t) for t in ACTIVATIONS})
    example = {split.latent: built["fast_latent"], split.condition: built["fast_condition"]}
    maker = VariantMaker(split.decoder, [example] * 3, work / "maker", RuntimeSettings(1),
                         SAMPLE_RATE)  # fmt: skip
    made = maker.make(work / "fast.onnx", None, example, ["stage 4", "conv_post"])
    return {"path": made.precision.path.name, "timed": sorted(made.path_timing)}


if __name__ == "__main__":  # a child process on a masked CPU (tools/cpuid_mask)
    import json
    import sys

    with tempfile.TemporaryDirectory() as work:
        found = measure_paths(Path(work) / "paths")
        found["maker"] = maker_choice(Path(work) / "maker")
        print(json.dumps(found))
    sys.exit(0)
