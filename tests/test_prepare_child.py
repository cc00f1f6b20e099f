"""Models prepared in child processes: same files, and a child killed half-way harms nothing."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from wyoming_hayakoe.engine import Engine, SynthesisParams
from wyoming_hayakoe.errors import ModelFileError
from wyoming_hayakoe.runtime import prepare_child

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
    assert _files(killed) == _files(clean), "the same files as a clean preparation"


def test_a_failing_child_is_a_clear_error_and_leaves_no_staging(tmp_path: Path) -> None:
    broken = tmp_path / "synthesizer.onnx"
    broken.write_bytes(SYNTHESIZER.read_bytes()[:5000])
    cache = tmp_path / "cache"
    cache.mkdir()
    with pytest.raises(ModelFileError, match="child process"):
        prepare_child.split_in_child(broken, cache)
    assert list(cache.iterdir()) == []
