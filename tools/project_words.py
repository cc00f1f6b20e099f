"""The project speaks of the software: no tracker issue numbers, work sessions or checkout
paths in what it ships, tests or documents. ``python -m tools.project_words`` lists each line
that names one, in the files git tracks, and exits 1 if there is any (``script/lint``)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
    "|last|previous"
)
WORK_WORDS = re.compile(
    rf"\b(issue|issues) #?[0-9]+\b|\b({ORDINALS}) session\b|\bsession [0-9]+\b"
    r"|/work/(main|wt-|tmp[0-9])",
    re.IGNORECASE,
)
SKIPPED = (":!tests/data", ":!*.png", ":!*.onnx", ":!*.npz", ":!*.wav")
"""Data written by others, and binary files."""


def findings(paths: Iterable[Path]) -> list[str]:
    """``path:line: text`` for each line of ``paths`` that names the work, not the software."""
    found = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue  # binary, or deleted in the working tree
        for number, line in enumerate(text.splitlines(), 1):
            if WORK_WORDS.search(line):
                found.append(f"{path}:{number}: {line.strip()}")
    return found


def tracked_files(root: Path = REPO_ROOT) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *SKIPPED], cwd=root, capture_output=True, check=True
    ).stdout.decode()
    return [root / name for name in listed.split("\0") if name]


def main() -> int:
    found = findings(tracked_files())
    for line in found:
        print(line)
    if found:
        print("error: the lines above name an issue number, a work session or a checkout path",
              file=sys.stderr)  # fmt: skip
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
