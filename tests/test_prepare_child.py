"""Models prepared, checked and calibrated in child processes: the same files and results as
in the process itself, and a child killed half-way harms nothing."""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from wyoming_hayakoe.engine import Engine, SynthesisParams, calibration
from wyoming_hayakoe.engine.calibration import (
    CALIBRATION_TEXT,
    CalibrationRequest,
    calibration_feeds,
    gain_in_child,
    gain_of,
)
from wyoming_hayakoe.engine.self_check_child import CheckRequest, run_check
from wyoming_hayakoe.engine.self_checked import result_file
from wyoming_hayakoe.errors import ModelFileError
from wyoming_hayakoe.runtime import prepare_child, self_check
from wyoming_hayakoe.voices.config import VoiceConfig

# Each test prepares the tiny voice from an empty cache, in children it kills or breaks.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent / "fixtures" / "tiny-voice"
VOICE_DIR = ROOT / "onnx" / "speakers" / "tiny"
SYNTHESIZER = VOICE_DIR / "synthesizer.onnx"
TEXT = "エアコンを二十五度に設定しました。"
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
REPO = Path(__file__).resolve().parents[1]


def _audio(cache: Path) -> np.ndarray:
    engine = Engine(ROOT, threads=1, cache_dir=cache)
    voice = engine.load_voice(VOICE_DIR)
    assert voice.decoder is not None
    return np.concatenate([c.audio for c in engine.render(voice, TEXT, QUIET)])


def _files(cache: Path) -> dict[str, bytes]:
    """Prepared files by name without the cache key (keys hold modification times)."""
    return {
        re.sub(r"-[0-9a-f]{16}", "", str(p.relative_to(cache))): p.read_bytes()
        for p in sorted(cache.rglob("*"))
        if p.is_file() and p.suffix in {".onnx", ".txt"} and "gain" not in p.name
    }


