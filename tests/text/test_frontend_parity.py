"""The front-end gives exactly what the reference hayakoe 1.3.1 gives (it is the test oracle).

Every corpus line is compared field by field: normalized text, BERT text and token ids, phone,
tone and language ids, word2ph (all after add_blank). Where the reference fails, our result
must be valid instead, and the line must be one of the known failures below.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wyoming_hayakoe.text.frontend import TextFrontend

CORPUS: list[str] = json.loads(
    (Path(__file__).parents[1] / "data" / "frontend_corpus.json").read_text(encoding="utf-8")
)

# Lines of the corpus on which the reference fails, and why.
KNOWN_REFERENCE_FAILURES = {
    "\u0378": "unassigned code point kept by its normalizer, dropped by its BERT tokenizer",
    "あ\u0378い": "same",
    "\u3040\u3097\u3098": "same",
    "クヮルテットという古い表記。": "OpenJTalk reads クヮ as kw, which has no SBV2 symbol",
    "グヮバジュース。": "pyopenjtalk-plus reads グヮ as gw, which has no SBV2 symbol",
    "123456789012345678901234567890123456789012345678901234567890": "num2words overflow",
}

# Characters for generated texts: Japanese, marks, Latin, digits, and oddities.
_JAPANESE = (
    "あいうえおかがきぎくけこさしすせそたちつてとなにぬねのはばぱひふへほまみむめもやゆよ"
    "らりるれろわをんぁぃぅぇぉっゃゅょゎゔアイウエオカガキクケコサシスセソタチツテトナニヌネノ"
    "ハバパヒフヘホマミムメモヤユヨラリルレロワヲンァィゥェォッャュョヮヴヵヶーヽヾゝゞ"
    "今日天気電気部屋温度明後時分年月私彼雨雪東京駅一二三十百千万億々〇"
)
_MARKS = "。、！？!?.,…・「」『』（）()【】ー〜~－-—―:：;/%℃$¥€ 　\n"
_OTHER = "ABCXYZabcxyz0123456789０１２ｱｲｳｶﾞﾟαβΩἀ😀①ⅢÅé\u3099\u200b"


def _ids(texts: list[str]) -> list[str]:
    return [f"line{index:03d}" for index in range(len(texts))]


@pytest.mark.parametrize("text", CORPUS, ids=_ids(CORPUS))
def test_corpus_line_matches_reference(
    text: str,
    text_frontend: TextFrontend,
    hayakoe_reference: Callable[[str], Any],
    check_phonemes: Callable[..., None],
) -> None:
    ours = text_frontend.phonemize(text)
    check_phonemes(ours, text_frontend)
    expected = hayakoe_reference(text)
    if expected.failure is not None:
        assert text in KNOWN_REFERENCE_FAILURES, f"reference failed on {text!r}: {expected.failure}"
        return
    assert text not in KNOWN_REFERENCE_FAILURES, "the reference no longer fails: compare it"
    _assert_same(text, ours, text_frontend, expected)


def _assert_same(text: str, ours: object, frontend: TextFrontend, expected: Any) -> None:
    from wyoming_hayakoe.text.frontend import Phonemes

    assert isinstance(ours, Phonemes)
    context = f"text {text!r}"
    assert ours.normalized == expected.normalized, context
    assert ours.bert_text == expected.bert_text, context
    assert tuple(ours.phone_ids) == expected.phone_ids, context
    assert tuple(ours.tone_ids) == expected.tone_ids, context
    assert tuple(ours.language_ids) == expected.language_ids, context
    assert tuple(ours.word2ph) == expected.word2ph, context
    assert tuple(frontend.token_ids(ours.bert_text)) == expected.token_ids, context


def test_known_failures_are_in_the_corpus() -> None:
    assert set(KNOWN_REFERENCE_FAILURES) <= set(CORPUS)
    assert len(CORPUS) >= 300


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(st.sampled_from(_JAPANESE + _MARKS + _OTHER), max_size=30))
def test_generated_text_matches_reference(
    text_frontend: TextFrontend,
    hayakoe_reference: Callable[[str], Any],
    check_phonemes: Callable[..., None],
    text: str,
) -> None:
    expected = hayakoe_reference(text)
    ours = text_frontend.phonemize(text)
    check_phonemes(ours, text_frontend)
    if expected.failure is None:
        _assert_same(text, ours, text_frontend, expected)


def test_loanword_table_is_the_reachable_part_of_the_reference_dictionary() -> None:
    hayakoe = pytest.importorskip("hayakoe", reason="the reference hayakoe 1.3.1 is not installed")
    source = Path(hayakoe.__file__).parent / "nlp" / "japanese" / "english_to_katakana.json"
    reference = json.loads(source.read_text(encoding="utf-8"))
    # Only runs of ASCII letters are looked up, lower-cased: other keys are unreachable.
    reachable = {k: v for k, v in reference.items() if re.fullmatch("[a-z]+", k)}

    import wyoming_hayakoe.text.loanwords as english

    blob = gzip.decompress(english._TABLE_PATH.read_bytes()).decode("utf-8")
    ours = dict(line.split("\t") for line in blob.splitlines())
    assert ours == reachable
    table = english.loanword_table()
    for word in ("a", "breakfast", "zyzzyva", *list(reachable)[::997]):
        assert table.get(word) == reachable[word]
    assert table.get("qqqqzzzz") is None and table.get("") is None


def test_symbol_table_matches_reference() -> None:
    symbols = pytest.importorskip("hayakoe.nlp.symbols", reason="hayakoe is not installed")
    from wyoming_hayakoe.text import symbols as ours

    assert list(ours.SYMBOLS) == symbols.SYMBOLS
    assert symbols.LANGUAGE_TONE_START_MAP["JP"] == ours.JP_TONE_OFFSET
    assert symbols.LANGUAGE_ID_MAP["JP"] == ours.JP_LANGUAGE_ID
    assert list(ours.PUNCTUATIONS) == symbols.PUNCTUATIONS


def test_mora_table_matches_reference() -> None:
    mora_list = pytest.importorskip(
        "hayakoe.nlp.japanese.mora_list", reason="hayakoe is not installed"
    )
    from wyoming_hayakoe.text.kana import MORA_PHONEMES

    reference = {
        kana: tuple(p for p in phonemes if p is not None)
        for kana, phonemes in mora_list.MORA_KATA_TO_MORA_PHONEMES.items()
    }
    assert reference == MORA_PHONEMES


def test_keep_words_are_not_replaced_like_reference_user_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user_dict = pytest.importorskip(
        "hayakoe.nlp.japanese.user_dict", reason="the reference hayakoe 1.3.1 is not installed"
    )
    from hayakoe.nlp.japanese.normalizer import normalize_text as reference_normalize

    # The reference skips the surfaces of its (global) user dictionary, stored full-width.
    surfaces = {"Ｎｅｔｆｌｉｘ", "Alexa"}
    monkeypatch.setattr(user_dict, "registered_surfaces", lambda: surfaces)
    keeping = TextFrontend(keep_words=frozenset(surfaces))
    plain = TextFrontend()
    for text in ["Netflixを見る", "Alexa、Netflixをつけて", "alexa", "NetflixとYouTube"]:
        assert keeping.normalize(text) == reference_normalize(text), text
    assert "Netflix" in keeping.normalize("Netflixを見る")
    assert "Netflix" not in plain.normalize("Netflixを見る")
