"""Staging folders: a preparation killed half-way leaves one; a later start removes it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wyoming_hayakoe.runtime import staging
from wyoming_hayakoe.runtime.staging import new_staging, publish, remove_abandoned


def _ended_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _folder(cache: Path, name: str) -> Path:
    folder = cache / name
    folder.mkdir()
    (folder / "decoder.onnx").write_bytes(b"half-written")
    return folder


def test_a_staging_folder_names_its_host_and_process_and_is_published(tmp_path: Path) -> None:
    folder = new_staging(tmp_path, "split")
    assert folder.parent == tmp_path and folder.is_dir()
    assert folder.name.startswith(f".split-{staging._host()}-{os.getpid()}-")
    (folder / "names.txt").write_text("x\n")
    publish(folder, tmp_path / "split-0123456789abcdef")
    assert (tmp_path / "split-0123456789abcdef" / "names.txt").read_text() == "x\n"
    assert not folder.exists()
    with pytest.raises(ValueError):
        new_staging(tmp_path, "anything")


def test_only_folders_of_ended_processes_on_this_host_are_removed(tmp_path: Path) -> None:
    host = staging._host()
    ended = _ended_pid()
    abandoned = [
        _folder(tmp_path, f".{kind}-{host}-{ended}-abc123") for kind in ("split", "calibration")
    ]
    kept = [
        _folder(tmp_path, f".opt-{host}-{os.getpid()}-live01"),  # a running process
        _folder(tmp_path, f".stages-other-host-{ended}-x1"),  # made on another host
        _folder(tmp_path, ".split-old"),  # no owner in its name
        _folder(tmp_path, "split-0123456789abcdef"),  # a published model
    ]
    (tmp_path / f".gain.{ended}.tmp").write_text("1.0")  # not a folder
    removed = remove_abandoned(tmp_path)
    assert sorted(removed) == sorted(abandoned)
    assert not any(folder.exists() for folder in abandoned)
    assert all((folder / "decoder.onnx").is_file() for folder in kept)
    assert remove_abandoned(tmp_path) == []
    assert remove_abandoned(tmp_path / "missing") == []
