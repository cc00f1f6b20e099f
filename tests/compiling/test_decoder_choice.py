"""Which decoder a voice serves with (compiling/decoder_choice.py), and the fast decoder made
for the tiny voice by its child (decoder_job.py) as a server makes it."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from compiled_voices import CompiledCaches

from wyoming_hayakoe.cli.options import DECODERS
from wyoming_hayakoe.compiling.cache import (
    PROGRESS_RECORD,
    RECORD,
    compiled_folder,
    new_record,
    progress_folder,
    prune,
)
from wyoming_hayakoe.compiling.decoder_choice import FAST_BELOW_SPEED, MODES, choose
from wyoming_hayakoe.compiling.fast_decoder.half import fp16_convolutions
from wyoming_hayakoe.compiling.fast_decoder.quality import log_mel_distance
from wyoming_hayakoe.compiling.fast_decoder.variant import Precision
from wyoming_hayakoe.engine import Engine, SynthesisParams

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / "tests" / "fixtures" / "tiny-voice"
TINY = ROOT / "onnx" / "speakers" / "tiny"
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
TEXT = "明日の朝は七時に起きて、駅前のパン屋さんで朝ご飯を買ってから会社に行きます。"


def _timing(speed: float, spread: float = 0.0) -> dict[str, Any]:
    """Five runs of 1 s of audio at ``speed`` (each run ``spread`` slower than the last)."""
    seconds = [1 / speed * (1 + spread * k) for k in range(5)]
    return {"seconds": seconds, "audio_seconds": 1.0}


def _record(reference: float, fast: float, passed: bool, spread: float = 0.0) -> dict[str, Any]:
    mean = 1.0 if passed else 3.0
    return {
        "built": True,
        "reference": _timing(reference, spread),
        "fast": _timing(fast, spread),
        "gate": {"mean_db": mean, "worst_db": mean, "sentences": 8, "audio_seconds": 20.0},
        "precision": {"int8_groups": ["stage 0"]},
    }


def test_the_command_line_offers_the_modes() -> None:
    assert DECODERS == MODES


@pytest.mark.parametrize(
    ("mode", "record", "fast", "code"),
    [
        ("reference", _record(0.5, 1.5, True), False, "asked"),
        ("fast", _record(4.0, 5.0, False), True, "asked"),  # whatever the gate said
        ("auto", {"built": False, "reference": _timing(4.0)}, False, "fast_enough"),
        ("auto", _record(FAST_BELOW_SPEED * 1.01, 9.0, True), False, "fast_enough"),
        ("auto", _record(0.8, 1.9, True), True, "needed"),
        ("auto", _record(0.8, 1.9, False), False, "gate_failed"),
        # 0.8x and 0.82x, each run 5 % slower than the one before: the runs overlap
        ("auto", _record(0.8, 0.82, True, spread=0.05), False, "not_faster"),
        ("auto", None, False, "failed"),
        ("fast", None, False, "failed"),
    ],
)
def test_the_choice(mode: str, record: dict[str, Any] | None, fast: bool, code: str) -> None:
    choice = choose(mode, record, "it broke")
    assert (choice.fast, choice.code) == (fast, code)
    assert choice.mode == mode and choice.reason
    if record is not None and record.get("built") and mode != "reference":
        assert choice.gate is not None and choice.fast_speed is not None
        assert ("passed" in choice.describe()) == choice.gate.passed


@pytest.fixture
def cache(compiled_caches: CompiledCaches, tmp_path: Path) -> Path:
    return compiled_caches.copy(tmp_path / "cache")


def _audio(engine: Engine, voice: Any) -> np.ndarray:
    """The text's float audio in the fixed growing windows (comparable bit for bit)."""
    vector = voice.style_vector(QUIET.style, QUIET.style_weight)
    return np.concatenate(
        [
            piece
            for sentence in engine.prepare(TEXT).sentences
            for piece in voice.synthesize(
                sentence.phonemes, engine.features(sentence.phonemes), vector, QUIET, early=True
            )
        ]
    )


