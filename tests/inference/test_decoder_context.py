"""Decoding in windows equals decoding whole with the decoder's exact context, and clearly not
with less, on the committed synthetic voices. The decoder runs stage by stage
(inference/decoder.py): each stage keeps the reach of its own convolutions; "less context"
takes frames off every stage's reach.

Their decoders have weight on the outer kernel taps (tools/synthetic_voice/decoder_weights.py),
so the latent frames at the edge of the receptive field count as in a trained decoder. Measured
on the tiny voice (peak 0.64): context 13 (exact) 0, 12 frames 2.0e-3, 8 frames 0.13, 5 frames
0.45 of the peak.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from wyoming_hayakoe.compiling.graphs.decoder_stages import cut_decoder_stages, stage_path
from wyoming_hayakoe.compiling.graphs.synthesizer_split import WEIGHTS, split_synthesizer
from wyoming_hayakoe.inference.decoder import Decoder
from wyoming_hayakoe.inference.stages import open_decoder
from wyoming_hayakoe.runtime.sessions import RuntimeSettings
from wyoming_hayakoe.voices.config import DecoderShape

FIXTURES = Path(__file__).parents[1] / "fixtures"
SPEAKERS = [
    FIXTURES / "tiny-voice" / "onnx" / "speakers" / "tiny",
    FIXTURES / "tiny-voice-hayakoe" / "onnx" / "speakers" / "tiny-hk",
]

EXACT_TOLERANCE = 1e-5
"""Largest difference, relative to the audio's peak, that float rounding explains: a window
runs the same kernels on the same numbers, only ONNX Runtime may sum them in another order for
another length (about 1e-6 of the peak; 0 on the machine that made the fixtures)."""
SHORT_MARGIN = 10.0
"""Too little context must be at least this many tolerances off: clearly, not by rounding."""
PHONEMES = 40


@dataclass(frozen=True)
class SplitVoice:
    decoder: Decoder
    whole_decoder: ort.InferenceSession
    latent: np.ndarray
    condition: np.ndarray
    context: int

    def decode(self, shortfall: int = 0) -> tuple[np.ndarray, int]:
        """The windowed audio with every stage's reach ``shortfall`` frames short, and how
        many windows."""
        stages = [
            dataclasses.replace(
                stage,
                before=max(0, stage.before - shortfall),
                after=max(0, stage.after - shortfall),
            )
            for stage in self.decoder.stages
        ]
        decoder = dataclasses.replace(self.decoder, stages=stages)
        windows = list(decoder.growing(self.latent, self.condition, early=True))
        return np.concatenate(windows), len(windows)

    def whole(self) -> np.ndarray:
        feeds = {self.decoder.latent_name: self.latent, self.decoder.condition_name: self.condition}
        return np.asarray(self.whole_decoder.run(None, feeds)[0]).reshape(-1)


def _probe(speaker: Path, names: list[str]) -> dict[str, np.ndarray]:
    """A deterministic blank-interspersed phoneme sequence at zero noise."""
    rng = np.random.default_rng(1)
    n = 2 * PHONEMES + 1
    x, tone, language = (np.zeros((1, n), np.int64) for _ in range(3))
    x[0, 1::2] = rng.integers(1, 100, PHONEMES)
    tone[0, 1::2] = 6 + rng.integers(0, 2, PHONEMES)
    language[0, 1::2] = 1
    feeds = {
        "x": x,
        "x_lengths": np.array([n], np.int64),
        "sid": np.array([0], np.int64),
        "tone": tone,
        "language": language,
        "bert": rng.standard_normal((1, 1024, n)).astype(np.float32),
        "style_vec": np.load(speaker / "style_vectors.npy")[:1],
        "noise_scale": np.array([0.0], np.float32),
        "length_scale": np.array([1.0], np.float32),
        "noise_scale_w": np.array([0.0], np.float32),
        "sdp_ratio": np.array([0.0], np.float32),
    }
    return {name: feeds[name] for name in names}


@pytest.fixture(scope="module", params=SPEAKERS, ids=lambda path: path.name)
def voice(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> SplitVoice:
    speaker: Path = request.param
    if not speaker.is_dir():
        pytest.skip(f"{speaker} is not there")
    # The split and its stages work on the graph alone: a fraction of a second.
    split = split_synthesizer(speaker / "synthesizer.onnx", tmp_path_factory.mktemp("split"))
    providers = ["CPUExecutionProvider"]
    front = ort.InferenceSession(str(split.front), providers=providers)
    inputs = [i.name for i in front.get_inputs()]
    latent, condition = front.run([split.latent, split.condition], _probe(speaker, inputs))
    config = json.loads((speaker / "config.json").read_text(encoding="utf-8"))
    shape = DecoderShape.from_config(config["model"])
    names = (split.latent, split.condition)
    signals = cut_decoder_stages(split.decoder, *names, WEIGHTS)
    stages = [stage_path(split.decoder.parent, i) for i in range(len(signals))]
    settings = RuntimeSettings.create(1)
    return SplitVoice(
        decoder=open_decoder(stages, signals, names, shape, settings),
        whole_decoder=ort.InferenceSession(str(split.decoder), providers=providers),
        latent=latent,
        condition=condition,
        context=shape.context_frames(),
    )


def test_exact_context_decodes_windows_equal_to_whole(voice: SplitVoice) -> None:
    whole = voice.whole()
    peak = float(np.abs(whole).max())
    windowed, count = voice.decode()
    assert voice.context == 13
    assert count >= 3, "the latent must be cut more than once"
    assert peak > 0.1, "quiet audio would make any tolerance meaningless"
    assert windowed.shape == whole.shape
    assert float(np.abs(windowed - whole).max()) <= EXACT_TOLERANCE * peak


@pytest.mark.parametrize("shortfall", [1, 5, 8])
def test_too_little_context_fails_the_tolerance(voice: SplitVoice, shortfall: int) -> None:
    whole = voice.whole()
    peak = float(np.abs(whole).max())
    windowed, _ = voice.decode(shortfall)
    error = float(np.abs(windowed - whole).max()) / peak
    assert error > SHORT_MARGIN * EXACT_TOLERANCE, (
        f"stages {shortfall} frames short differ by only {error:.1e} of the peak"
    )
