"""The fast decoder across CPUs: mixed graphs built on the x86_64 host, run on both.

The host builds the tiny voice's decoder with its first four stages in int8 (once with uint8
activations, once with int8) from seeded latents; the graphs travel in the reference file, so
an aarch64 run compares ONNX Runtime's ARM integer kernels with x86_64's on the very same
graph, not two calibrations. On each CPU it is also counted what became an integer kernel
(QLinearConv) when ONNX Runtime optimized it there.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from tools.server_process import TINY_VOICE_DIR
from wyoming_hayakoe.compiling.fast_decoder.quality import log_mel_distance

ACTIVATIONS = ("uint8", "int8")
GROUPS = ("conv_pre", "stage 0", "stage 1", "stage 2", "stage 3")
SAMPLE_RATE = 44100
FRAMES = 96


def build(work: Path) -> dict[str, np.ndarray]:
    """On the host: each mixed graph's bytes, and the latent and conditioning they run on."""
    from wyoming_hayakoe.compiling.fast_decoder.generator import find_generator
    from wyoming_hayakoe.compiling.fast_decoder.ranges import chunks_of, collect, conv_tensors
    from wyoming_hayakoe.compiling.fast_decoder.variant import Precision, mixed_graph, ranges_for
    from wyoming_hayakoe.compiling.graphs.synthesizer_split import split_synthesizer

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
    probe = example(FRAMES)
    built = {
        "fast_latent": probe[split.latent],
        "fast_condition": probe[split.condition],
        "fast_names": np.asarray([split.latent, split.condition]),
    }
    for activations in ACTIVATIONS:
        precision = Precision(GROUPS, activations=activations)
        convs = generator.convs(precision.int8_groups)
        target = work / f"{activations}.onnx"
        ranges = ranges_for(model, convs, histograms, precision)
        mixed_graph(plain, generator, precision, ranges, chunks[0], target)
        built[f"fast_graph_{activations}"] = np.frombuffer(target.read_bytes(), np.uint8)
    return built


def run(built: dict[str, np.ndarray], activations: str) -> tuple[np.ndarray, int]:
    """One mixed graph on this CPU: its audio, and how many integer convolutions ONNX
    Runtime made of it here."""
    with tempfile.TemporaryDirectory() as folder:
        graph = Path(folder) / "mixed.onnx"
        graph.write_bytes(built[f"fast_graph_{activations}"].tobytes())
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.log_severity_level = 3  # not the layout warning of a saved optimized model
        options.optimized_model_filepath = str(Path(folder) / "optimized.onnx")
        session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        optimized = onnx.load(options.optimized_model_filepath)
    kernels = sum(node.op_type == "QLinearConv" for node in optimized.graph.node)
    latent, condition = (str(name) for name in built["fast_names"])
    feeds = {latent: built["fast_latent"], condition: built["fast_condition"]}
    return np.asarray(session.run(None, feeds)[0], np.float32).reshape(-1), kernels


def outputs(built: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each graph's audio and integer kernel count on this CPU, for the reference file."""
    found: dict[str, np.ndarray] = {}
    for activations in ACTIVATIONS:
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
