"""Compilation in child processes: two children on a first start, none after; a child that
dies, fails or hangs never stops the server, is reported for what it was (memory, not a bad
file), and harms nothing it does not own."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from tools.engine_audio import float_pieces
from wyoming_hayakoe.compiling import children, staging
from wyoming_hayakoe.engine import Engine, SynthesisParams
from wyoming_hayakoe.errors import MemoryShortError, ModelFileError
from wyoming_hayakoe.inference.calibration import gain_of
from wyoming_hayakoe.memory import MemorySeen

ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
VOICE_DIR = ROOT / "onnx" / "speakers" / "tiny"
TEXT = "エアコンを二十五度に設定しました。"
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
REPO = Path(__file__).resolve().parents[2]


def _audio(engine: Engine) -> np.ndarray:
    voice = engine.voices.load(VOICE_DIR)
    return np.concatenate([c.audio for c in float_pieces(engine, voice, TEXT, QUIET)])


@pytest.fixture(scope="module")
def published_audio() -> np.ndarray:
    """TEXT as the voice's published files say it (no cache: nothing compiled)."""
    return _audio(Engine(ROOT, threads=1))


@pytest.mark.slow  # a first start in a fresh interpreter, then a second
def test_a_first_start_compiles_in_two_children_and_a_second_in_none(tmp_path: Path) -> None:
    # Neither start imports onnx: only children edit or read graphs.
    code = (
        "import logging, sys; from pathlib import Path; from wyoming_hayakoe.engine import Engine;"
        "from tools.engine_audio import pcm_pieces;"
        "logging.basicConfig(level=logging.INFO);"
        f"e = Engine(Path({str(ROOT)!r}), threads=1, cache_dir=Path({str(tmp_path)!r}));"
        f"v = e.voices.load(Path({str(VOICE_DIR)!r})); e.voices.gain(v);"
        "list(pcm_pieces(e, v, 'はい。'));"
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
    compiled = re.findall(r"Compiling (\S+) for this machine \(in child process \d+\)", first)
    assert compiled == ["bert_q8.onnx", "tiny"]
    out, second = start()
    assert out.strip() == "no onnx"
    assert "Compiling" not in second, "a second start compiled again"
    assert [p.name.split("-")[0] for p in sorted(tmp_path.iterdir())] == ["bert", "voice"]
    assert not list(tmp_path.glob(".*")), "a finished start leaves no staging behind"


def test_the_childs_gain_is_the_one_measured_here(tiny_model_cache: Path) -> None:
    engine = Engine(ROOT, threads=1, cache_dir=tiny_model_cache)
    voice = engine.voices.load(VOICE_DIR)
    assert voice.compiled is not None and voice.decoder is not None
    assert list(voice.compiled.glob("gain-*.txt")), "the child measured the gain"
    here = gain_of(
        voice.synthesizer,
        voice.inputs,
        voice.decoder,
        engine._calibration(voice.config, voice.style_vectors, voice.speaker_id),
        voice.sample_rate,
    )
    assert engine.voices.gain(voice) == here
    assert 0.05 < here < 20


class _ChildWatch:
    """Acts on this process's compilation children from a thread: ``act(pid)`` returns True
    once it has done what it does (kill, stop) to the child it was waiting for."""

    def __init__(self, act: Callable[[int], bool]) -> None:
        self.act, self.done, self.seen = act, False, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set() and not self.done:
            for pid in _compilation_children():
                self.seen = pid
                if self.act(pid):
                    self.done = True
                    break
            time.sleep(0.002)

    @contextmanager
    def watching(self) -> Iterator[_ChildWatch]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join()


def _compilation_children() -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != os.getpid():
                continue
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if b"compiling.child" in command:
            found.append(int(stat.parent.name))
    return found


def _staging_of(pid: int, cache: Path) -> Path | None:
    return next(cache.glob(f".*-{staging._host()}-{pid}-*"), None)


def _kill_when(ready: Callable[[int, Path], bool], cache: Path) -> _ChildWatch:
    """SIGKILL the first child for which ``ready(pid, its staging folder)`` holds."""

    def act(pid: int) -> bool:
        folder = _staging_of(pid, cache)
        if folder is None or not ready(pid, folder):
            return False
        os.kill(pid, signal.SIGKILL)
        return True

    return _ChildWatch(act)


def _maps(pid: int, name: str) -> bool:
    try:
        return name in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


# Each condition holds only while its step runs (its files are written, or mapped, then).
KILLED_STEPS = {
    "optimize": lambda pid, folder: (
        folder.name.startswith(".bert") and (folder / "work" / "model-folded.onnx").is_file()
    ),
    "split": lambda pid, folder: (folder / "work" / "exported-front.onnx").is_file(),
    "self-check": lambda pid, folder: _maps(pid, "front.data"),
}


@pytest.mark.slow
@pytest.mark.parametrize("step", KILLED_STEPS)
def test_a_child_killed_for_memory_is_reported_so_and_the_voice_served(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, published_audio: np.ndarray, step: str
) -> None:
    before = {p: p.stat().st_mtime_ns for p in ROOT.rglob("*")}
    caplog.set_level(logging.INFO)
    with _kill_when(KILLED_STEPS[step], tmp_path).watching() as watch:
        engine = Engine(ROOT, threads=1, cache_dir=tmp_path)
        voice = engine.voices.load(VOICE_DIR)
    assert watch.done, "the child finished before it could be killed"
    audio = np.concatenate([c.audio for c in float_pieces(engine, voice, TEXT, QUIET)])
    assert np.allclose(audio, published_audio, atol=1e-4), "the voice is served"
    (warning,) = [m for m in caplog.messages if f"at step '{step}'" in m]
    assert "out-of-memory killer" in warning and "memory" in warning
    assert "more memory" in warning and "python -m wyoming_hayakoe.commands.check" in warning
    assert not [m for m in caplog.messages if "corrupt" in m or "download" in m]
    assert not list(tmp_path.glob(".*")), "the killed child's staging folder is removed"
    assert {p: p.stat().st_mtime_ns for p in ROOT.rglob("*")} == before, "data dir untouched"
    if step == "optimize":
        assert voice.decoder is not None, "the BERT is loaded as published; the voice compiled"
        return
    assert voice.decoder is None, "served from its whole synthesizer"
    # The lack of memory is remembered: the next start serves the same without compiling.
    caplog.clear()
    Engine(ROOT, threads=1, cache_dir=tmp_path).voices.load(VOICE_DIR)
    assert not [m for m in caplog.messages if m.startswith("Compiling")]
    assert [m for m in caplog.messages if "ran out of memory at step" in m]


def test_too_little_memory_even_for_the_published_bert_stops_with_a_message_about_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the memory seen cannot hold is not tried: the start stops, saying memory."""
    full = MemorySeen(
        limit_mb=300, limit_file="cgroup v1 memory.limit_in_bytes", current_mb=300, peak_mb=300
    )
    monkeypatch.setattr(children, "memory_seen", lambda: full)
    with (
        _kill_when(KILLED_STEPS["optimize"], tmp_path).watching() as watch,
        pytest.raises(MemoryShortError) as raised,
    ):
        Engine(ROOT, threads=1, cache_dir=tmp_path).open_bert()
    assert watch.done
    message = str(raised.value)
    assert "Not enough memory" in message and "memory limit 300 MB" in message
    assert "corrupt" not in message and "download" not in message


def test_a_failed_childs_cleanup_spares_a_live_staging_folder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        other = tmp_path / f".voice-{staging._host()}-{live.pid}-live01"
        other.mkdir()
        (other / "front.onnx").write_bytes(b"being written by another server")
        with _kill_when(KILLED_STEPS["optimize"], tmp_path).watching() as watch:
            Engine(ROOT, threads=1, cache_dir=tmp_path).open_bert()
        assert watch.done
        assert (other / "front.onnx").read_bytes() == b"being written by another server"
        assert _staging_of(watch.seen, tmp_path) is None, "the killed child's folder is gone"
    finally:
        live.kill()
        live.wait()


@pytest.mark.slow  # waits for the timeout, then loads the voice as published
def test_a_hung_child_times_out_and_releases_the_load(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    published_audio: np.ndarray,
) -> None:
    engine = Engine(ROOT, threads=1, cache_dir=tmp_path)
    engine.open_bert()  # the BERT compiles as usual
    monkeypatch.setattr(children, "STEP_TIMEOUT_SECONDS", 3.0)

    def stop(pid: int) -> bool:
        os.kill(pid, signal.SIGSTOP)  # a child that never gets further
        return True

    caplog.set_level(logging.WARNING)
    with _ChildWatch(stop).watching() as watch:
        voice = engine.voices.load(VOICE_DIR)
    assert watch.done
    assert voice.decoder is None
    audio = np.concatenate([c.audio for c in float_pieces(engine, voice, TEXT, QUIET)])
    assert np.allclose(audio, published_audio, atol=1e-4)
    (warning,) = [m for m in caplog.messages if "Compiling voice tiny" in m]
    assert "no progress and no CPU used for 3 s" in warning and "memory" not in warning
    assert not Path(f"/proc/{watch.seen}").exists(), "the hung child is gone"
    # The voice's load lock is free again: another voice of the same model loads at once.
    loaded: list[object] = []
    other = threading.Thread(target=lambda: loaded.append(engine.voices.load(VOICE_DIR, "x")))
    other.start()
    other.join(timeout=30)
    assert loaded, "the load lock was not released"


def test_a_published_file_that_cannot_be_read_is_named(
    tmp_path: Path, tiny_model_cache: Path
) -> None:
    voice_dir = tmp_path / "data" / "onnx" / "speakers" / "broken"
    voice_dir.mkdir(parents=True)
    for name in ("config.json", "style_vectors.npy"):
        (voice_dir / name).write_bytes((VOICE_DIR / name).read_bytes())
    (voice_dir / "synthesizer.onnx").write_bytes(
        (VOICE_DIR / "synthesizer.onnx").read_bytes()[:5000]
    )
    engine = Engine(ROOT, threads=1, cache_dir=tiny_model_cache)  # the BERT compiled already
    with pytest.raises(ModelFileError, match="truncated or corrupt") as raised:
        engine.voices.load(voice_dir)
    assert "synthesizer.onnx" in str(raised.value)
    assert not list(tiny_model_cache.glob(".*"))
