"""Progress of long work: a slow download and a compile log their steps at a sane rate and
report into the service's board (wyoming_hayakoe/progress.py), which the web page shows."""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path

import pytest
from fake_repo import write_fake_voice
from hf_server import HFTestServer

from wyoming_hayakoe.compiling import children
from wyoming_hayakoe.engine import Engine
from wyoming_hayakoe.progress import (
    COMPILE,
    DOWNLOAD,
    ProgressBoard,
    WorkProgress,
    format_duration,
    reporting_to,
)
from wyoming_hayakoe.voices.remote_file import DownloadOptions
from wyoming_hayakoe.voices.store import VoiceStore

VOICE = "jvnv-F1-jp"
TINY_ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
_DOWNLOADING = re.compile(
    r"^Downloading voice jvnv-F1-jp, file (\d+) of (\d+) \((\S+)\): (\d+)% "
    r"\(([\d.]+) of ([\d.]+) MB\) at [\d.]+ MB/s, (.+) left$"
)
_DOWNLOADED = re.compile(
    r"^Downloaded voice jvnv-F1-jp, file (\d+) of (\d+) \((\S+)\): [\d.]+ MB in .+ \([\d.]+ MB/s\)$"
)


def _watch(board: ProgressBoard, done: threading.Event) -> list[WorkProgress]:
    """Every snapshot of ``board`` until ``done`` is set, as they change."""
    seen: list[WorkProgress] = []
    while not done.wait(0.005):
        for work in board.snapshot():
            if not seen or seen[-1] != work:
                seen.append(work)
    return seen


def test_a_slow_voice_download_logs_each_file_and_shows_on_the_board(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    files = write_fake_voice(tmp_path / "repo", VOICE, model_size=300_000)
    options = DownloadOptions(timeout=5.0, chunk_size=16 * 1024, progress_interval=0.0)
    board = ProgressBoard()
    caplog.set_level(logging.INFO, logger="wyoming_hayakoe.voices")
    with HFTestServer(tmp_path / "repo", throttle=0.002) as hub:
        store = VoiceStore([tmp_path / "data"], endpoint=hub.endpoint, options=options)
        done = threading.Event()

        def download() -> None:
            with reporting_to(board):
                store.ensure_voice(VOICE)
            done.set()

        worker = threading.Thread(target=download)
        worker.start()
        seen = _watch(board, done)
        worker.join()
    assert board.snapshot() == [], "a finished download leaves the board"

    messages = caplog.messages
    during = [m for m in map(_DOWNLOADING.match, messages) if m]
    ended = [m for m in map(_DOWNLOADED.match, messages) if m]
    steps = {int(m.group(2)) for m in during + ended}
    assert len(steps) == 1, "every line counts the same files"
    (count,) = steps
    names = [m.group(3) for m in ended]
    assert [int(m.group(1)) for m in ended] == sorted(int(m.group(1)) for m in ended)
    assert {Path(name).name for name in names} == {Path(p).name for p in files}
    assert int(ended[-1].group(1)) == count
    assert all(0 <= int(m.group(4)) <= 100 for m in during)
    assert all(float(m.group(5)) <= float(m.group(6)) for m in during)
    assert any(int(m.group(4)) < 100 for m in during), "no line from the middle of a file"

    assert seen, "the board never showed the download"
    assert {w.kind for w in seen} == {DOWNLOAD} and {w.what for w in seen} == {f"voice {VOICE}"}
    # A model's external weights are tried first (these stand-ins have none: a 404).
    assert all(w.step in names or w.step.removesuffix(".data") in names for w in seen)
    assert all(w.steps == count and 1 <= (w.step_number or 0) <= count for w in seen)
    counted = [w for w in seen if w.done_bytes is not None and w.total_bytes]
    assert counted and all(0 <= (w.done_bytes or 0) <= (w.total_bytes or 0) for w in counted)
    fractions = [w.fraction for w in counted]
    assert all(f is not None and 0.0 <= f <= 1.0 for f in fractions)
    assert any(w.eta_seconds is not None for w in counted)
    shown = counted[0].as_json()
    assert shown["kind"] == "download" and shown["percent"] is not None


def test_a_compile_logs_its_steps_with_their_count_and_that_it_is_still_working(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every step and every poll may log here; the server's rate is one line per 3 s.
    monkeypatch.setattr(children, "LOG_INTERVAL_SECONDS", 0.0)
    monkeypatch.setattr(children, "STILL_SECONDS", 0.0)
    caplog.set_level(logging.INFO, logger="wyoming_hayakoe.compiling")
    board = ProgressBoard()
    done = threading.Event()
    seen: list[WorkProgress] = []
    watcher = threading.Thread(target=lambda: seen.extend(_watch(board, done)))
    watcher.start()
    try:
        with reporting_to(board):
            Engine(TINY_ROOT, threads=1, cache_dir=tmp_path).open_bert()
    finally:
        done.set()
        watcher.join()

    step_line = re.compile(r"^Compiling bert_q8\.onnx: step (\d+) of (\d+), (.+)$")
    matches = [m for m in map(step_line.match, caplog.messages) if m]
    steps = [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in matches]
    assert steps == [
        (1, 3, "weights apart"),
        (2, 3, "optimize"),
        (3, 3, "vocabulary check"),
    ]
    still_line = re.compile(
        r"^Compiling bert_q8\.onnx: still compiling (weights apart|optimize|vocabulary check) "
        r"\(\d+ s\)$"
    )
    still = [m for m in caplog.messages if still_line.match(m)]
    assert still, "a running step is never reported as still working"
    assert any(m.startswith("Compiled bert_q8.onnx in ") for m in caplog.messages)
    assert seen and {w.kind for w in seen} == {COMPILE}
    assert {w.step for w in seen if w.step} <= {"weights apart", "optimize", "vocabulary check"}
    assert all(w.steps == 3 for w in seen if w.step)
    assert board.snapshot() == []


def test_the_compile_log_keeps_its_rate(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(children, "LOG_INTERVAL_SECONDS", 3600.0)
    caplog.set_level(logging.INFO, logger="wyoming_hayakoe.compiling")
    Engine(TINY_ROOT, threads=1, cache_dir=tmp_path).open_bert()
    lines = [m for m in caplog.messages if m.startswith("Compil")]
    # The start, the first step, the end: the steps after it came sooner than the interval.
    assert len(lines) == 3, lines
    assert "for this machine" in lines[0] and lines[1].endswith("step 1 of 3, weights apart")
    assert lines[2].startswith("Compiled bert_q8.onnx in ")


def test_durations_read_well_in_a_log_line() -> None:
    assert [format_duration(s) for s in (0, 44.6, 200, 3600 + 5 * 60 + 9)] == [
        "0 s",
        "45 s",
        "3 min 20 s",
        "1 h 05 min",
    ]


def test_the_fraction_counts_the_steps_done_and_the_bytes_of_the_current_one() -> None:
    work = WorkProgress(DOWNLOAD, "voice x", "b.onnx", 2, 4, done_bytes=50, total_bytes=100)
    assert work.fraction == pytest.approx((1 + 0.5) / 4)
    assert WorkProgress(COMPILE, "tiny", "split", 3, None).fraction is None
    assert WorkProgress(COMPILE, "tiny", "split", 3, 6).fraction == pytest.approx(2 / 6)
