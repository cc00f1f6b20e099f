"""The user dictionary: file format, bad lines, reloading while running, path safety.

pyopenjtalk's dictionary is process-wide: every test that loads words goes through the
``user_dictionary`` fixture, which removes them again (and checks that it did).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from wyoming_hayakoe.errors import HayakoeError
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.g2p import g2p
from wyoming_hayakoe.text.user_dict import (
    Entry,
    UserDictionary,
    mecab_surface,
    parse_entries,
    user_dictionary_path,
)
from wyoming_hayakoe.voices.layout import USER_DICTIONARY_FILE

REPO = Path(__file__).resolve().parents[2]
PROBE = "HayaKoeが玄関で話します。"


def _reading(frontend: TextFrontend, text: str) -> str:
    return "".join(g2p(frontend.normalize(text)).readings)


@pytest.fixture
def user_dictionary(tmp_path: Path) -> Iterator[UserDictionary]:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    before = _reading(TextFrontend(smart_home=True), PROBE)
    dictionary = UserDictionary(user_dictionary_path(data_dir, USER_DICTIONARY_FILE))
    try:
        yield dictionary
    finally:
        dictionary.path.unlink(missing_ok=True)
        dictionary.refresh()
        assert dictionary.surfaces == frozenset()
        assert _reading(TextFrontend(smart_home=True), PROBE) == before, "words left behind"


def _write(path: Path, *lines: str) -> None:
    # A new inode each time, as editors that save by renaming do; mtime alone may not tick.
    partial = path.with_suffix(".tmp")
    partial.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    os.replace(partial, path)


def test_a_word_added_while_running_changes_the_next_request(
    user_dictionary: UserDictionary,
) -> None:
    frontend = TextFrontend(smart_home=True)
    assert not user_dictionary.refresh(), "no file: nothing to load"
    first = frontend.phonemize(PROBE)
    assert "ハヤゴエ" not in _reading(frontend, PROBE)  # the English model says ハヤコエ

    _write(user_dictionary.path, "surface,reading,accent", "HayaKoe,ハヤゴエ,0")
    assert user_dictionary.refresh()  # what the server does before each synthesis
    frontend = frontend.with_keep_words(user_dictionary.surfaces)
    second = frontend.phonemize(PROBE)
    assert second.phone_ids != first.phone_ids
    assert _reading(frontend, PROBE).startswith("ハヤゴエガゲンカン")

    _write(user_dictionary.path, "HayaKoe,ハヤゴエ,0", "玄関,げんかんぐち,1")  # hiragana too
    assert user_dictionary.refresh()
    frontend = frontend.with_keep_words(user_dictionary.surfaces)
    assert _reading(frontend, PROBE).startswith("ハヤゴエガゲンカングチデ")
    assert not user_dictionary.refresh(), "unchanged file: no reload"


def test_surfaces_with_spaces_digits_and_marks(user_dictionary: UserDictionary) -> None:
    # Each must reach MeCab exactly as the dictionary holds it: joined, digits as kanji,
    # letters kept away from the English replacement, marks as OpenJTalk converts them.
    _write(
        user_dictionary.path,
        "Living Room,リビンルーム,1",
        "Wi-Fi,ワイフィー,1",
        "PS5,プレステファイブ,4",
    )
    assert user_dictionary.refresh()
    frontend = TextFrontend(keep_words=user_dictionary.surfaces, smart_home=True)
    reading = _reading(frontend, "Living RoomのWi-FiでPS5を7:30に起動。")
    assert reading == "リビンルームノワイフィーデプレステファイブヲシチジサンジュップンニキドー."


def test_the_accent_reaches_the_tones(user_dictionary: UserDictionary) -> None:
    tones = []
    for accent in (0, 1):
        _write(user_dictionary.path, f"ソノス,ソノス,{accent}")
        assert user_dictionary.refresh()
        frontend = TextFrontend(keep_words=user_dictionary.surfaces, smart_home=True)
        phonemes = frontend.phonemize("ソノス")
        vowels = zip(phonemes.phones, phonemes.tone_ids, strict=True)
        tones.append([tone for phone, tone in vowels if phone in "aeiou"])
    flat, falling = tones
    assert flat == [6, 7, 7] and falling == [7, 6, 6]  # ソノス flat: LHH; accent 1: HLL


def test_a_malformed_line_is_reported_and_skipped(
    user_dictionary: UserDictionary, caplog: pytest.LogCaptureFixture
) -> None:
    user_dictionary.path.write_bytes(
        "# my words\n"
        "surface,reading,accent\n"
        "HayaKoe,ハヤコエ,0\n"
        "only two,fields\n"
        "玄関,ゲンカン,7\n"
        "Sonos,sonos,1\n".encode()
        + b"\xff\xfe,\xe3\x82\xa2,1\n"
        + "Zigbee,ジグビー,one\n\n玄関,ゲンカングチ,1\n".encode()
    )
    with caplog.at_level(logging.WARNING, logger="wyoming_hayakoe.text.user_dict"):
        assert user_dictionary.refresh()
    messages = [r.getMessage() for r in caplog.records]
    for line, reason in [
        (4, "expected 3 fields"),
        (5, "accent 7 is not between 0 and 4"),
        (6, "is not katakana"),
        (7, "not valid UTF-8"),
        (8, "not a whole number"),
    ]:
        assert any(f"line {line}: " in m and reason in m for m in messages), (line, messages)
    assert len(messages) == 5
    assert user_dictionary.surfaces == {"HayaKoe", "玄関"}
    frontend = TextFrontend(keep_words=user_dictionary.surfaces, smart_home=True)
    assert _reading(frontend, PROBE).startswith("ハヤコエガゲンカングチデ")


def test_concurrent_refreshes_and_readings(user_dictionary: UserDictionary) -> None:
    _write(user_dictionary.path, "HayaKoe,ハヤコエ,0")
    with ThreadPoolExecutor(4) as pool:
        assert sorted(pool.map(lambda _: user_dictionary.refresh(), range(4))) == [
            False, False, False, True,
        ]  # fmt: skip
    frontend = TextFrontend(keep_words=user_dictionary.surfaces, smart_home=True)
    old, new = "ハヤコエガゲンカンデハナシマス.", "ハヤコエガゲンカングチデハナシマス."
    _write(user_dictionary.path, "HayaKoe,ハヤコエ,0", "玄関,ゲンカングチ,1")
    with ThreadPoolExecutor(3) as pool:
        readings = [pool.submit(_reading, frontend, PROBE) for _ in range(30)]
        assert user_dictionary.refresh()
        # Each analysis ran whole with the old words or whole with the new ones.
        assert {r.result() for r in readings} <= {old, new}
    assert _reading(frontend, PROBE) == new


def test_compiled_files_go_once_the_words_are_in_effect(
    user_dictionary: UserDictionary, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenJTalk keeps the dictionary it opened: nothing compiled stays on disk, where a
    server killed later would leave it."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    frontend = TextFrontend(smart_home=True)
    for reading in ("ゲンカングチ", "ゲンカンマエ"):
        _write(user_dictionary.path, f"玄関,{reading},1")
        assert user_dictionary.refresh()
        assert f"ガ{reading}デ" in _reading(frontend, PROBE)
        assert list((tmp_path / "tmp").iterdir()) == []


def test_parse_entries_format(caplog: pytest.LogCaptureFixture) -> None:
    entries = parse_entries(
        "\ufeffsurface,reading,accent\n Living Room , りびんぐるーむ , 5\nキャット,キャット,1\n",
        "test",
    )
    assert entries == [
        Entry("Living Room", "リビングルーム", 5, 2),
        Entry("キャット", "キャット", 1, 3),
    ]
    assert [e.morae for e in entries] == [7, 3]
    assert not caplog.records, "the header (after a byte order mark) is no bad line"
    assert mecab_surface("Wi-Fi") == "Ｗｉ−Ｆｉ"  # OpenJTalk's own word has U+2212
    assert mecab_surface("PS5") == "ＰＳ五"  # the normalizer writes digits as kanji first
    assert mecab_surface("Living Room") == "ＬｉｖｉｎｇＲｏｏｍ"


def test_a_repeated_surface_keeps_the_last_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        entries = parse_entries("玄関,ゲンカン,1\n玄関,ゲンカングチ,1\n", "dict.csv")
    assert entries == [Entry("玄関", "ゲンカングチ", 1, 2)]
    assert "dict.csv line 2: '玄関' was already on line 1" in caplog.text


@pytest.mark.parametrize("name", ["../user_dict.csv", "sub/user_dict.csv", "/etc/passwd", ".."])
def test_the_file_must_be_in_the_data_dir(tmp_path: Path, name: str) -> None:
    with pytest.raises(HayakoeError):
        user_dictionary_path(tmp_path, name)
    assert user_dictionary_path(tmp_path, USER_DICTIONARY_FILE) == tmp_path / USER_DICTIONARY_FILE


def test_a_symlink_out_of_the_data_dir_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("HayaKoe,ハヤコエ,0\n", encoding="utf-8")
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    path = user_dictionary_path(data_dir, USER_DICTIONARY_FILE)
    path.symlink_to(outside)
    dictionary = UserDictionary(path)
    with caplog.at_level(logging.ERROR):
        assert not dictionary.refresh()
    assert dictionary.surfaces == frozenset()
    assert "leads out of the data dir" in caplog.text


def test_reading_shows_the_rewriting_and_the_user_dictionary(tmp_path: Path) -> None:
    # In a child process: the dictionary it loads must not stay in this one.
    (tmp_path / USER_DICTIONARY_FILE).write_text("HayaKoe,ハヤコエ,0\n", encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable, "-m", "wyoming_hayakoe.commands.reading", "--data-dir", str(tmp_path),
            "HayaKoeは7:30に45%の音量で話します。",
        ],
        capture_output=True, text=True, check=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    lines = result.stdout.splitlines()
    assert "rewritten: HayaKoeは七時三十分に四十五パーセントの音量で話します。" in lines
    reading = "ハヤコエワシチジサンジュップンニヨンジューゴパーセントノオンリョーデハナシマス."
    assert lines[-1] == reading
