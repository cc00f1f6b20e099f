"""The pitch accent drawn on the Reading page is the accent the synthesizer is given."""

from __future__ import annotations

import pytest

from wyoming_hayakoe.text.accent import accent_phrases
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.g2p import g2p
from wyoming_hayakoe.text.kana import kana_to_phonemes

TEXTS = [
    "今日は良い天気ですね、雨が降る。",
    "箸と橋と端を買った。",
    "リビングの電気を消して？",
    "7:30に室温を-3.5℃にして、Wi-Fiを再起動。",
    "おはようございます。東京都の気温は二十五度です！",
    "キッチンのライトを五十パーセントにしてください。",
]
_MARKS = frozenset(",.!?…'-")


@pytest.mark.parametrize("text", TEXTS)
def test_high_morae_are_the_synthesizers_tones(text: str) -> None:
    normalized = TextFrontend(smart_home=True).normalize(text)
    result = g2p(normalized)
    tones = [
        tone for phone, tone in zip(result.phones, result.tones, strict=True) if phone not in _MARKS
    ]
    drawn: list[int] = []
    phrases = accent_phrases(normalized)
    for phrase in phrases:
        assert len(phrase.morae) == len(phrase.high) > 0
        assert 0 <= phrase.nucleus <= len(phrase.morae)
        for mora, high in zip(phrase.morae, phrase.high, strict=True):
            drawn += [int(high)] * len(kana_to_phonemes(mora))
    assert drawn == tones
    assert "".join("".join(p.morae) for p in phrases) == "".join(
        r for r in result.readings if r not in _MARKS and not set(r) <= _MARKS
    ).replace("’", "")


def test_accent_types() -> None:
    chopsticks, bridge = accent_phrases("箸と橋と端")[:2]
    assert chopsticks.morae == ["ハ", "シ", "ト"] and chopsticks.nucleus == 1
    assert chopsticks.high == [True, False, False]
    assert bridge.high == [False, True, False] and bridge.nucleus == 2
    flat, falling = accent_phrases("友達が来る")
    assert flat.nucleus == 0 and flat.high == [False, True, True, True, True]
    assert falling.morae == ["ク", "ル"] and falling.nucleus == 1
    assert accent_phrases("、。！") == []
