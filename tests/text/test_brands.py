"""Brands of Japanese smart homes (text/data/brands.tsv), read as their makers say them.

Each entry is read, through the real front-end, as its katakana and as one accent phrase;
names that are also ordinary words are read as the brand only where the text shows a device;
a name of several words is read whole, before its words (``Fire TV Stick``, not ステッキ).
``tests/data/products_corpus.tsv`` holds announcements naming such products, written apart
from the list, their numbers spelled by ``tools/kana_readings.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
from kana_utils import assert_reads, corpus_ids, corpus_rows, reading_phonemes, spoken_phonemes

from wyoming_hayakoe.text.accent import accent_phrases
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.kana import is_katakana
from wyoming_hayakoe.text.mecab_dictionary import make_entry, mecab_rows
from wyoming_hayakoe.text.smarthome.brands import (
    BRANDS_FILE,
    BrandListError,
    all_brands,
    brand_key,
    lexicon,
    load_brands,
)
from wyoming_hayakoe.text.smarthome.trace import recording

BRANDS = all_brands()
DEVICE_WORDS = [b for b in BRANDS if b.context == "device"]
PRODUCTS = [b for b in BRANDS if re.search(r"[\s\-]", b.name)]
"""Names of several words (Fire TV Stick, Mitsubishi Electric, TP-Link)."""
PRODUCTS_CORPUS = corpus_rows("products_corpus.tsv")
_SEPARATORS = re.compile("[・ 　]")


@pytest.fixture(scope="module")
def smart() -> TextFrontend:
    return TextFrontend(smart_home=True)


def _spoken(frontend: TextFrontend, text: str) -> list[str]:
    return spoken_phonemes(frontend, text)


def _brand_rules(frontend: TextFrontend, text: str) -> list[str]:
    with recording(text) as record:
        frontend.rewrite(text)
    return [str(rule) for piece in record.result() for rule in piece.rules if rule.kind == "brand"]


def test_the_list_covers_the_japanese_smart_home() -> None:
    assert len(BRANDS) >= 150
    assert set(Counter(b.category for b in BRANDS)) >= {
        "remote", "lock", "light", "cleaner", "speaker", "appliance", "energy", "network",
        "camera", "streaming",
    }  # fmt: skip
    assert len({brand_key(b.name) for b in BRANDS}) == len(BRANDS), "a name twice"
    for brand in BRANDS:
        assert brand.source.startswith(("https://", "http://")), brand
        assert is_katakana(brand.reading), brand
        written = _SEPARATORS.sub("", brand.japanese)
        if all(is_katakana(c) for c in written):  # written in katakana: said as written
            assert brand.reading == written, brand
    assert {b.name for b in DEVICE_WORDS} >= {"Ring", "Nest", "Echo", "Hue"}


@pytest.mark.parametrize("brand", BRANDS, ids=[b.name for b in BRANDS])
def test_each_brand_is_read_as_its_katakana_in_one_phrase(brand, smart: TextFrontend) -> None:  # type: ignore[no-untyped-def]
    text = f"{brand.name}の電源を入れました。"
    spoken = _spoken(smart, text)
    expected = reading_phonemes(brand.reading + "ノデンゲンヲイレマシタ.")
    assert spoken == expected, f"{text!r} became {smart.rewrite(text)!r}"
    first = accent_phrases(smart.normalize(text))[0]
    assert "".join(m.kana for m in first.morae) == brand.reading + "ノ", (
        "one word, one accent phrase"
    )
    if brand.accent:
        assert first.nucleus == int(brand.accent)


@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("NatureRemoで", "ネイチャーリモデ"),
        ("nature remoで", "ネイチャーリモデ"),
        ("Nature-Remoで", "ネイチャーリモデ"),
        ("NATURE REMO 3で", "ネイチャーリモサンデ"),
        ("DeLonghiで", "デロンギデ"),
        ("De’Longhiで", "デロンギデ"),
        ("I-O DATAのNAS", "アイオーデータノナス"),
        ("IODATAの", "アイオーデータノ"),
    ],
)
def test_a_name_is_found_however_it_is_spaced(text: str, reading: str, smart: TextFrontend) -> None:
    assert _spoken(smart, text) == reading_phonemes(reading)


@pytest.mark.parametrize("brand", DEVICE_WORDS, ids=[b.name for b in DEVICE_WORDS])
def test_an_ordinary_word_is_the_brand_only_where_a_device_is_meant(  # type: ignore[no-untyped-def]
    brand, smart: TextFrontend
) -> None:
    label = f"brand: {brand.name}"
    for device in (f"{brand.name}が反応しました", f"玄関の{brand.name}", f"寝室 {brand.name}"):
        assert _brand_rules(smart, device) == [label], device
    for word in (f"The {brand.name} is here", f"{brand.name} and more"):
        assert _brand_rules(smart, word) == [], word


def test_the_brand_reading_differs_where_the_word_is_ordinary(smart: TextFrontend) -> None:
    assert _spoken(smart, "Natureのアプリ") == reading_phonemes("ネイチャーノアプリ")
    assert "ネイチャー" not in smart.rewrite("Mother Nature")


def test_a_user_dictionary_word_wins_over_a_brand() -> None:
    frontend = TextFrontend(keep_words=frozenset({"Nature Remo"}), smart_home=True)
    assert frontend.rewrite("Nature Remoで") == "NatureRemoで"
    surfaces = [row[0] for row in mecab_rows((make_entry("ソノス", "ソノス", "0"),))]
    assert surfaces.count("ソノス") == 1  # the user's row, not the lexicon's too


def test_the_lexicon_holds_only_what_openjtalk_would_cut() -> None:
    rows = mecab_rows(())
    assert [row[0] for row in rows] == [unicodedata.normalize("NFKC", b.reading) for b in lexicon()]
    assert {b.name for b in lexicon()} >= {"Sonos", "Qrio", "Canon", "Remo mini"}


def test_the_lexicon_in_effect_leaves_no_file_behind(tmp_path: Path) -> None:
    """OpenJTalk keeps the lexicon it opened, so its files go at once, and a user dictionary
    without words makes no folder: a server killed later leaves nothing in the temporary
    folder, and the brands still read as one phrase."""
    brand = next(b for b in lexicon() if b.context != "device")
    script = (
        "from wyoming_hayakoe.text.accent import accent_phrases\n"
        "from wyoming_hayakoe.text.frontend import TextFrontend\n"
        "smart = TextFrontend(smart_home=True)\n"
        f"first = accent_phrases(smart.normalize('{brand.name}の電源を入れました。'))[0]\n"
        "print(''.join(m.kana for m in first.morae), flush=True)\n"
        "from pathlib import Path; from wyoming_hayakoe.text.user_dict import UserDictionary\n"
        f"words = UserDictionary(Path({str(tmp_path)!r}) / 'no-words.csv'); words.refresh()\n"
        "import os; os._exit(0)  # as a killed server ends: no clean-up at exit\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    assert done.stdout.strip() == brand.reading + "ノ"
    assert list(tmp_path.glob("hayakoe-*")) == []  # (a library keeps a session file there)


def test_a_malformed_list_line_is_named(tmp_path: Path) -> None:
    lines = BRANDS_FILE.read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "brands.tsv"
    bad = "Foo\tフー\tフー\t\tremote\tsometimes\thttps://x\tstored page"
    broken.write_text("\n".join([*lines, bad]))
    with pytest.raises(BrandListError, match=f"line {len(lines) + 1}"):
        load_brands(broken)


@pytest.mark.parametrize("brand", PRODUCTS, ids=[b.name for b in PRODUCTS])
def test_a_name_of_several_words_is_read_whole(brand, smart: TextFrontend) -> None:  # type: ignore[no-untyped-def]
    text = f"リビングの{brand.name}が反応しました。"
    assert _brand_rules(smart, text) == [f"brand: {brand.name}"], smart.rewrite(text)


def test_each_spelling_is_read_in_a_stored_page_or_marked_unchecked() -> None:
    assert {b.checked for b in BRANDS} == {"stored page", "unchecked"}
    assert len([b for b in BRANDS if b.checked == "stored page"]) >= 80


def test_the_products_corpus_covers_the_platforms_and_services() -> None:
    assert len(PRODUCTS_CORPUS) >= 30
    texts = " ".join(text for _, text, _ in PRODUCTS_CORPUS)
    for name in ("Fire TV Stick", "Apple TV+", "Android TV", "PlayStation 5", "Nintendo Switch 2"):
        assert name in texts, name


@pytest.mark.parametrize(
    ("category", "text", "reading"), PRODUCTS_CORPUS, ids=corpus_ids(PRODUCTS_CORPUS)
)
def test_each_product_announcement_reads_as_expected(
    category: str, text: str, reading: str, smart: TextFrontend
) -> None:
    assert_reads(smart, text, reading, category)


@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("PlayStation 5の", "プレイステーションファイブノ"),
        ("PlayStation 55の", "プレイステーションゴジューゴノ"),  # 5 is the name's, 55 is not
        ("Fire TV Stick 4Kの", "ファイヤーティービースティックヨンケーノ"),
        ("TVの", "テレビノ"),  # alone, TV is still the television
    ],
)
def test_a_number_ends_a_name_only_where_it_ends(
    text: str, reading: str, smart: TextFrontend
) -> None:
    assert spoken_phonemes(smart, text) == reading_phonemes(reading)
