"""The package in a fresh interpreter, as a user starts it: the check command, and a few
lines run to see which modules they import."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable

from tools.server_process import REPO_ROOT


def run_check(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m wyoming_hayakoe.commands.check ARGS`` from the repository, bare environment."""
    return subprocess.run(
        [sys.executable, "-m", "wyoming_hayakoe.commands.check", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300,
        check=False,
    )


def modules_imported(code: str, watched: Iterable[str]) -> set[str]:
    """Which of ``watched`` a fresh interpreter holds after running ``code`` (which must
    succeed: its error fails the test)."""
    probe = (
        f"{code}\nimport sys\n"
        f"print(' '.join(sorted(set({sorted(watched)!r}) & set(sys.modules))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.splitlines()[-1].split()) if done.stdout.strip() else set()
