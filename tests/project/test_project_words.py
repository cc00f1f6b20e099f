"""script/lint's check that the project speaks of the software (tools/project_words.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.project_words import findings, tracked_files

NUMBER = "4" + "7"  # written apart, so that this file passes the check it tests


@pytest.mark.parametrize(
    "line",
    [
        f"# fixed for issue {NUMBER}: the decoder",
        f"def test_issue_{NUMBER}() -> None:  # see Issues #{NUMBER}",
        "# measured in the previous" + " session",
        "# session " + NUMBER + "'s figures",
        "# see /work/" + "main/BENCHMARKS.md",
    ],
)
def test_a_test_file_naming_the_work_is_refused(tmp_path: Path, line: str) -> None:
    test_file = tmp_path / "test_decoder.py"
    test_file.write_text(f'"""The decoder."""\n\n{line}\n', encoding="utf-8")
    assert findings([test_file]) == [f"{test_file}:3: {line}"]


def test_words_about_the_software_pass(tmp_path: Path) -> None:
    text = "# an issue with 16-bit sums; the session option of ONNX Runtime; 2 sessions\n"
    page = tmp_path / "notes.md"
    page.write_text(text, encoding="utf-8")
    assert findings([page]) == []


def test_the_tree_passes() -> None:
    files = tracked_files()
    assert any(path.name == "test_project_words.py" for path in files)
    assert findings(files) == []
