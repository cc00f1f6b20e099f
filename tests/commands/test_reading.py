"""``python -m wyoming_hayakoe.commands.reading``: normalized text, token ids, reading, JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from web_utils import forget_user_words

from wyoming_hayakoe.commands.reading import main
from wyoming_hayakoe.text.frontend import TextFrontend

REPO = Path(__file__).resolve().parents[2]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def test_last_line_is_the_katakana_reading(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, lines, _ = _run(capsys, "--data-dir", str(tmp_path), "こんにちは、世界。")
    assert code == 0
    assert lines == ["normalized: こんにちは,世界.", "コンニチワ,セカイ."]


@pytest.mark.parametrize(
    "text",
    ["今日は良い天気ですね！", "Wi-Fiは7:30に再起動します。", "えっ……本当？", "ἀです", ""],
)
def test_reading_matches_the_reference(
    text: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    hayakoe_reference: Callable[[str], Any],
) -> None:
    # The reference-compatible front-end reads the smart-home layer's output.
    rewritten = TextFrontend(smart_home=True).rewrite(text)
    expected = hayakoe_reference(rewritten)
    code, lines, _ = _run(capsys, "--data-dir", str(tmp_path), text)
    assert code == 0
    if rewritten != text:
        assert lines[0] == f"rewritten: {rewritten}"
    assert f"normalized: {expected.normalized}" in lines
    assert lines[-1] == expected.reading


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "CO2は850ppmです。",
            "シーオーツーは八百五十PPMです。 → シーオーツーワハッピャクゴジューピーピーエムデス.",
        ),
        ("風速5 m/s", "風速五メートル → フーソクゴメートル"),
        ("こんにちは", "こんにちは → コンニチワ"),
    ],
)
def test_brief_is_one_line(
    text: str, line: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, lines, _ = _run(capsys, "--brief", "--data-dir", str(tmp_path), text)
    assert code == 0
    assert lines == [line]


def test_each_rewritten_word_is_shown_with_its_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "user_dict.csv").write_text(
        "surface,reading,accent\n# a comment\nHayaKoe,ハヤコエ,0\n", encoding="utf-8"
    )
    text = "HayaKoeは7:30に45%の音量で、50%OFFです。"
    try:
        code, lines, _ = _run(capsys, "--data-dir", str(tmp_path), text)
        json_code, json_lines, _ = _run(capsys, "--json", "--data-dir", str(tmp_path), text)
    finally:
        forget_user_words(tmp_path / "user_dict.csv")  # pyopenjtalk's words are process-wide
    assert code == json_code == 0
    assert lines[1:6] == [
        "rewritten: HayaKoeは七時三十分に四十五パーセントの音量で、五十パーセントOFFです。",
        "  HayaKoe  [user dictionary line 3]",
        "  7:30 → 七時三十分  [time]",
        "  45% → 四十五パーセント  [unit: %]",
        "  50% → 五十パーセント  [unit: %]",
    ]
    rewrites = json.loads(json_lines[0])["rewrites"]
    assert {"from": "45%", "to": "四十五パーセント", "rules": [
        {"kind": "unit", "detail": "%", "line": 0, "label": "unit: %"}
    ]} in rewrites  # fmt: skip


def test_json_holds_the_front_end_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, plain_frontend: TextFrontend
) -> None:
    text = "リビングの電気を消しました。"
    code, lines, _ = _run(capsys, "--json", "--data-dir", str(tmp_path), text)
    assert code == 0 and len(lines) == 1
    report = json.loads(lines[0])
    phonemes = plain_frontend.phonemize(text)
    [sentence] = report["sentences"]
    for field in ("normalized", "phones", "phone_ids", "tone_ids", "language_ids", "word2ph"):
        assert sentence[field] == getattr(phonemes, field), field
    assert report["normalized"] == phonemes.normalized
    assert "token_ids" not in sentence


def test_token_ids_with_a_tokenizer(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    bert_tokenizer_dir: Path,
    transformers_tokenizer: Any,
) -> None:
    text = "おはよう、みんな！"
    code, lines, _ = _run(capsys, "--json", "--tokenizer-dir", str(bert_tokenizer_dir), text)
    assert code == 0
    [sentence] = json.loads(lines[0])["sentences"]
    assert sentence["token_ids"] == transformers_tokenizer(sentence["bert_text"])["input_ids"]

    # Found under --data-dir too, where the server keeps it.
    tokenizer = tmp_path / "bert" / "tokenizer"
    tokenizer.mkdir(parents=True)
    shutil.copy(bert_tokenizer_dir / "vocab.txt", tokenizer / "vocab.txt")
    code, lines, _ = _run(capsys, "--data-dir", str(tmp_path), text)
    assert code == 0 and len(lines) == 3
    assert lines[1] == "token ids: " + " ".join(map(str, sentence["token_ids"]))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "required: text"),
        (["--tokenizer-dir", "/nonexistent/tokenizer", "x"], "no vocab.txt in"),
        (["--bogus", "x"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_arguments_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_runs_as_a_module(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "wyoming_hayakoe.commands.reading",
            "--data-dir",
            str(tmp_path),
            "はい",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.stdout.splitlines()[-1] == "ハイ"
