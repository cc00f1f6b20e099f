"""The reference's side: ``hayakoe`` 1.3.1 in a worker process (see reference_worker)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tools.benchmark.ours import Sample
from tools.benchmark.procinfo import Memory
from tools.benchmark.slow_board import command_prefix

REPO = Path(__file__).resolve().parents[2]


class Reference:
    def __init__(
        self, root: Path, voices: list[str], threads: int, cache_dir: Path, log_path: Path
    ) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        env["PYTHONUNBUFFERED"] = "1"
        command = [
            *command_prefix(),
            sys.executable,
            "-m",
            "tools.benchmark.reference_worker",
            "--root",
            str(root),
            "--threads",
            str(threads),
            "--cache-dir",
            str(cache_dir),
        ]
        for voice in voices:
            command += ["--voice", voice]
        self.voices = voices
        self._log = log_path.open("ab")
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.ready_s: float | None = None
        self.ready_info: dict[str, Any] = {}
        self.log_path = log_path

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _answer(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            line = None
        if line is None:
            tail = self.log_path.read_text(errors="replace")[-3000:]
            self.stop()
            raise RuntimeError(f"reference worker gave no answer:\n{tail}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"reference worker: {answer['error']}")
        return answer

    def wait_ready(self, timeout: float = 900) -> float:
        """Seconds from the process start to the end of ``prepare()``."""
        self.ready_info = self._answer(timeout)
        self.ready_s = time.perf_counter() - self.started
        return self.ready_s

    def _call(self, op: str, **fields: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.process.stdin.flush()
        return self._answer(900)

    def stream_first(self, text: str, voice: str | None = None) -> float:
        return float(self._call("stream_first", text=text, voice=voice)["first_s"])

    def stream(self, text: str, voice: str | None = None) -> dict[str, float]:
        """The whole ``stream()``: first chunk, end of listening, longest silence (seconds)."""
        return self._call("stream", text=text, voice=voice)

    def generate(self, text: str, voice: str | None = None) -> Sample:
        answer = self._call("generate", text=text, voice=voice)
        return Sample(first_s=float("nan"), total_s=answer["total_s"], audio_s=answer["audio_s"])

    def memory(self) -> Memory:
        answer = self._call("memory")
        return Memory(answer["peak_mb"], answer["current_mb"])

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.process.stdin.flush()
                self.process.wait(20)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(10)
        self._log.close()
