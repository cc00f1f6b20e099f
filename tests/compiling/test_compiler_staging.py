"""Staging folders: a compilation killed half-way leaves one; the server removes it as soon as
its child has died, a later start removes those of every ended process, and no folder of a
live process is ever touched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wyoming_hayakoe.compiling import staging
from wyoming_hayakoe.compiling.staging import (
    new_staging,
    publish,
    remove_abandoned,
    remove_left_by,
)


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
    folder = new_staging(tmp_path, "voice")
    assert folder.parent == tmp_path and folder.is_dir()
    assert folder.name.startswith(f".voice-{staging._host()}-{os.getpid()}-")
    (folder / "names.txt").write_text("x\n")
    target = tmp_path / "voice-tiny-0123456789abcdef"
    publish(folder, target)
    assert (target / "names.txt").read_text() == "x\n"
    assert not folder.exists()
    # A copy found damaged is replaced as a whole.
    again = new_staging(tmp_path, "voice")
    (again / "front.onnx").write_text("new\n")
    publish(again, target)
    assert sorted(p.name for p in target.iterdir()) == ["front.onnx"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]
    with pytest.raises(ValueError):
        new_staging(tmp_path, "anything")


def test_only_folders_of_ended_processes_on_this_host_are_removed(tmp_path: Path) -> None:
    host = staging._host()
    ended = _ended_pid()
    abandoned = [_folder(tmp_path, f".{kind}-{host}-{ended}-abc123") for kind in ("voice", "job")]
    kept = [
        _folder(tmp_path, f".bert-{host}-{os.getpid()}-live01"),  # a running process
        _folder(tmp_path, f".voice-other-host-{ended}-x1"),  # made on another host
        _folder(tmp_path, ".voice-old"),  # no owner in its name
        _folder(tmp_path, "voice-tiny-0123456789abcdef"),  # a published model
    ]
    (tmp_path / f".gain.{ended}.tmp").write_text("1.0")  # not a folder
    removed = remove_abandoned(tmp_path)
    assert sorted(removed) == sorted(abandoned)
    assert not any(folder.exists() for folder in abandoned)
    assert all((folder / "decoder.onnx").is_file() for folder in kept)
    assert remove_abandoned(tmp_path) == []
    assert remove_abandoned(tmp_path / "missing") == []


def test_a_dead_childs_folders_go_and_no_other(tmp_path: Path) -> None:
    host = staging._host()
    dead = _ended_pid()
    other_dead = _ended_pid()
    left = [
        _folder(tmp_path, f".voice-{host}-{dead}-a1"),
        _folder(tmp_path, f".job-{host}-{dead}-b2"),
    ]
    kept = [
        _folder(tmp_path, f".voice-{host}-{os.getpid()}-live01"),  # this live server's job
        _folder(tmp_path, f".voice-{host}-{other_dead}-c3"),  # not this child's: a start's job
        _folder(tmp_path, f".voice-other-host-{dead}-d4"),  # the same pid on another host
    ]
    assert sorted(remove_left_by(tmp_path, dead)) == sorted(left)
    assert all(folder.is_dir() for folder in kept)
