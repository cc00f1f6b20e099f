"""The decoder run stage by stage as a stream equals decoding the whole latent at once."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from tools.server_process import TINY_VOICE_DIR, TINY_VOICE_ROOT
from wyoming_hayakoe.compiling.graphs.synthesizer_split import split_synthesizer
from wyoming_hayakoe.engine.engine import Engine
from wyoming_hayakoe.inference.decoder import Decoder, Stage
from wyoming_hayakoe.inference.warm_up import warm_up
from wyoming_hayakoe.pacing.fixed import FixedWindows
from wyoming_hayakoe.pacing.margins import HELD_WINDOW_FRAMES, SPEED_MARGIN
from wyoming_hayakoe.pacing.windows import DecodeSpeed, busy_seconds

TINY = TINY_VOICE_DIR
FULL = Path(
    os.environ.get("WYOMING_HAYAKOE_FULL_VOICE", Path(__file__).parents[2] / ".cache/voices/full")
)
"""The full synthetic voice (script/make_synthetic_voice --preset full): real sizes."""

WINDOWINGS = [
    [1] * 40 + [1000],
    [7, 13, 29, 100],
    [14, 14, 200],
    [3, 3, 3, 3, 3, 50],
    [24, 96, 384],
]


def _decoder_and_whole(voice_dir: Path, cache: Path) -> tuple[Decoder, ort.InferenceSession]:
    """The compiled decoder, and the decoder as one graph (split from the published file)."""
    voice = Engine(voice_dir.parents[2], threads=2, cache_dir=cache).voices.load(voice_dir)
    assert voice.decoder is not None
    split = split_synthesizer(voice.model_path, cache / "split")
    whole = ort.InferenceSession(str(split.decoder), providers=["CPUExecutionProvider"])
    return voice.decoder, whole


def _inputs(decoder: Decoder, whole: ort.InferenceSession, frames: int, seed: int) -> tuple:
    shapes = {i.name: i.shape for i in whole.get_inputs()}
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((1, shapes[decoder.latent_name][1], frames)).astype(np.float32)
    condition = rng.standard_normal((1, shapes[decoder.condition_name][1], 1)).astype(np.float32)
    return latent, condition


def _check(decoder: Decoder, whole: ort.InferenceSession, frames: int, windowings: list) -> None:
    latent, condition = _inputs(decoder, whole, frames, seed=frames)
    feeds = {decoder.latent_name: latent, decoder.condition_name: condition}
    reference = whole.run(None, feeds)[0].reshape(-1)
    assert len(reference) == frames * decoder.hop
    peak = float(np.abs(reference).max())
    for windows in windowings:
        pieces = list(decoder.decode(latent, condition, windows))
        audio = np.concatenate(pieces)
        assert len(audio) == len(reference), windows
        difference = float(np.abs(audio - reference).max())
        assert difference <= 1e-4, (windows, difference)
        assert difference <= 1e-5 * max(peak, 1e-3), (windows, difference, peak)


@pytest.mark.parametrize("frames", [1, 13, 40, 231])
def test_stages_stitch_to_the_whole_decoder_on_the_tiny_voice(
    tiny_model_cache: Path, frames: int
) -> None:
    decoder, whole = _decoder_and_whole(TINY, tiny_model_cache)
    _check(decoder, whole, frames, [*WINDOWINGS, FixedWindows.growing(frames, early=True).sizes])


def test_audio_comes_out_as_the_latent_goes_in(tiny_model_cache: Path) -> None:
    decoder, whole = _decoder_and_whole(TINY, tiny_model_cache)
    latent, condition = _inputs(decoder, whole, 200, seed=1)
    sizes = [len(piece) for piece in decoder.decode(latent, condition, [20] * 10)]
    assert len(sizes) == 10, "every window past the decoder's reach yields sound"
    fed = np.cumsum([20] * 10)
    out = np.cumsum(sizes) / decoder.hop
    for known, heard in zip(fed, out, strict=True):
        assert heard == pytest.approx(decoder.audible_frames(int(known), 200))
    assert out[-1] == 200
    # Only the decoder's right reach (under 14 frames) is held back at any cut.
    assert all(known - heard < 14 for known, heard in zip(fed[:-1], out[:-1], strict=True))


def test_a_stage_rereads_only_its_reach_of_its_own_input(tiny_model_cache: Path) -> None:
    decoder, _ = _decoder_and_whole(TINY, tiny_model_cache)
    # conv_pre, then the steps of ups 8, 8, 2, 2, 2: a few samples each at the stage's rate.
    assert [stage.rate for stage in decoder.stages] == [1, 8, 8, 2, 2, 2]
    assert all(stage.before <= 32 and stage.after <= 32 for stage in decoder.stages)
    assert sum(stage.condition_input is not None for stage in decoder.stages) == 1


@pytest.mark.slow
@pytest.mark.skipif(not (FULL / "onnx").is_dir(), reason="no full synthetic voice made")
def test_stages_stitch_to_the_whole_decoder_on_the_full_voice(tmp_path: Path) -> None:
    voice_dir = next((FULL / "onnx" / "speakers").iterdir())
    decoder, whole = _decoder_and_whole(voice_dir, tmp_path)
    _check(decoder, whole, 120, [[7, 13, 29, 100], [24, 96], [16] * 8])


@pytest.mark.parametrize("assumed", [0.05, 1.0, 50.0])
def test_scheduled_decoding_holds_back_or_streams_and_stays_exact(
    tiny_model_cache: Path, assumed: float
) -> None:
    """Assumed far below, at and far above this machine's speed: the held-back and the
    streamed paths both stitch to the whole decoder's audio."""
    from decoder_model import decode_scheduled

    from wyoming_hayakoe.pacing.scheduler import Scheduler
    from wyoming_hayakoe.pacing.windows import DecodeSpeed

    decoder, whole = _decoder_and_whole(TINY, tiny_model_cache)
    latent, condition = _inputs(decoder, whole, 400, seed=7)
    feeds = {decoder.latent_name: latent, decoder.condition_name: condition}
    reference = whole.run(None, feeds)[0].reshape(-1)
    scheduler = Scheduler(DecodeSpeed(initial=assumed))
    steps = decode_scheduled(decoder, latent, condition, 44100, scheduler)
    pieces = [piece for piece in steps if piece is not None]
    assert np.abs(np.concatenate(pieces) - reference).max() <= 1e-4
    assert scheduler.plans and sum(scheduler.plans[0].windows) == 400
    assert scheduler.speed.observed > 0


