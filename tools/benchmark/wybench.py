"""``wyoming-bench`` (PyPI) against our server, streaming and non-streaming."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

MODES = ("streaming", "non_streaming")
_KEPT = ("TTFT (ms)", "Total (ms)", "RTF (x)", "Audio", "metric")


@dataclass
class BenchRun:
    mode: str
    command: list[str]
    returncode: int | None = None
    lines: list[str] = field(default_factory=list)
    """The lines of its report for this mode: header, TTFT, total, RTF, audio."""
    output: str = ""
    error: str = ""


def executable() -> str | None:
    beside = Path(sys.executable).with_name("wyoming-bench")
    return str(beside) if beside.is_file() else shutil.which("wyoming-bench")


def _report_lines(output: str, mode: str) -> list[str]:
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(f"[{mode}] ok="):
            block = [line]
            for following in lines[index + 1 : index + 7]:
                if following.strip().startswith(_KEPT):
                    block.append(following)
            return block
    return []


def run(port: int, voice: str, text: str, rounds: int, timeout: float = 1800) -> list[BenchRun]:
    program = executable()
    runs: list[BenchRun] = []
    for mode in MODES:
        command = [
            program or "wyoming-bench",
            "tts",
            f"127.0.0.1:{port}",
            "--mode",
            mode,
            "--texts",
            text,
            "--config",
            json.dumps({"voice": voice}),
            "--rounds",
            str(rounds),
            "--warmup",
            "1",
            "--timeout",
            "300",
        ]
        result = BenchRun(mode, command)
        runs.append(result)
        if program is None:
            result.error = "wyoming-bench is not installed (pip install wyoming-bench)"
            continue
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            result.error = f"timed out after {timeout:.0f} s"
            continue
        result.returncode = done.returncode
        result.output = done.stdout + done.stderr
        result.lines = _report_lines(done.stdout, mode)
        if done.returncode != 0 or not result.lines:
            result.error = f"exit status {done.returncode}; no report for mode {mode}"
    return runs
