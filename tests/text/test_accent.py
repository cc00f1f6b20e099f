"""Accent phrases: the reading shown (and sent to VOICEVOX clients) is the one the synthesizer
is given, and an edited reading is what the synthesizer is then given."""

from __future__ import annotations

import dataclasses

import pytest

from wyoming_hayakoe.errors import TextError
from wyoming_hayakoe.text.accent import (
    MARKS,
    PhraseReading,
    accent_phrases,
    high_morae,
)
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.g2p import g2p
from wyoming_hayakoe.text.kana import kana_to_phonemes
from wyoming_hayakoe.text.symbols import JP_TONE_OFFSET
from wyoming_hayakoe.text.with_reading import TextWithReading, share_out

TEXTS = [
    "今日は良い天気ですね、雨が降る。",
    "箸と橋と端を買った。",
    "リビングの電気を消して？",
    "7:30に室温を-3.5℃にして、Wi-Fiを再起動。",
    "おはようございます。東京都の気温は二十五度です！",
    "キッチンのライトを五十パーセントにしてください。",
    "…まあ、ケーキ！？",
]
ODD_TEXTS = ["ーあ、クヮ", "😀", ""]
"""Readings whose pitch the Tokyo rule cannot draw (a phrase all low): given back unchanged,
they still give the same phonemes."""
FRONTEND = TextFrontend(smart_home=True)


@pytest.mark.parametrize("text", TEXTS)
def test_phrases_spell_every_phoneme_with_its_tone(text: str) -> None:
    result = g2p(FRONTEND.normalize(text))
    phrases = accent_phrases(FRONTEND.normalize(text))
    morae = [mora for phrase in phrases for mora in phrase.morae]
    assert [p for m in morae for p in m.phonemes] == result.phones
    spoken = [(p, t) for p, t in zip(result.phones, result.tones, strict=True) if p not in MARKS]
    drawn = [(p, int(m.high)) for m in morae if not m.is_mark for p in m.phonemes]
    assert drawn == spoken
    for phrase in phrases:
        kana = [m.kana for m in phrase.morae]
        # The accent alone gives the pitch drawn (the Tokyo rule)...
        assert high_morae(kana, phrase.accent) == [m.high for m in phrase.morae]
        assert 1 <= phrase.accent <= len(kana)
        # ...and each mora reads as its phonemes.
        for mora in phrase.morae:
            if not mora.is_mark and mora.kana != "ー":
                assert tuple(kana_to_phonemes(mora.kana)) == mora.phonemes
        # Marks only after the spoken morae (or a phrase of marks alone).
        spoken_at = [i for i, m in enumerate(phrase.morae) if not m.is_mark]
        assert spoken_at == list(range(len(spoken_at)))


def test_accent_types() -> None:
    chopsticks, bridge = accent_phrases("箸と橋と端")[:2]
    assert [m.kana for m in chopsticks.morae] == ["ハ", "シ", "ト"]
    assert chopsticks.accent == 1 and chopsticks.nucleus == 1
    assert [m.high for m in bridge.morae] == [False, True, False] and bridge.accent == 2
    flat, falling = accent_phrases("友達が来る")
    assert flat.nucleus == 0 and flat.accent == 5
    assert [m.high for m in flat.morae] == [False, True, True, True, True]
    assert [m.kana for m in falling.morae] == ["ク", "ル"] and falling.accent == 1
    marks = accent_phrases("、。！")
    assert [[m.kana for m in p.morae] for p in marks] == [[",", ".", "!"]]
    long_vowel = accent_phrases("ケーキ")[0]
    assert [m.kana for m in long_vowel.morae] == ["ケ", "ー", "キ"]


@pytest.mark.parametrize("text", TEXTS + ODD_TEXTS)
def test_a_reading_given_back_unchanged_gives_the_same_phonemes(text: str) -> None:
    rewritten = FRONTEND.rewrite(text)
    phrases = [p.reading for p in FRONTEND.accent_phrases(rewritten)]
    assert FRONTEND.phonemize_as(rewritten, phrases) == FRONTEND.phonemize(text)


def test_a_moved_accent_changes_only_the_tones() -> None:
    text = "箸と橋と端を買った。"
    phrases = [p.reading for p in FRONTEND.accent_phrases(text)]
    assert phrases[0].accent == 1
    moved = [dataclasses.replace(phrases[0], accent=2), *phrases[1:]]
    before, after = FRONTEND.phonemize(text), FRONTEND.phonemize_as(text, moved)
    assert after.phones == before.phones and after.word2ph == before.word2ph
    # ハシト: high-low-low becomes low-high-low (blanks around each phoneme).
    tones = [t - JP_TONE_OFFSET for t in after.tone_ids[3:14:2]]
    assert tones == [0, 0, 1, 1, 0, 0]
    assert after.tone_ids[14:] == before.tone_ids[14:]


def test_a_changed_reading_changes_the_phonemes_and_keeps_the_bert_text() -> None:
    text = "今日は晴れ。"
    phrases = [p.reading for p in FRONTEND.accent_phrases(text)]
    assert phrases[0].kana[:2] == ("キョ", "ー")
    # Read 今日 as こんにち (hiragana is taken), accent on the first mora.
    changed = [PhraseReading(("こ", "ン", "ニ", "チ", "ワ"), 1), *phrases[1:]]
    before, after = FRONTEND.phonemize(text), FRONTEND.phonemize_as(text, changed)
    assert after.bert_text == before.bert_text and len(after.word2ph) == len(before.word2ph)
    assert after.phones[1::2][1:11] == ["k", "o", "N", "n", "i", "ch", "i", "w", "a", "h"]
    assert sum(after.word2ph) == len(after.phone_ids)
    assert after.tone_ids[3] == JP_TONE_OFFSET + 1  # コ is high


@pytest.mark.parametrize(
    ("phrase", "words"),
    [
        (PhraseReading(("x",), 1), "is not kana"),
        (PhraseReading(("ー", "ア"), 1), "must follow"),
        (PhraseReading(("ーア",), 1), "starts with ー"),
    ],
)
def test_a_reading_that_cannot_be_spoken_is_refused(phrase: PhraseReading, words: str) -> None:
    with pytest.raises(TextError, match=words):
        FRONTEND.phonemize_as("。", [phrase])


def test_phrases_that_do_not_pair_up_are_read_from_their_kana() -> None:
    text = "箸と橋と端を買った。"
    phrases = [p.reading for p in FRONTEND.accent_phrases(text)]
    joined = [PhraseReading(phrases[0].kana + phrases[1].kana, 1), *phrases[2:]]
    phonemes = FRONTEND.phonemize_as(text, joined)
    assert phonemes.phones == FRONTEND.phonemize(text).phones
    assert sum(phonemes.word2ph) == len(phonemes.phone_ids)


def test_phrases_are_shared_out_to_sentences() -> None:
    a, b, c = (PhraseReading(("ア",), 1), PhraseReading(("イ", "."), 1), PhraseReading(("ウ",), 1))
    assert share_out([a, b, c], [2, 0, 1]) == [(a, b), (), (c,)]
    end = PhraseReading(("!",), 1)
    # Two phrases given for one: cut after the sentence marks instead.
    assert share_out([a, b, c, end], [1, 1]) == [(a, b), (c, end)]
    assert share_out([a, c], [1, 1, 1]) is None


def test_a_reading_without_text_is_read_in_hiragana() -> None:
    phrases = [PhraseReading(("キョ", "ー", ","), 1), PhraseReading(("ハ", "レ", "."), 1)]
    given = TextWithReading.from_phrases(phrases)
    assert given.text == "きょー、はれ。"
