"""Bad input never breaks the front-end: it gives a valid :class:`Phonemes` or a TextError.

Decision: every string gives a valid ``Phonemes``; text with nothing to say gives one with
``has_speech`` false (only padding and marks), which the engine skips. Only a non-string
raises :class:`TextError`. Where the reference crashes (see test_frontend_parity.py), we
still give a valid result.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wyoming_hayakoe.errors import TextError
from wyoming_hayakoe.text import jtalk
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.g2p import _chunks
from wyoming_hayakoe.text.prosody import accent_phrase_phonemes
from wyoming_hayakoe.text.symbols import JP_TONE_OFFSET, PUNCTUATIONS

# text, whether it has something to say
BAD_INPUTS = [
    ("", False),
    (" ", False),
    ("\u3000\t\n\r ", False),
    ("。、！？……", False),
    ("「」（）【】", False),
    ("😀🎉👍🏻👨\u200d👩\u200d👧", False),
    ("(；´Д｀)", False),
    ("Привет мир", False),  # Cyrillic: deleted by the normalizer
    ("ἀἁ", False),  # Greek OpenJTalk cannot read: spoken as pauses
    ("\x00\x01\x1b\x7f", False),
    ("あ\x00い\x1bう", True),
    ("\ud800", False),
    ("\udfff\ud800あ", True),
    ("\ue000\U0010fffd", False),
    ("\ufffd\ufeff\u200b", False),
    ("\u3099\u309a\u0301", False),
    ("\u0378", False),  # unassigned: the reference crashes
    ("あ\u0378い\u3040", True),
    ("ーーー", False),
    ("~〜～", False),
    ("123456789012345678901234567890123456789012345678901234567890", True),
    ("一" * 30, True),
    ("クヮ", True),
    ("[CLS][SEP][UNK]", True),
    ("%$¥:;", False),
]


@pytest.mark.parametrize(("text", "speech"), BAD_INPUTS, ids=[f"bad{i:02d}" for i in range(25)])
def test_bad_input_gives_valid_phonemes(
    text: str,
    speech: bool,
    available_frontend: TextFrontend,
    check_phonemes: Callable[..., None],
) -> None:
    phonemes = available_frontend.phonemize(text)
    check_phonemes(phonemes, available_frontend)
    assert phonemes.has_speech is speech
    if not speech:
        assert set(phonemes.phones) <= {"_", *PUNCTUATIONS}


@pytest.mark.parametrize("value", [None, b"bytes", 42, ["list"]])
def test_non_string_is_a_text_error(value: object, plain_frontend: TextFrontend) -> None:
    with pytest.raises(TextError, match="must be a string"):
        plain_frontend.phonemize(value)  # type: ignore[arg-type]


def test_token_ids_need_a_tokenizer(plain_frontend: TextFrontend) -> None:
    from wyoming_hayakoe.errors import ModelFileError

    assert plain_frontend.phonemize("トークン").has_speech
    with pytest.raises(ModelFileError):
        plain_frontend.token_ids("トークン")


@pytest.mark.slow
@pytest.mark.parametrize(
    "unit",
    ["あ", "今日は7:30にWi-Fiのルーターを再起動します。", "😀", "\ud800", "。"],
    ids=["kana", "mixed", "emoji", "surrogate", "marks"],
)
def test_hundred_thousand_characters(
    unit: str, available_frontend: TextFrontend, check_phonemes: Callable[..., None]
) -> None:
    text = (unit * (100_000 // len(unit) + 1))[:100_000]
    phonemes = available_frontend.phonemize(text)
    check_phonemes(phonemes, available_frontend)
    assert phonemes.has_speech is (unit[0] not in "😀\ud800。")


def test_long_text_is_cut_after_punctuation() -> None:
    sentence = "今日は良い天気ですね,明日は雨でしょう."
    text = sentence * 60 + "あ" * 1200
    chunks = _chunks(text)
    assert "".join(chunks) == text
    assert all(0 < len(c) <= jtalk.MAX_CHARS for c in chunks)
    # Every cut inside the sentences falls right after a mark.
    sentence_part = len(sentence) * 60
    ends = [sum(map(len, chunks[: i + 1])) for i in range(len(chunks) - 1)]
    assert all(text[end - 1] in ",." for end in ends if end <= sentence_part)
    assert len(_chunks(text[: jtalk.MAX_CHARS])) == 1


def test_long_text_phonemizes_like_its_parts(
    plain_frontend: TextFrontend, check_phonemes: Callable[..., None]
) -> None:
    sentence = "今日は良い天気ですね。"
    one = plain_frontend.phonemize(sentence)
    many = plain_frontend.phonemize(sentence * 120)  # 1,320 characters: three OpenJTalk calls
    check_phonemes(many)
    assert many.normalized == one.normalized * 120
    assert many.bert_text == one.bert_text * 120
    # Same phonemes sentence after sentence (the accents may differ between the calls).
    assert many.phones[3:-3] == [*one.phones[3:-3], "_"] * 119 + one.phones[3:-3]


def test_concurrent_use_gives_the_sequential_results(plain_frontend: TextFrontend) -> None:
    texts = [
        "今日は良い天気ですね。",
        "Wi-Fiのルーターを再起動しました！",
        "午前7:30にアラームをセットしました。",
        "えっ、本当ですか？信じられない……",
        "リビングの温度は23.5℃、湿度は45%です。",
        "breakfastはパンとコーヒーにします。",
    ] * 6
    expected = [plain_frontend.phonemize(t) for t in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(plain_frontend.phonemize, texts))
    assert results == expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(
        st.one_of(st.characters(exclude_categories=()), st.integers(0xD800, 0xDFFF).map(chr)),
        max_size=60,
    )
)
def test_arbitrary_unicode_never_breaks(
    available_frontend: TextFrontend, check_phonemes: Callable[..., None], text: str
) -> None:
    try:
        phonemes = available_frontend.phonemize(text)
    except TextError:
        return  # allowed by the contract (none is known)
    check_phonemes(phonemes, available_frontend)


_SMALL_KANA = "ァィゥェォャュョヮー"


def test_every_kana_with_a_small_one_is_read(plain_frontend: TextFrontend) -> None:
    """Where OpenJTalk labels a mora other than SBV2's kana table reads it (クォ: kw o for
    k u o), the reading keeps the table's phonemes and the accents stay in step after it."""
    from wyoming_hayakoe.text.kana import MORA_PHONEMES, kana_to_phonemes

    single = [kana for kana in MORA_PHONEMES if len(kana) == 1 and kana not in _SMALL_KANA]
    for kana in single:
        for small in _SMALL_KANA:
            text = f"ア{kana}{small}ト"
            phonemes = plain_frontend.phonemize(text)
            spoken = [
                (phone, tone)
                for phone, tone in zip(phonemes.phones, phonemes.tone_ids, strict=True)
                if phone != "_"
            ]
            features = jtalk.run_frontend(text)
            if small != "ー":
                reading = "".join(feature["pron"] for feature in features).replace("’", "")
                table = [_NO_SYMBOL.get(p, p) for p in kana_to_phonemes(reading)]
                assert [phone for phone, _ in spoken] == table, text
            labelled = accent_phrase_phonemes(jtalk.make_label(features))[-1][-2:]
            assert [(p, JP_TONE_OFFSET + t) for p, t in labelled] == spoken[-2:], text


_NO_SYMBOL = {"kw": "k", "gw": "g"}
"""クヮ and グヮ, spoken without the w SBV2 has no symbol for (text/frontend.py)."""