def test_a_fast_decoder_is_made_gated_and_served(
    cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    engine = Engine(ROOT, threads=1, cache_dir=cache)
    voice = engine.voices.load(TINY)
    reference_audio = _audio(engine, voice)
    reference = voice.decoder
    with caplog.at_level(logging.INFO, "wyoming_hayakoe.compiling.decoder_choice"):
        choice = engine.choose_decoder(voice, "fast")
    assert choice is not None and choice.fast and choice.code == "asked"
    assert voice.decoder is not reference and voice.reference_decoder is reference
    assert [r.getMessage() for r in caplog.records if "decoder (fast)" in r.getMessage()]
    (record,) = cache.glob(f"decoder-*/{RECORD}")
    result = json.loads(record.read_text())["result"]
    assert result["built"] and result["gate"]["sentences"] >= 8
    # on this machine's exact integer path, and what it measured on the way is not kept
    assert (
        Precision.from_dict(result["precision"]).path.name in result["integer arithmetic"]["paths"]
    )
    assert not list(cache.glob(".progress-*"))
    # no FP16 candidate where the CPU has no FP16 convolutions (x86): the int8 variant alone
    if not fp16_convolutions():
        assert [c["precision"] for c in result["candidates"]] == [choice.precision]
    # its int8 groups became integer kernels in the stages it serves
    groups = result["precision"]["int8_groups"]
    kernels = [
        node.op_type
        for stage in sorted(record.parent.glob("fast-stage*.onnx"))
        for node in onnx.load(str(stage), load_external_data=False).graph.node
    ]
    assert groups and kernels.count("QLinearConv") >= 6 * len(groups)
    fast_audio = _audio(engine, voice)
    assert fast_audio.shape == reference_audio.shape
    assert 0 < log_mel_distance(reference_audio, fast_audio, voice.sample_rate) < 5
    # a later start reads the choice: no child, the same stages
    again = Engine(ROOT, threads=1, cache_dir=cache)
    reloaded = again.voices.load(TINY)
    before = record.stat().st_mtime_ns
    assert again.choose_decoder(reloaded, "fast") == choice
    assert record.stat().st_mtime_ns == before
    # and reference goes back to HayaKoe's decoder, the same audio as before any choice
    third = Engine(ROOT, threads=1, cache_dir=cache)
    plain = third.voices.load(TINY)
    assert third.choose_decoder(plain, "reference") is not None
    assert plain.decoder is plain.reference_decoder
    assert np.array_equal(_audio(third, plain), reference_audio)
    assert not prune(cache)  # nothing of it is taken for stale


def test_auto_follows_what_the_child_measured(cache: Path) -> None:
    engine = Engine(ROOT, threads=1, cache_dir=cache)
    voice = engine.voices.load(TINY)
    choice = engine.choose_decoder(voice, "auto")
    assert choice is not None and choice.reference_speed is not None
    (record,) = cache.glob(f"decoder-*/{RECORD}")
    result = json.loads(record.read_text())["result"]
    if choice.reference_speed >= FAST_BELOW_SPEED:  # the tiny voice: tens of times real time
        assert not result["built"] and not choice.fast and choice.code == "fast_enough"
        assert voice.decoder is voice.reference_decoder
    else:
        assert result["built"]


def test_a_gone_voice_folder_takes_its_fast_decoder_along(cache: Path) -> None:
    engine = Engine(ROOT, threads=1, cache_dir=cache)
    engine.choose_decoder(engine.voices.load(TINY), "auto")
    (decoder_folder,) = cache.glob("decoder-*")
    for voice_folder in cache.glob("voice-*"):
        for entry in voice_folder.iterdir():
            entry.unlink()
        voice_folder.rmdir()
    assert decoder_folder in prune(cache)


def test_what_an_unfinished_child_measured_is_kept_until_it_can_never_be_used(
    cache: Path, tmp_path: Path
) -> None:
    engine = Engine(ROOT, threads=1, cache_dir=cache)
    engine.choose_decoder(engine.voices.load(TINY), "auto")
    (made,) = cache.glob("decoder-*")
    voice_folder, calibration = json.loads((made / RECORD).read_text())["key extra"]

    def progress(model: Path, *extra: str) -> Path:
        """What a child of the job for ``model`` left, as decoder_job.py writes it."""
        target = compiled_folder(cache, "decoder", [model], "tiny", extra)
        folder = progress_folder(target)
        folder.mkdir()
        record = new_record("decoder", [model], {}, extra)
        (folder / PROGRESS_RECORD).write_text(json.dumps(record))
        (folder / "trials.json").write_text("[]")
        return folder

    model = TINY / "synthesizer.onnx"
    waiting = progress(model, voice_folder, "another calibration")  # its decoder not made yet
    finished = progress(model, voice_folder, calibration)  # its decoder is made now
    gone_model = tmp_path / "synthesizer.onnx"
    gone_model.write_bytes(b"x")
    orphan = progress(gone_model, voice_folder, calibration)  # nobody will ever go on from it
    gone_model.unlink()
    removed = prune(cache)
    assert finished in removed and orphan in removed
    assert made.is_dir() and waiting.is_dir()
