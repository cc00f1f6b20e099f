"""``python -m wyoming_hayakoe.commands.check``: it finds every voice the server serves (a HayaKoe
folder, an AIVMX file, a Style-Bert-VITS2 export) and refuses a bad ``--threads`` at once.
What it prints about a voice's self-check: test_self_check.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fresh_python import run_check
from sbv2_fixture_files import AIVMX, SBV2_DIR

from tools.server_process import TINY_VOICE_ROOT


@pytest.mark.slow
@pytest.mark.parametrize(
    ("voice", "copied_to", "file_shown"),
    [
        ("test-voice-1", "aivmx", "test-voice.aivmx"),
        ("tiny-sbv2-sora", "sbv2", "tiny-sbv2"),
    ],
)
def test_the_check_finds_the_voices_the_server_serves(
    tmp_path: Path, voice: str, copied_to: str, file_shown: str
) -> None:
    data = tmp_path / "data"
    (data / copied_to).mkdir(parents=True)
    if copied_to == "aivmx":
        shutil.copy(AIVMX, data / "aivmx" / AIVMX.name)
    else:
        shutil.copytree(SBV2_DIR, data / "sbv2" / SBV2_DIR.name)
    # The shared BERT in another data dir, as the server finds it: its calibration inputs
    # check the voice.
    bert = ("--data-dir", str(TINY_VOICE_ROOT))
    done = run_check("--threads", "1", "--data-dir", str(data), *bert, "--voice", voice)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"Voice {voice} (") and file_shown in first, done.stdout
    assert "Passed: requests use the compiled models." in done.stdout
    assert (data / "cache").is_dir()  # compiled where the server would keep them


def test_an_unknown_voice_is_named_with_the_voices_there_are(tmp_path: Path) -> None:
    shutil.copytree(SBV2_DIR, tmp_path / "sbv2" / SBV2_DIR.name)
    done = run_check("--data-dir", str(tmp_path), "--voice", "nobody")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    assert "nobody" in done.stderr and "tiny-sbv2-aoi" in done.stderr
    assert not (tmp_path / "cache").exists()  # nothing prepared, nothing written


def test_an_incomplete_folder_is_named_with_what_it_lacks(tmp_path: Path) -> None:
    folder = tmp_path / "onnx" / "speakers" / "half"
    shutil.copytree(TINY_VOICE_ROOT / "onnx" / "speakers" / "tiny", folder)
    (folder / "style_vectors.npy").unlink()
    done = run_check("--data-dir", str(tmp_path), "--voice", "half")
    assert done.returncode == 1
    assert f"{folder} has no style_vectors.npy" in done.stderr


@pytest.mark.parametrize("threads", ["0", "-2", "many"])
def test_threads_below_one_are_refused_in_one_line(tmp_path: Path, threads: str) -> None:
    cache = tmp_path / "cache"
    done = run_check(
        *("--data-dir", str(TINY_VOICE_ROOT), "--voice", "tiny", "--cache-dir", str(cache)),
        *("--threads", threads),
    )
    assert done.returncode == 2, done.stdout
    assert done.stderr.count("\n") == 1, done.stderr
    assert "--threads" in done.stderr and threads in done.stderr
    assert "Traceback" not in done.stderr
    assert not cache.exists()  # refused before anything is compiled
