"""What a cut costs: decoder seconds for one latent decoded whole, in windows through the
whole decoder (each window with the decoder's full reach of context either side, as before
the stages) and in the same windows stage by stage. With a long latent (``--frames 2400``,
an 80-character sentence) it also shows why windows are capped: large ones decode slower.

    python -m tools.benchmark.cuts VOICE_DIR [--frames 300] [--threads 2] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnxruntime as ort

from wyoming_hayakoe.compiling.graphs.optimize import optimize
from wyoming_hayakoe.compiling.graphs.synthesizer_split import WEIGHTS, split_synthesizer
from wyoming_hayakoe.engine.engine import Engine
from wyoming_hayakoe.inference.decoder import Decoder
from wyoming_hayakoe.runtime.sessions import RuntimeSettings


def _through_whole(
    session: ort.InferenceSession, decoder: Decoder, context: int
) -> Callable[[np.ndarray, np.ndarray, list[int]], None]:
    def run(latent: np.ndarray, condition: np.ndarray, windows: list[int]) -> None:
        frames, start = latent.shape[2], 0
        for size in windows:
            end = min(frames, start + size)
            low, high = max(0, start - context), min(frames, end + context)
            feeds = {decoder.latent_name: latent[:, :, low:high], decoder.condition_name: condition}
            session.run(None, feeds)
            start = end

    return run


def _median_seconds(run: Callable[[], None], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("voice_dir", type=Path)
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    settings = RuntimeSettings.create(args.threads)
    with tempfile.TemporaryDirectory() as cache_name:
        cache = Path(cache_name)
        engine = Engine(args.voice_dir.parents[2], args.threads, cache_dir=cache)
        voice = engine.voices.load(args.voice_dir)
        decoder = voice.decoder
        assert decoder is not None
        # The decoder as one graph, compiled like the stages.
        split = split_synthesizer(voice.model_path, cache / "split")
        optimize(split.decoder, cache / "decoder.onnx", settings.session_options(), WEIGHTS)
        whole = settings.open(cache / "decoder.onnx", "decoder", optimized=True)
        context = voice.config.decoder_shape.context_frames()
        shapes = {i.name: i.shape for i in whole.get_inputs()}
        rng = np.random.default_rng(0)
        frames = args.frames
        latent = rng.standard_normal((1, shapes[decoder.latent_name][1], frames)).astype("f4")
        condition = rng.standard_normal((1, shapes[decoder.condition_name][1], 1)).astype("f4")
        old = _through_whole(whole, decoder, context)
        plans = {
            "whole": [frames],
            "24 then x4": [24, 96, 384],
            "32 frames each": [32] * (frames // 32 + 1),
            "16 frames each": [16] * (frames // 16 + 1),
            "128 frames each (the largest window)": [128] * (frames // 128 + 1),
            "384 frames each": [384] * (frames // 384 + 1),
        }
        base = _median_seconds(lambda: old(latent, condition, [frames]), args.rounds)
        print(
            f"{frames} frames ({frames * decoder.hop / voice.sample_rate:.2f} s of audio), "
            f"{args.threads} threads, median of {args.rounds}; whole decoder {base:.3f} s"
        )
        print("| windows | cuts | whole decoder per window | extra | by stages | extra |")
        print("|---|---|---|---|---|---|")
        for name, windows in plans.items():
            windows = _trim(windows, frames)
            then = _median_seconds(lambda w=windows: old(latent, condition, w), args.rounds)
            now = _median_seconds(
                lambda w=windows: list(decoder.decode(latent, condition, w)), args.rounds
            )
            print(
                f"| {name} | {len(windows) - 1} | {then:.3f} s | {then / base - 1:+.1%} "
                f"| {now:.3f} s | {now / base - 1:+.1%} |"
            )


def _trim(windows: list[int], frames: int) -> list[int]:
    kept, start = [], 0
    for size in windows:
        if start >= frames:
            break
        kept.append(min(size, frames - start))
        start += size
    return kept


if __name__ == "__main__":
    main()
