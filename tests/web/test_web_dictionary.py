"""The user dictionary over HTTP, on a real service with the tiny voice: VOICEVOX's
``/user_dict`` API edits ``user_dict.csv`` itself (the Wyoming side's dictionary), an edit
changes the reading and the audio at once, bad words change nothing; and the Dictionary page's
own check of a word before it is saved."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from voicevox_utils import read_wav
from web_utils import WebFixture, api_site_fixture, error_of, forget_user_words, model_cache_fixture

from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.g2p import g2p

model_cache = model_cache_fixture()


site = api_site_fixture()

FILE = "# my words\n玄関,ゲンカン,1\n"
WORD = {"surface": "ソノス", "pronunciation": "ソノスソノスソノス", "accent_type": "1"}


async def reading(client: TestClient, text: str) -> str:
    phrases = await (await client.post("/accent_phrases", params={"text": text})).json()
    return "".join(m["text"] for p in phrases for m in p["moras"])


async def audio_seconds(client: TestClient, text: str) -> float:
    speakers = await (await client.get("/speakers")).json()
    speaker = speakers[0]["styles"][0]["id"]
    query = await (
        await client.post("/audio_query", params={"text": text, "speaker": speaker})
    ).json()
    quiet = {**query, "tempoDynamicsScale": 0, "noiseScale": 0, "noiseScaleW": 0}
    response = await client.post("/synthesis", params={"speaker": speaker}, json=quiet)
    return read_wav(await response.read()).seconds


async def refused(response: Any, words: str) -> None:
    assert response.status == 422, await response.text()
    assert words in json.dumps(await response.json(), ensure_ascii=False)


async def test_a_word_added_is_in_the_file_and_in_the_reading_at_once(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, client = site
    fixture.dictionary.write_text(FILE, encoding="utf-8")
    listed = await (await client.get("/user_dict")).json()
    assert [w["surface"] for w in listed.values()] == ["玄関"]
    text = "ソノスを再生。"
    before_kana, before_seconds = await reading(client, text), await audio_seconds(client, text)
    added = await client.post("/user_dict_word", params=WORD)
    assert added.status == 200 and added.headers["Content-Type"] == "application/json"
    word_id = await added.json()
    assert uuid.UUID(word_id)
    assert fixture.dictionary.read_text(encoding="utf-8").splitlines() == [
        "# my words",
        "玄関,ゲンカン,1",
        "ソノス,ソノスソノスソノス,1",
    ]
    word = (await (await client.get("/user_dict")).json())[word_id]
    assert (word["surface"], word["pronunciation"], word["accent_type"]) == (
        "ソノス",
        "ソノスソノスソノス",
        1,
    )
    assert word["mora_count"] == 9 and word["priority"] == 5
    after_kana = await reading(client, text)
    assert after_kana.startswith("ソノスソノスソノス") and after_kana != before_kana
    assert await audio_seconds(client, text) > 1.3 * before_seconds
    # Edit in place (by the uuid), then delete.
    edited = await client.put(
        f"/user_dict_word/{word_id}",
        params={"surface": "ソノス", "pronunciation": "ソノス", "accent_type": "0"},
    )
    assert edited.status == 204
    assert "ソノス,ソノス,0" in fixture.dictionary.read_text(encoding="utf-8")
    assert (await client.delete(f"/user_dict_word/{word_id}")).status == 204
    assert "ソノス" not in fixture.dictionary.read_text(encoding="utf-8")
    await refused(await client.delete(f"/user_dict_word/{word_id}"), "no word")
    leftovers = [p.name for p in fixture.data.iterdir() if p.name.startswith(".user_dict")]
    assert leftovers == []


async def test_import_takes_voicevox_and_aivisspeech_exports(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, client = site
    fixture.dictionary.write_text(FILE, encoding="utf-8")
    voicevox = {  # VOICEVOX ENGINE's GET /user_dict: the surface in full-width letters
        "a5b2c3d4-0000-4000-8000-000000000001": {
            "surface": "Ｓｏｎｏｓ", "priority": 5, "context_id": 1348, "part_of_speech": "名詞",
            "part_of_speech_detail_1": "固有名詞", "part_of_speech_detail_2": "一般",
            "part_of_speech_detail_3": "*", "inflectional_type": "*", "inflectional_form": "*",
            "stem": "*", "yomi": "ソノス", "pronunciation": "ソノス", "accent_type": 1,
            "mora_count": 3, "accent_associative_rule": "*",
        },
        "a5b2c3d4-0000-4000-8000-000000000002": {
            "surface": "玄関", "priority": 5, "pronunciation": "ゲンカンゲンカン", "accent_type": 0,
        },
    }  # fmt: skip
    aivisspeech = {  # AivisSpeech Engine's own: a word of several accent phrases
        "b5b2c3d4-0000-4000-8000-000000000003": {
            "surface": "リビングルーム", "priority": 5, "stem": ["リビング", "ルーム"],
            "yomi": ["リビング", "ルーム"], "pronunciation": ["リビング", "ルーム"],
            "accent_type": [0, 1], "mora_count": [4, 3],
        }
    }  # fmt: skip
    kept = await client.post("/import_user_dict", params={"override": "false"}, json=voicevox)
    assert kept.status == 204
    assert fixture.dictionary.read_text(encoding="utf-8").splitlines() == [
        "# my words",
        "玄関,ゲンカン,1",  # already there and not overridden
        "Sonos,ソノス,1",
    ]
    await client.post("/import_user_dict", params={"override": "true"}, json=voicevox)
    await client.post("/import_user_dict", params={"override": "true"}, json=aivisspeech)
    assert fixture.dictionary.read_text(encoding="utf-8").splitlines() == [
        "# my words",
        "玄関,ゲンカンゲンカン,0",
        "Sonos,ソノス,1",
        "リビングルーム,リビングルーム,0",
    ]
    assert (await reading(client, "Sonosを再生。")).startswith("ソノス")


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({**WORD, "pronunciation": "sonos"}, "not katakana"),
        ({**WORD, "accent_type": "12"}, "between 0 and 9"),
        ({**WORD, "accent_type": "x"}, "whole number"),
        ({**WORD, "surface": "a,b"}, "comma"),
        ({**WORD, "surface": "ソノス\n玄関"}, "line break"),
        ({**WORD, "surface": ""}, "empty"),
        ({**WORD, "priority": "11"}, "between 0 and 10"),
        ({**WORD, "word_type": "NOUN"}, "word_type"),
        ({"surface": "ソノス"}, "required"),
    ],
)
async def test_a_bad_word_is_refused_and_nothing_is_written(
    site: tuple[WebFixture, TestClient], params: dict[str, str], words: str
) -> None:
    fixture, client = site
    fixture.dictionary.write_text(FILE, encoding="utf-8")
    await refused(await client.post("/user_dict_word", params=params), words)
    fields = ("surface", "pronunciation", "accent_type", "priority")
    body = {"x": {key: params.get(key) for key in fields}}
    if "word_type" not in params:  # an import checks every word before it writes any
        good = {"y": {"surface": "良い", "pronunciation": "ヨイ", "accent_type": 1}}
        await refused(
            await client.post("/import_user_dict?override=true", json={**good, **body}), words
        )
    assert fixture.dictionary.read_text(encoding="utf-8") == FILE


async def test_the_page_checks_a_word_before_it_is_saved(
    site: tuple[WebFixture, TestClient],
) -> None:
    _, client = site
    assert (await (await client.get("/api/dictionary")).json()) == {
        "available": True,
        "file": "user_dict.csv",
    }
    good = await client.post(
        "/api/dictionary/check", json={"surface": "ソノス", "reading": "そのす", "accent": 1}
    )
    assert await good.json() == {"surface": "ソノス", "reading": "ソノス", "accent": 1, "morae": 3}
    for word, words in (
        ({"surface": "ソノス", "reading": "ソノス", "accent": 9}, "between 0 and 3"),
        ({"surface": "ソノス", "reading": "ソノス", "accent": True}, "whole number"),
        ({"surface": "ソノス", "reading": 5, "accent": 1}, "string"),
    ):
        assert words in await error_of(await client.post("/api/dictionary/check", json=word), 400)


async def test_a_word_tried_reads_the_text_with_it_and_saves_nothing(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, client = site
    fixture.dictionary.write_text(FILE, encoding="utf-8")
    saved = fixture.dictionary.read_bytes()
    text = "ソノスを再生。玄関の鍵。"
    word = {"surface": "ソノス", "reading": "ソノスソノスソノス", "accent": 1, "text": text}
    answer = await client.post("/api/dictionary/try", json=word)
    assert answer.status == 200, await answer.text()
    phrases = await answer.json()
    tried = "".join(m["text"] for p in phrases for m in p["moras"])
    assert tried.startswith("ソノスソノスソノス") and "ゲンカン" in tried  # the saved words too
    assert phrases[0]["accent"] == 1
    assert fixture.dictionary.read_bytes() == saved
    assert not (await reading(client, text)).startswith("ソノスソノスソノス")  # nothing in effect
    bad = {**word, "reading": "tesuto"}
    assert "katakana" in await error_of(await client.post("/api/dictionary/try", json=bad), 400)
    empty = {**word, "text": "  "}
    assert await error_of(await client.post("/api/dictionary/try", json=empty), 400)


async def test_no_user_word_outlives_its_test(site: tuple[WebFixture, TestClient]) -> None:
    fixture, client = site
    probe = "ソノスを再生。"
    plain = TextFrontend(smart_home=True)
    assert (
        await client.post("/user_dict_word", params={**WORD, "pronunciation": "ソノスソノス"})
    ).status == 200
    assert (await reading(client, probe)).startswith("ソノスソノス")
    forget_user_words(fixture.dictionary)
    assert not "".join(g2p(plain.normalize(probe)).readings).startswith("ソノスソノス")
