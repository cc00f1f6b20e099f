"""The web page's user dictionary endpoints over aiohttp's test client, on a real service
with the tiny voice: an edit changes the reading and the audio at once."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient
from web_utils import (
    QUIET,
    WebFixture,
    api_site_fixture,
    error_of,
    forget_user_words,
    model_cache_fixture,
    parse_wav,
)

from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.g2p import g2p

model_cache = model_cache_fixture()


site = api_site_fixture()


# ----- dictionary -----


async def test_dictionary_edit_changes_reading_and_audio(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, client = site
    fixture.dictionary.write_text("# my words\n玄関,ゲンカン,1\n", encoding="utf-8")
    listed = await (await client.get("/api/dictionary")).json()
    assert listed["available"] and [e["surface"] for e in listed["entries"]] == ["玄関"]
    text = "ソノスを再生。"
    speak = {"text": text, "voice": "tiny", **QUIET}
    before_kana = await (await client.post("/api/reading", json={"text": text})).json()
    before_pcm = parse_wav(await (await client.post("/api/synthesize", json=speak)).read())[1]
    word = {"surface": "ソノス", "reading": "ソノスソノスソノス", "accent": 1}
    saved = await client.put("/api/dictionary", json=word)
    assert saved.status == 200, await saved.text()
    assert fixture.dictionary.read_text(encoding="utf-8").splitlines() == [
        "# my words",
        "玄関,ゲンカン,1",
        "ソノス,ソノスソノスソノス,1",
    ]
    after_kana = await (await client.post("/api/reading", json={"text": text})).json()
    assert after_kana["sentences"][0]["kana"].startswith("ソノスソノスソノス")
    assert after_kana["sentences"][0]["kana"] != before_kana["sentences"][0]["kana"]
    accent = after_kana["sentences"][0]["phrases"][0]
    assert accent["nucleus"] == 1 and accent["high"][:2] == [True, False]
    after_pcm = parse_wav(await (await client.post("/api/synthesize", json=speak)).read())[1]
    assert len(after_pcm) > 1.3 * len(before_pcm)
    # Edit in place, then delete.
    edited = {**word, "reading": "ソノス", "accent": 0, "replace": "ソノス"}
    assert (await client.put("/api/dictionary", json=edited)).status == 200
    assert "ソノス,ソノス,0" in fixture.dictionary.read_text(encoding="utf-8")
    deleted = await client.post("/api/dictionary/delete", json={"surface": "ソノス"})
    assert deleted.status == 200
    assert "ソノス" not in fixture.dictionary.read_text(encoding="utf-8")
    await error_of(await client.post("/api/dictionary/delete", json={"surface": "ソノス"}), 404)
    leftovers = [p.name for p in fixture.data.iterdir() if p.name.startswith(".user_dict")]
    assert leftovers == []


async def test_no_user_word_outlives_its_test(site: tuple[WebFixture, TestClient]) -> None:
    fixture, client = site
    probe = "ソノスを再生。"
    plain = TextFrontend(smart_home=True)
    word = {"surface": "ソノス", "reading": "ソノスソノス", "accent": 1}
    assert (await client.put("/api/dictionary", json=word)).status == 200
    reading = await (await client.post("/api/reading", json={"text": probe})).json()
    assert reading["sentences"][0]["kana"].startswith("ソノスソノス")
    forget_user_words(fixture.dictionary)
    assert not "".join(g2p(plain.normalize(probe)).readings).startswith("ソノスソノス")


@pytest.mark.parametrize(
    ("word", "words"),
    [
        ({"surface": "ソノス", "reading": "sonos", "accent": 1}, "not katakana"),
        ({"surface": "ソノス", "reading": "ソノス", "accent": 9}, "between 0 and 3"),
        ({"surface": "ソノス", "reading": "ソノス", "accent": "x"}, "whole number"),
        ({"surface": "a,b", "reading": "ソノス", "accent": 1}, "comma"),
        ({"surface": "ソノス\n玄関", "reading": "ソノス", "accent": 1}, "line break"),
        ({"surface": "", "reading": "ソノス", "accent": 1}, "empty"),
        ({"surface": "ソノス", "reading": "ソノス", "accent": True}, "whole number"),
    ],
)
async def test_bad_dictionary_word_is_refused(
    site: tuple[WebFixture, TestClient], word: dict[str, object], words: str
) -> None:
    fixture, client = site
    fixture.dictionary.write_text("玄関,ゲンカン,1\n", encoding="utf-8")
    assert words in await error_of(await client.put("/api/dictionary", json=word), 400)
    assert words in await error_of(await client.post("/api/dictionary/check", json=word), 400)
    assert fixture.dictionary.read_text(encoding="utf-8") == "玄関,ゲンカン,1\n"
