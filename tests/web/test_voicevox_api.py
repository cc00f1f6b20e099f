"""The VOICEVOX-compatible API over aiohttp's test client, on a real service with the tiny
voice: speakers and style ids, engine endpoints, queries, errors (what a synthesis sounds
like: test_voicevox_synthesis.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from voicevox_utils import (
    aivisspeech_style_id,
    detail,
    hayakoe_speaker_uuid,
    query,
    style_ids,
)
from web_utils import (
    MAX_TEXT,
    WebFixture,
    api_site_fixture,
    copy_tiny_data,
    model_cache_fixture,
    web_client,
    web_service,
)

from wyoming_hayakoe.inference.params import SynthesisParams

model_cache = model_cache_fixture()
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
TEXT = "こんにちは。今日は7:30に起きました！"
DEEP_JSON = b"[" * 100_000 + b"]" * 100_000


site = api_site_fixture(QUIET)
"""The tiny voice served with zero noise (the same text gives the same samples)."""


# ----- speakers -----


async def test_speakers_carry_aivisspeech_style_ids(site: tuple[WebFixture, TestClient]) -> None:
    fixture, client = site
    speakers = await (await client.get("/speakers")).json()
    assert [s["name"] for s in speakers] == ["tiny"]
    tiny = speakers[0]
    assert tiny["speaker_uuid"] == hayakoe_speaker_uuid("tiny")
    styles = fixture.service.voice_entries[0].styles
    assert [s["name"] for s in tiny["styles"]] == list(styles)
    assert [s["id"] for s in tiny["styles"]] == [
        aivisspeech_style_id(tiny["speaker_uuid"], local) for local in range(len(styles))
    ]
    info = await (
        await client.get("/speaker_info", params={"speaker_uuid": tiny["speaker_uuid"]})
    ).json()
    assert [s["id"] for s in info["style_infos"]] == [s["id"] for s in tiny["styles"]]
    assert "Licence" in info["policy"]
    assert "no speaker" in await detail(
        await client.get("/speaker_info", params={"speaker_uuid": "x"}), 404
    )


async def test_an_aivmx_voice_gets_the_ids_aivisspeech_engine_gives_it(
    tmp_path: Path, model_cache: Path
) -> None:
    from anyvoice_utils import good_data_dir

    data = good_data_dir(copy_tiny_data(tmp_path / "data"))
    async with web_service(data, model_cache) as fixture, web_client(fixture) as client:
        speakers = await (await client.get("/speakers")).json()
    by_uuid = {s["speaker_uuid"]: s for s in speakers}
    # tests/fixtures/aivmx/test-voice.aivmx: speaker そら, styles ノーマル (0) and 怒り (2).
    sora = by_uuid["55150642-78c4-5b81-9403-8f73b0e6a47a"]
    assert [(s["name"], s["id"]) for s in sora["styles"]] == [
        ("ノーマル", aivisspeech_style_id(sora["speaker_uuid"], 0)),
        ("怒り", aivisspeech_style_id(sora["speaker_uuid"], 2)),
    ]
    assert speakers[0]["name"] == "tiny"  # the default voice first
    ids = [s["id"] for speaker in speakers for s in speaker["styles"]]
    assert len(set(ids)) == len(ids)


async def test_engine_endpoints(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    version = await client.get("/version")
    assert version.headers["Content-Type"] == "application/json"
    assert isinstance(await version.json(), str)
    manifest = await (await client.get("/engine_manifest")).json()
    assert manifest["supported_features"]["adjust_speed_scale"] is True
    assert manifest["supported_features"]["adjust_mora_pitch"] is False
    assert await (await client.get("/presets")).json() == []
    assert (await (await client.get("/supported_devices")).json())["cpu"] is True
    neutral = (await style_ids(client))["Neutral"]
    initialized = await client.get("/is_initialized_speaker", params={"speaker": neutral})
    assert await initialized.json() is True  # the default voice is loaded at start-up
    assert (await client.post("/initialize_speaker", params={"speaker": neutral})).status == 204


# ----- queries -----


async def test_audio_query_reads_as_the_wyoming_side(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    neutral = (await style_ids(client))["Neutral"]
    body = await query(client, TEXT, neutral)
    assert body["kana"] == TEXT  # AivisSpeech: the text itself, what the BERT reads
    assert (body["speedScale"], body["intonationScale"], body["pitchScale"]) == (1.0, 1.0, 0.0)
    assert body["tempoDynamicsScale"] == 0.0  # the server's --tempo-dynamics-scale 0
    assert body["outputSamplingRate"] == 44100 and body["outputStereo"] is False
    morae = "".join(m["text"] for p in body["accent_phrases"] for m in p["moras"])
    assert morae.startswith("コンニチワ.キョーワシチジサンジュップンニ")  # 7:30 rewritten
    assert morae.endswith("!")
    first = body["accent_phrases"][0]
    assert first["moras"][0] == {
        "text": "コ", "consonant": "k", "consonant_length": 0.0,
        "vowel": "o", "vowel_length": 0.0, "pitch": 0.0,
    }  # fmt: skip
    assert first["moras"][-1]["vowel"] == "pau" and first["pause_mora"] is None
    same = await (
        await client.post("/accent_phrases", params={"text": TEXT, "speaker": neutral})
    ).json()
    assert same == body["accent_phrases"]
    kana = await client.post(
        "/accent_phrases", params={"text": "コ'ンニチワ、セ'カイ？", "is_kana": "true"}
    )
    phrases = await kana.json()
    assert ["".join(m["text"] for m in p["moras"]) for p in phrases] == ["コンニチワ,", "セカイ?"]
    assert [p["accent"] for p in phrases] == [1, 1] and phrases[1]["is_interrogative"]
    bad = await detail(
        await client.post("/accent_phrases", params={"text": "コンニチワ", "is_kana": "true"}), 400
    )
    assert bad["error_name"] == "ACCENT_NOTFOUND"
    mora_data = await client.post("/mora_data", params={"speaker": neutral}, json=phrases)
    assert await mora_data.json() == phrases


# ----- errors -----


async def test_enable_katakana_english_has_the_model_read_english_or_spell_it(
    site: tuple[WebFixture, TestClient],
) -> None:
    _, client = site
    neutral = (await style_ids(client))["Neutral"]

    async def morae(**params: str) -> str:
        body = await (
            await client.post("/accent_phrases", params={"text": "Merossです。", **params})
        ).json()
        return "".join(m["text"] for p in body for m in p["moras"])

    assert (await morae()).startswith("メロス")  # the English model, as VOICEVOX's default
    assert (await morae(enable_katakana_english="true")).startswith("メロス")
    assert (await morae(enable_katakana_english="false")).startswith("エムイーアールオーエスエス")
    query = await client.post(
        "/audio_query",
        params={"text": "Merossです。", "speaker": neutral, "enable_katakana_english": "false"},
    )
    spoken = "".join(m["text"] for p in (await query.json())["accent_phrases"] for m in p["moras"])
    assert spoken.startswith("エムイーアールオーエスエス")
    bad = await client.post(
        "/accent_phrases", params={"text": "Merossです。", "enable_katakana_english": "maybe"}
    )
    assert bad.status == 422


@pytest.mark.parametrize(
    ("path", "params", "body", "words"),
    [
        ("/audio_query", {"text": "はい", "speaker": 7}, None, "no style id 7"),
        ("/audio_query", {"speaker": "{neutral}"}, None, "Field required"),
        ("/audio_query", {"text": "はい", "speaker": "x"}, None, "valid integer"),
        ("/audio_query", {"text": "あ" * (MAX_TEXT + 1), "speaker": "{neutral}"}, None, "limit"),
        ("/synthesis", {"speaker": "{neutral}"}, {"accent_phrases": 5}, "valid list"),
        ("/synthesis", {"speaker": "{neutral}"}, "{query|speedScale=0}", "between"),
        ("/synthesis", {"speaker": "{neutral}"}, "{query|speedScale=x}", "valid number"),
        ("/synthesis", {"speaker": "{neutral}"}, "{query|outputSamplingRate=7}", "8000"),
        ("/synthesis", {"speaker": "{neutral}"}, "{query|kana=あ*401}", "limit"),
        ("/synthesis", {"speaker": "{neutral}"}, "{query|mora=x}", "is not kana"),
        ("/synthesis", {"speaker": "{neutral}"}, "{query|mora=ー}", "must follow"),
        ("/synthesis", {"speaker": 7}, "{query}", "no style id 7"),
        ("/streaming_synthesis", {"speaker": 7}, "{query}", "no style id 7"),
        ("/streaming_synthesis", {"speaker": "{neutral}"}, "{query|speedScale=0}", "between"),
        ("/streaming_synthesis", {"speaker": "{neutral}"}, b"{oops", "JSON"),
        ("/synthesis", {"speaker": "{neutral}"}, b"{oops", "JSON"),
        # Nested deeper than Python's parser recurses: malformed too, not a server error.
        ("/synthesis", {"speaker": "{neutral}"}, DEEP_JSON, "JSON"),
        ("/import_user_dict", {}, DEEP_JSON, "JSON"),
        ("/mora_data", {"speaker": "{neutral}"}, [{"moras": [{"text": 1}], "accent": 1}], "string"),
    ],
)
async def test_bad_requests_get_voicevox_errors(
    site: tuple[WebFixture, TestClient], path: str, params: dict[str, Any], body: Any, words: str
) -> None:
    _, client = site
    neutral = (await style_ids(client))["Neutral"]
    params = {k: str(neutral) if v == "{neutral}" else v for k, v in params.items()}
    if isinstance(body, str):
        good = await query(client, "はい。", neutral)
        change = body.strip("{}").partition("|")[2]
        key, _, value = change.partition("=")
        if key == "mora":
            good["accent_phrases"][0]["moras"][0]["text"] = value
        elif key == "kana":
            good["kana"] = "あ" * (MAX_TEXT + 1)
        elif key:
            good[key] = float(value) if value.lstrip("-").replace(".", "").isdigit() else value
        body = good
    if isinstance(body, bytes):
        response = await client.post(path, params=params, data=body)
    else:
        response = await client.post(path, params=params, json=body)
    assert words in json.dumps(await detail(response, 422), ensure_ascii=False)
    assert (await client.get("/version")).status == 200  # still serving


async def test_a_busy_server_answers_503_at_once(tmp_path: Path, model_cache: Path) -> None:
    data = copy_tiny_data(tmp_path / "data")
    async with (
        web_service(data, model_cache, max_waiting=0) as fixture,
        web_client(fixture) as client,
    ):
        neutral = (await style_ids(client))["Neutral"]
        body = await query(client, "はい。", neutral)
        response = await client.post("/synthesis", params={"speaker": neutral}, json=body)
        assert "--max-waiting" in await detail(response, 503)