def test_warm_up_times_the_second_window_of_silence(tiny_model_cache: Path) -> None:
    """The first run pages the weights in; only the second is timed into the speed."""
    decoder, whole = _decoder_and_whole(TINY, tiny_model_cache)
    silence = decoder.silence(5)
    assert silence is not None
    shapes = {i.name: i.shape for i in whole.get_inputs()}
    assert silence[0].shape == (1, shapes[decoder.latent_name][1], 5)
    assert silence[1].shape == tuple(shapes[decoder.condition_name])
    assert not silence[0].any() and not silence[1].any()

    runs: list[int] = []
    session = decoder.stages[-1].session
    original_run = session.run

    def counting_run(*args, **kwargs):  # type: ignore[no-untyped-def]
        runs.append(1)
        return original_run(*args, **kwargs)

    session.run = counting_run  # type: ignore[method-assign]
    clock_reads: list[int] = []

    def clock() -> float:
        clock_reads.append(len(runs))
        return 100.0 + 0.25 * (len(clock_reads) - 1)

    speed = DecodeSpeed()
    warm_up(decoder, 44100, speed, now=clock)
    assert clock_reads == [1, 2]  # started after the first decode, read after the second
    seconds = HELD_WINDOW_FRAMES * decoder.hop / 44100
    assert speed.observed == 1
    assert speed.assumed() == pytest.approx(seconds / busy_seconds(0.25) * SPEED_MARGIN)


def test_a_warmed_up_voice_knows_its_speed_before_any_request(tiny_model_cache: Path) -> None:
    engine = Engine(TINY_VOICE_ROOT, threads=1, cache_dir=tiny_model_cache)
    voice = engine.voices.load(TINY_VOICE_DIR)
    assert engine.voices.decode_speed(voice) is None  # loading decodes nothing: a server is ready
    engine.voices.warm_up(voice)
    speed = engine.voices.decode_speed(voice)
    assert speed is not None and speed > 0


@pytest.mark.parametrize(
    ("element", "channels", "expected"),
    [
        (TensorProto.FLOAT, 3, np.float32),
        (TensorProto.FLOAT16, 3, np.float16),
        (TensorProto.FLOAT, "channels", None),  # open channel count: no warm-up
        (TensorProto.DOUBLE, 3, None),  # no decoder of ours takes doubles
    ],
)
def test_silence_is_shaped_and_typed_as_the_first_stage_takes_it(
    tmp_path: Path, element: int, channels: int | str, expected: type | None
) -> None:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "stage",
        [helper.make_tensor_value_info("x", element, [1, channels, "frames"])],
        [helper.make_tensor_value_info("y", element, [1, channels, "frames"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "stage.onnx")
    session = ort.InferenceSession(str(tmp_path / "stage.onnx"))
    decoder = Decoder([Stage(session, "x", None, 1, 0, 0)], "x", "g", hop=1, context=0)
    silence = decoder.silence(4)
    if expected is None:
        assert silence is None
        return
    assert silence is not None
    latent, condition = silence
    assert latent.shape == (1, 3, 4) and latent.dtype == expected and not latent.any()
    assert condition.shape == (1, 1, 1) and condition.dtype == expected
    assert next(iter(decoder.decode(latent, condition, [4]))).dtype == expected