def test_the_server_process_only_loads_what_children_prepared(tmp_path: Path) -> None:
    # The first start has every model prepared, checked and calibrated by a child; a second
    # finds them all ready. Neither imports onnx: only children edit or read graphs.
    code = (
        "import logging, sys; from pathlib import Path; from wyoming_hayakoe.engine import Engine;"
        "logging.basicConfig(level=logging.INFO);"
        f"e = Engine(Path({str(ROOT)!r}), threads=1, cache_dir=Path({str(tmp_path)!r}));"
        f"v = e.load_voice(Path({str(VOICE_DIR)!r})); e.gain(v);"
        "list(e.synthesize(v, 'はい。'));"
        "print('onnx imported' if 'onnx' in sys.modules else 'no onnx')"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def start() -> tuple[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", code], check=True, env=env, cwd=REPO, capture_output=True,
            text=True,
        )  # fmt: skip
        return done.stdout, done.stderr

    out, first = start()
    assert out.strip() == "no onnx", "a first start imported onnx in the server process"
    for step in ("split", "self-check", "calibrate", "optimize"):
        assert f"({step}, in a child process)" in first
    out, second = start()
    assert out.strip() == "no onnx"
    assert "in a child process" not in second, "a second start prepared again"
    assert any(tmp_path.glob("split-*/names.txt"))
    assert any(tmp_path.glob("stages-*/names.txt"))
    assert any(tmp_path.glob("opt-stage0-*/model.onnx"))
    assert any(tmp_path.glob("self-check-*.json"))
    assert any(tmp_path.glob("gain-*.txt"))
    assert not list(tmp_path.glob(".*")), "a finished start leaves no staging behind"


def test_a_killed_child_leaves_nothing_that_is_used(tmp_path: Path) -> None:
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    reference = _audio(clean)
    killed.mkdir()
    command = [sys.executable, "-m", "wyoming_hayakoe.runtime.prepare_step", "split"]
    child = subprocess.Popen(
        [*command, str(SYNTHESIZER), str(killed)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
    )
    deadline = time.monotonic() + 60
    while not list(killed.glob(".split-*")) and child.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    child.send_signal(signal.SIGKILL)
    child.wait()
    if list(killed.glob("split-*")):
        pytest.skip("the child finished before it could be killed")
    assert list(killed.glob(".split-*")), "the half-written split stays in its staging folder"

    assert np.array_equal(_audio(killed), reference)
    assert not list(killed.glob(".split-*")), "the next start removes what the child left"
    assert _files(killed) == _files(clean), "the same files as a clean preparation"


def test_a_failing_child_is_a_clear_error_and_leaves_no_staging(tmp_path: Path) -> None:
    broken = tmp_path / "synthesizer.onnx"
    broken.write_bytes(SYNTHESIZER.read_bytes()[:5000])
    cache = tmp_path / "cache"
    cache.mkdir()
    with pytest.raises(ModelFileError, match="child process"):
        prepare_child.split_in_child(broken, cache)
    assert list(cache.iterdir()) == []


def _check_request(cache: Path) -> CheckRequest:
    """What the server asks of its self-check child for the tiny voice."""
    config = VoiceConfig.read(VOICE_DIR / "config.json")
    vectors = np.load(VOICE_DIR / "style_vectors.npy").astype(np.float32)
    return CheckRequest(
        model=SYNTHESIZER,
        name="tiny",
        cache_dir=cache,
        record=result_file(SYNTHESIZER, cache),
        threads=1,
        speaker=min(config.speakers.values(), default=0),
        sample_rate=config.sample_rate,
        decoder_shape=config.decoder_shape,
        style_vector=tuple(float(x) for x in vectors[0]),
    )


def test_the_child_checks_and_calibrates_like_the_process_itself(tmp_path: Path) -> None:
    engine = Engine(ROOT, threads=1, cache_dir=tmp_path)
    voice = engine.load_voice(VOICE_DIR)
    assert voice.decoder is not None and voice.self_check is not None
    request = _check_request(tmp_path)
    restored = CheckRequest.from_json(request.to_json())
    assert restored.to_json() == request.to_json()
    assert restored.decoder_shape.context_frames() == request.decoder_shape.context_frames()
    assert self_check.read_result(request.record) == voice.self_check
    assert run_check(request) == voice.self_check, "in-process check differs from the child's"

    feeds = calibration_feeds(voice, engine.prepare(CALIBRATION_TEXT), engine.features)
    in_process = gain_of(voice.synthesizer, voice.inputs, voice.decoder, feeds, voice.sample_rate)
    assert gain_in_child(voice, feeds, 1, tmp_path) == in_process
    assert engine.gain(voice) == in_process
    assert 0.05 < in_process < 20


@pytest.mark.parametrize("step", ["self-check", "calibrate"])
def test_a_killed_check_or_calibration_leaves_nothing_that_is_used(
    tmp_path: Path, step: str
) -> None:
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    engine = Engine(ROOT, threads=1, cache_dir=clean)
    reference = engine.load_voice(VOICE_DIR)
    gain = engine.gain(reference)
    Engine(ROOT, threads=1, cache_dir=killed).load_voice(VOICE_DIR)  # prepared, checked
    record = result_file(SYNTHESIZER, killed)
    gains = list(killed.glob("gain-*.txt"))
    assert record.is_file() and not gains
    if step == "self-check":
        record.unlink()
        argument = _check_request(killed).to_json()
    else:
        feeds = calibration_feeds(reference, engine.prepare(CALIBRATION_TEXT), engine.features)
        folder = killed / ".calibration-killed"
        folder.mkdir()
        np.savez(
            folder / "feeds.npz",
            **{f"{i}.{k}": v for i, f in enumerate(feeds) for k, v in f.items()},
        )
        argument = CalibrationRequest(
            SYNTHESIZER, killed, 1, reference.sample_rate,
            dataclasses.asdict(reference.config.decoder_shape), reference.self_check.context_frames,
            folder,
        ).to_json()  # fmt: skip
    child = subprocess.Popen(
        [sys.executable, "-m", "wyoming_hayakoe.engine.child_step", step, argument],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
    )
    _kill_half_way(child, "opt-front-" if step == "calibrate" else "onnxruntime")
    if child.wait() == 0:
        pytest.skip("the child finished before it could be killed")
    assert not record.is_file() if step == "self-check" else not any(killed.glob("gain-*"))
    assert not list(killed.glob(".self-check-*")), "no half-written result"

    engine = Engine(ROOT, threads=1, cache_dir=killed)
    again = engine.load_voice(VOICE_DIR)
    assert again.self_check == reference.self_check
    assert engine.gain(again) == gain


def _kill_half_way(child: subprocess.Popen[bytes], mapped: str) -> None:
    """Kill ``child`` once it has mapped a file named like ``mapped`` (ONNX Runtime's library:
    the check is under way; the prepared front's weights: the calibration is)."""
    deadline = time.monotonic() + 60
    maps = Path(f"/proc/{child.pid}/maps")
    while child.poll() is None and time.monotonic() < deadline:
        try:
            if mapped in maps.read_text():
                break
        except OSError:
            break
        time.sleep(0.002)
    child.send_signal(signal.SIGKILL)


def test_a_calibration_child_that_fails_leaves_the_gain_to_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    engine = Engine(ROOT, threads=1, cache_dir=tmp_path)
    voice = engine.load_voice(VOICE_DIR)
    feeds = calibration_feeds(voice, engine.prepare(CALIBRATION_TEXT), engine.features)
    expected = gain_of(voice.synthesizer, voice.inputs, voice.decoder, feeds, voice.sample_rate)
    monkeypatch.setattr(calibration, "_CHILD_MODULE", "wyoming_hayakoe.no_such_module")
    caplog.set_level(logging.WARNING)
    assert engine.gain(voice) == expected
    (warning,) = [m for m in caplog.messages if "Calibrating tiny in this process" in m]
    assert "no_such_module" in warning
    assert not list(tmp_path.glob(".calibration-*")), "the failed child's folder is removed"
