"""``script/benchmark --dev-tools``: each command timed from the checkout, with the summary a
test run prints, a failing one said to have failed, in its own topic of the results file."""

from __future__ import annotations

from pathlib import Path

from tools.benchmark import cli, sections


def test_each_command_is_timed_with_its_summary_and_a_failure_is_said(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    sections.write_topic(out, "speed", "## Speed\n\nkept")
    passing = "echo '========= 12 passed, 1 skipped in 0.50s (0:00:00) ========='"
    code = cli.main(["--dev-tools", passing, "exit 3", "--out", str(out)])
    assert code == 1  # one command failed
    text = out.read_text(encoding="utf-8")
    assert sections.topics(text) == ["speed", "dev-tools"] and "kept" in text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert rows[0].startswith(f"| `{passing}` | 12 passed, 1 skipped in 0.50s (0:00:00) | ")
    assert rows[1].startswith("| `exit 3` | FAILED (exit 3) | ")
    assert f"## {sections.TITLES['dev-tools']}" in text
