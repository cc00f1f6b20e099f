"""How a text is read before there is an engine: the shared BERT cannot be had (the hub is a
port where nothing listens), yet the page's reading, the VOICEVOX API's accent phrases and a
word saved to the dictionary work, with the same rules and the dictionary's words: a reading
needs OpenJTalk and the rules, not the BERT."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_engine import FakeEngine, fake_engine_factory
from web_utils import forget_user_words

from tools.server_process import free_port
from wyoming_hayakoe.inference.params import SynthesisParams
from wyoming_hayakoe.service import ServiceSettings, TtsService
from wyoming_hayakoe.service.dictionary import save_entry, validate
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.g2p import g2p
from wyoming_hayakoe.voices.store import VoiceStore

TEXT = "Sonosを再生。室温は25℃です。"


@pytest.fixture
async def no_bert(tmp_path: Path) -> AsyncIterator[TtsService]:
    store = VoiceStore([tmp_path], endpoint=f"http://127.0.0.1:{free_port()}")
    dictionary = tmp_path / "user_dict.csv"
    settings = ServiceSettings(
        "jvnv-F1-jp", SynthesisParams(), 1000, True, False, user_dictionary=dictionary
    )
    service = TtsService(store, settings, engine_factory=fake_engine_factory(FakeEngine(tmp_path)))
    await service.refresh_voices()
    try:
        yield service
    finally:
        await service.close()
        forget_user_words(dictionary)


def kana(phrases: list) -> str:  # type: ignore[type-arg]
    return "".join(mora.kana for phrase in phrases for mora in phrase.morae)


async def test_the_reading_needs_no_bert(no_bert: TtsService) -> None:
    reading = await no_bert.readings.explain(TEXT)
    assert "二十五度" in reading.rewritten  # the smart-home rules ran
    plain = "".join(g2p(TextFrontend(smart_home=True).normalize(reading.rewritten)).readings)
    assert kana(await no_bert.readings.accent_phrases(TEXT)) == plain.replace("'", "")


async def test_a_word_saved_without_an_engine_is_read_at_once(no_bert: TtsService) -> None:
    path = no_bert.dictionary.path
    assert path is not None
    word = validate("Sonos", "ソノスソノスソノス", "1")
    await no_bert.dictionary.change(functools.partial(save_entry, entry=word))
    lines = path.read_text(encoding="utf-8").splitlines()
    line = lines.index("Sonos,ソノスソノスソノス,1") + 1
    assert kana(await no_bert.readings.accent_phrases(TEXT)).startswith("ソノスソノスソノス")
    reading = await no_bert.readings.explain(TEXT)  # the word named with its line
    assert [rule.line for piece in reading.rewrites for rule in piece.rules if rule.line] == [line]
