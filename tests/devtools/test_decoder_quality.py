"""The fast decoder's quality gate against an independent oracle (tools/decoder_quality): PESQ-WB
and STOI on a real trained decoder (Piper's en_US-joe-medium), its check sentences never
seen by the calibration or the search."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tools.decoder_quality.examples import Examples, prepare
from tools.decoder_quality.joe import SAMPLE_RATE, missing_requirements
from tools.decoder_quality.oracle import IDENTICAL_PESQ, scores, sentence_score
from wyoming_hayakoe.compiling.fast_decoder.make import VariantMaker
from wyoming_hayakoe.compiling.fast_decoder.quality import gate, log_mel_distance
from wyoming_hayakoe.compiling.fast_decoder.variant import Precision
from wyoming_hayakoe.runtime.sessions import RuntimeSettings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def joe(tmp_path_factory: pytest.TempPathFactory) -> Examples:
    missing = missing_requirements()
    if missing:
        pytest.skip("the quality oracle needs " + "; ".join(missing))
    return prepare(tmp_path_factory.mktemp("joe"), ("calibration", "check"))


@pytest.fixture(scope="module")
def maker(joe: Examples, tmp_path_factory: pytest.TempPathFactory) -> VariantMaker:
    work = tmp_path_factory.mktemp("fast-decoder")
    return VariantMaker(joe.decoder, joe.sets["calibration"], work, RuntimeSettings.create(2),
                        SAMPLE_RATE)  # fmt: skip


@pytest.fixture(scope="module")
def references(maker: VariantMaker, joe: Examples) -> list[np.ndarray]:
    return maker.decode(maker.plain, joe.sets["check"])


def test_every_conv_in_int8_fails_the_gate(
    maker: VariantMaker, joe: Examples, references: list[np.ndarray], tmp_path: Path
) -> None:
    target = tmp_path / "every-conv.onnx"
    maker.build(Precision(maker.generator.names), target)
    audio = maker.decode(target, joe.sets["check"])
    verdict = gate(references, audio, SAMPLE_RATE)
    assert not verdict.passed, verdict.describe()
    heard = scores(references, audio, SAMPLE_RATE)
    assert heard.pesq_mean < 4.2  # the oracle agrees: it is heard


def test_the_products_choice_passes_and_sounds_like_fp32(
    maker: VariantMaker, joe: Examples, references: list[np.ndarray], tmp_path: Path
) -> None:
    check = joe.sets["check"]
    target = tmp_path / "fast.onnx"
    longest = max(check, key=lambda example: example["z"].shape[-1])
    made = maker.make(target, check, longest)
    assert made.precision.int8_groups  # something became int8
    assert made.gate is not None and made.gate.passed, made.gate
    assert made.gate.sentences == len(check) >= 20
    heard = scores(references, maker.decode(target, check), SAMPLE_RATE)
    pesq = [sentence.pesq for sentence in heard.sentences]
    assert heard.pesq_mean >= 4.2, pesq
    assert heard.pesq_worst >= 4.0, pesq
    assert heard.stoi_worst >= 0.99, [sentence.stoi for sentence in heard.sentences]


def test_the_distance_is_zero_for_identical_audio_and_grows_with_noise(
    references: list[np.ndarray],
) -> None:
    speech = max(references, key=len)
    assert log_mel_distance(speech, speech.copy(), SAMPLE_RATE) == 0.0
    rng = np.random.default_rng(0)
    noise = rng.standard_normal(len(speech)).astype(np.float32)
    noise *= np.sqrt(np.mean(speech**2) / np.mean(noise**2))  # as loud as the speech
    louder = [speech + noise * 10 ** (-snr / 20) for snr in (50, 40, 30, 20, 10)]
    distances = [log_mel_distance(speech, noisy, SAMPLE_RATE) for noisy in louder]
    assert distances[0] > 0.0
    assert distances == sorted(distances) and len(set(distances)) == len(distances), distances
    # The oracle hears the same order: PESQ-WB falls from its top as the noise grows.
    heard = [sentence_score(speech, noisy, SAMPLE_RATE).pesq for noisy in louder]
    assert sentence_score(speech, speech, SAMPLE_RATE).pesq == pytest.approx(IDENTICAL_PESQ, 0.01)
    assert heard == sorted(heard, reverse=True), heard
