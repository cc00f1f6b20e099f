"""The cache of compiled models: made once and reused, healed when damaged, pruned when
superseded, and never a reason for a voice not to load."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from compiled_voices import CompiledCaches
from fs_utils import read_only

from tools.engine_audio import float_pieces
from wyoming_hayakoe.compiling import cache
from wyoming_hayakoe.compiling.cache import RECORD, prune
from wyoming_hayakoe.compiling.files import keep
from wyoming_hayakoe.engine import Engine, SynthesisParams

ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
VOICE_DIR = ROOT / "onnx" / "speakers" / "tiny"
TEXT = "エアコンを二十五度に設定しました。"
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)


def _audio(engine: Engine, voice_dir: Path = VOICE_DIR) -> np.ndarray:
    voice = engine.voices.load(voice_dir)
    return np.concatenate([c.audio for c in float_pieces(engine, voice, TEXT, QUIET)])


def _snapshot(directory: Path) -> dict[str, int]:
    return {str(p.relative_to(directory)): p.stat().st_mtime_ns for p in directory.rglob("*")}


@pytest.fixture(scope="module")
def compiled(compiled_caches: CompiledCaches) -> tuple[Path, np.ndarray, float]:
    """The run's cache with the tiny voice compiled (read it only), the audio of TEXT and
    the gain."""
    folder = compiled_caches.master()
    engine = Engine(ROOT, threads=1, cache_dir=folder)
    voice = engine.voices.load(VOICE_DIR)
    assert voice.decoder is not None
    return folder, _audio(engine), engine.voices.gain(voice)


def _copy(compiled: tuple[Path, np.ndarray, float], target: Path) -> Path:
    shutil.copytree(compiled[0], target)
    return target


def test_compiled_models_are_made_once_and_reused(
    compiled: tuple[Path, np.ndarray, float], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _copy(compiled, tmp_path / "cache")
    made = _snapshot(folder)
    assert sorted(p.name.split("-")[0] for p in folder.iterdir()) == ["bert", "decoder", "voice"]
    assert not any(".tmp" in name or name.startswith(".") for name in made)
    assert any(name.endswith(RECORD) for name in made)
    assert any(Path(name).name.startswith("gain-") for name in made)
    caplog.set_level(logging.INFO)
    second = Engine(ROOT, threads=1, cache_dir=folder)
    assert np.array_equal(_audio(second), compiled[1])
    assert second.voices.gain(second.voices.load(VOICE_DIR)) == compiled[2]
    assert _snapshot(folder) == made, "a second start must not compile anything"
    assert not [m for m in caplog.messages if m.startswith("Compiling")]


@pytest.mark.slow  # each compiles the voice (or the BERT) again
@pytest.mark.parametrize(
    ("pattern", "damage"),
    [
        ("voice-*/front.onnx", "truncate"),
        ("voice-*/stage2.data", "truncate"),
        ("voice-*/front.onnx", "zero"),  # same size: only opening it shows the damage
        ("bert-*/model.data", "truncate"),
    ],
)
def test_a_damaged_compiled_model_is_compiled_again_and_served(
    compiled: tuple[Path, np.ndarray, float],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    pattern: str,
    damage: str,
) -> None:
    folder = _copy(compiled, tmp_path / "cache")
    (path,) = folder.glob(pattern)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncate" else bytes(len(data)))
    caplog.set_level(logging.INFO)
    engine = Engine(ROOT, threads=1, cache_dir=folder)
    voice = engine.voices.load(VOICE_DIR)
    assert voice.decoder is not None, "compiled again, not served whole"
    assert np.array_equal(_audio(engine), compiled[1])
    (warning,) = [m for m in caplog.messages if "is damaged" in m]
    assert path.parent.name in warning
    assert path.read_bytes() == data, "the same file made again"
    assert not [m for m in caplog.messages if "corrupt" in m or "download it again" in m]


def test_read_only_cache_dir_loads_models_as_published(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    with read_only(folder) as is_read_only:
        if not is_read_only:
            pytest.skip("cannot make a folder read-only here")
        engine = Engine(ROOT, threads=1, cache_dir=folder)
        assert engine.voices.load(VOICE_DIR).decoder is None
        assert list(folder.iterdir()) == []


def test_a_full_cache_dir_still_loads_the_voice(
    compiled: tuple[Path, np.ndarray, float], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {mounted.stderr.decode().strip()}")
    try:
        caplog.set_level(logging.WARNING)
        engine = Engine(ROOT, threads=1, cache_dir=folder)
        voice = engine.voices.load(VOICE_DIR)
        assert voice.decoder is None, "served from its published files"
        audio = np.concatenate([c.audio for c in float_pieces(engine, voice, TEXT, QUIET)])
        assert np.allclose(audio, compiled[1], atol=1e-4)
        warnings = [m for m in caplog.messages if "Compiling" in m]
        assert warnings and all("No space left" in m for m in warnings), warnings
        assert not [p for p in folder.iterdir() if p.name.startswith(".")], "nothing half-made"
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_cache_write_that_fails_only_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "unwritable"
    folder.mkdir()
    with read_only(folder) as is_read_only:
        if not is_read_only:
            pytest.skip("cannot make a folder read-only here")
        caplog.set_level(logging.WARNING)
        assert not keep(folder / "gain-x.txt", "1.0", "the gain")
    (warning,) = caplog.messages
    assert "computed again next time" in warning
    assert list(folder.iterdir()) == []


@pytest.mark.slow  # compiles the voice twice
def test_a_changed_model_is_compiled_again_and_the_old_copy_pruned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    voice_root = tmp_path / "root"
    shutil.copytree(ROOT, voice_root)
    voice_dir = voice_root / "onnx" / "speakers" / "tiny"
    folder = tmp_path / "cache"
    Engine(voice_root, threads=1, cache_dir=folder).voices.load(voice_dir)
    before = {p.name for p in folder.glob("voice-*")}
    synthesizer = voice_dir / "synthesizer.onnx"
    os.utime(synthesizer, ns=(0, 1))  # a new download of the voice
    caplog.set_level(logging.INFO)
    Engine(voice_root, threads=1, cache_dir=folder).voices.load(voice_dir)
    after = {p.name for p in folder.glob("voice-*")}
    assert len(after) == 1 and not before & after
    assert any("has changed since" in m for m in caplog.messages)


def _fake_folder(cache_dir: Path, label: str, key: str | None = None, **changes: object) -> Path:
    """A compiled folder of the tiny voice, named as this machine names it (or with ``key``),
    whose record differs by ``changes``."""
    source = VOICE_DIR / "synthesizer.onnx"
    folder = cache.compiled_folder(cache_dir, "voice", [source], label)
    if key is not None:
        folder = folder.with_name(f"voice-{label}-{key}")
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"graph")
    record = cache.new_record("voice", [source], {})
    for name, value in changes.items():
        record[name.replace("_", " ")] = value
    cache.write_record(folder, record)
    return folder


def test_superseded_folders_are_pruned_and_no_other(tmp_path: Path) -> None:
    current = _fake_folder(tmp_path, "current")
    old_runtime = _fake_folder(
        tmp_path, "old", versions={**cache.current_versions(), "onnxruntime": "1.0.0"}
    )
    old_check = _fake_folder(tmp_path, "check", key="0123456789abcdef")  # other key parts
    gone_here = _fake_folder(tmp_path, "gone", made_from=[{"path": str(tmp_path / "nothing")}])
    copied = _fake_folder(
        tmp_path,
        "copied",
        made_from=[{"path": "/elsewhere/synthesizer.onnx"}],
        host="a-larger-machine",
    )
    other_machine = _fake_folder(
        tmp_path,
        "arm",
        versions={**cache.current_versions(), "onnxruntime": "1.0.0"},
        machine={"architecture": "other", "cpu features": ""},
    )
    old_layout = [tmp_path / "split-0123456789abcdef", tmp_path / "opt-front-0123456789abcdef"]
    for path in old_layout:
        path.mkdir()
    (tmp_path / "gain-0123456789abcdef.txt").write_text("1.0")
    staging = tmp_path / ".voice-host-1-abc"
    staging.mkdir()

    removed = prune(tmp_path)
    expected = [old_runtime, old_check, gone_here, *old_layout]
    assert sorted(removed) == sorted([*expected, tmp_path / "gain-0123456789abcdef.txt"])
    assert all(path.exists() for path in (current, copied, other_machine, staging))
    assert json.loads((current / RECORD).read_text())["files"] == {"model.onnx": 5}
