"""The VOICEVOX-compatible API over aiohttp's test client, on a real service with the tiny
voice: speakers and style ids, queries, synthesis and what each query field does, errors."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiohttp.test_utils import TestClient
from voicevox_utils import (
    aivisspeech_style_id,
    hayakoe_speaker_uuid,
    read_wav,
    trim_zeros,
)
from web_utils import (
    MAX_TEXT,
    WebFixture,
    api_site,
    copy_tiny_data,
    model_cache_fixture,
    web_client,
    web_service,
)

from wyoming_hayakoe.engine import PcmPiece
from wyoming_hayakoe.inference.params import SynthesisParams

model_cache = model_cache_fixture()
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
TEXT = "こんにちは。今日は7:30に起きました！"
DEEP_JSON = b"[" * 100_000 + b"]" * 100_000


@pytest.fixture
async def site(tmp_path: Path, model_cache: Path) -> AsyncIterator[tuple[WebFixture, TestClient]]:
    """The tiny voice served with zero noise (the same text gives the same samples)."""
    async with api_site(tmp_path, model_cache, QUIET) as served:
        yield served


async def style_ids(client: TestClient) -> dict[str, int]:
    speakers = await (await client.get("/speakers")).json()
    return {style["name"]: style["id"] for style in speakers[0]["styles"]}


async def query(client: TestClient, text: str, speaker: int, **fields: Any) -> dict[str, Any]:
    response = await client.post("/audio_query", params={"text": text, "speaker": speaker})
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"] == "application/json"
    return {**await response.json(), **fields}


async def synthesis(client: TestClient, body: Any, speaker: int, **params: str) -> bytes:
    response = await client.post("/synthesis", params={"speaker": speaker, **params}, json=body)
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"] == "audio/wav"
    return await response.read()


async def detail(response: Any, status: int) -> Any:
    assert response.status == status, await response.text()
    body = await response.json()
    assert set(body) == {"detail"}
    return body["detail"]


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


def _same_pcm(ours: np.ndarray, theirs: np.ndarray) -> bool:
    """The same speech, sample for sample, but for rounding: two syntheses decode in windows
    sized by the speed measured as they run, and windows of another size sum the same
    convolutions in another order (2e-6 of full scale apart at most, measured on the tiny
    voice with 2 threads), which tips a 16-bit rounding here and there."""
    if ours.shape != theirs.shape:
        return False
    return int(np.max(np.abs(ours.astype(np.int32) - theirs.astype(np.int32)), initial=0)) <= 1


async def test_an_unedited_query_is_the_wyoming_sides_audio(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, client = site
    happy = (await style_ids(client))["Happy"]
    body = await query(client, TEXT, happy)
    wyoming = b""

    async def on_piece(piece: PcmPiece) -> None:
        nonlocal wyoming
        wyoming += piece.pcm

    resolved = await fixture.service.voice_loading.resolve("tiny", "Happy")
    await fixture.service.synthesize(resolved, TEXT, on_piece)
    expected = np.frombuffer(wyoming, dtype="<i2")
    bare = read_wav(
        await synthesis(client, {**body, "prePhonemeLength": 0, "postPhonemeLength": 0}, happy)
    )
    assert bare.rate == 44100 and bare.channels == 1
    assert _same_pcm(bare.mono, expected)
    # As sent (0.1 s before and after): the same samples with the silence they lack added.
    padded = read_wav(await synthesis(client, body, happy)).mono
    before, _, after = trim_zeros(padded)
    start = int(np.flatnonzero(padded)[0]) - int(np.flatnonzero(expected)[0])
    assert _same_pcm(padded[start : start + len(expected)], expected)
    assert before >= 0.1 * 44100 - 1 and after >= 0.1 * 44100 - 1


async def test_fields_left_out_take_the_servers_defaults(
    site: tuple[WebFixture, TestClient],
) -> None:
    _, client = site
    neutral = (await style_ids(client))["Neutral"]
    body = await query(client, "今日はいい天気ですね。", neutral)
    assert (
        body["tempoDynamicsScale"] == 0.0
    )  # the server's --tempo-dynamics-scale 0, not AivisSpeech's 1
    full = await synthesis(client, body, neutral)
    # A VOICEVOX client's query model has no tempoDynamicsScale: it sends none, or null.
    left_out = {k: v for k, v in body.items() if k not in ("tempoDynamicsScale", "speedScale")}
    assert await synthesis(client, {**left_out, "intonationScale": None}, neutral) == full
    assert await synthesis(client, {**body, "tempoDynamicsScale": 1.0}, neutral) != full


async def test_query_fields_change_the_audio(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    neutral = (await style_ids(client))["Neutral"]
    base = await query(
        client, "今日はいい天気ですね。", neutral, prePhonemeLength=0, postPhonemeLength=0
    )
    plain = read_wav(await synthesis(client, base, neutral))
    fast = read_wav(await synthesis(client, {**base, "speedScale": 2.0}, neutral))
    assert 0.4 < fast.seconds / plain.seconds < 0.6
    higher = read_wav(await synthesis(client, {**base, "pitchScale": 0.15}, neutral))
    # The length comes back within the rounding of the longer phonemes to whole frames.
    assert higher.seconds == pytest.approx(plain.seconds, rel=0.03)
    assert np.abs(higher.mono[:1000].astype(int) - plain.mono[:1000]).max() > 10 * WINDOW_LSB
    quieter = read_wav(await synthesis(client, {**base, "volumeScale": 0.5}, neutral))
    assert np.abs(quieter.mono.astype(int) - plain.mono // 2).max() <= 1
    stereo = read_wav(
        await synthesis(
            client, {**base, "outputStereo": True, "outputSamplingRate": 24000}, neutral
        )
    )
    assert (stereo.rate, stereo.channels) == (24000, 2)
    assert np.array_equal(stereo.samples[:, 0], stereo.samples[:, 1])
    assert abs(stereo.seconds - plain.seconds) < 0.001
    silence = read_wav(
        await synthesis(
            client, {**base, "prePhonemeLength": 1.0, "postPhonemeLength": 0.5}, neutral
        )
    )
    before, _, after = trim_zeros(silence.mono)
    assert before >= 44100 - 1 and after >= 0.5 * 44100 - 1
    two = await query(
        client, "おはよう。こんにちは。", neutral, prePhonemeLength=0, postPhonemeLength=0
    )
    short = read_wav(await synthesis(client, {**two, "pauseLength": 0.1}, neutral))
    long = read_wav(await synthesis(client, {**two, "pauseLength": 1.1}, neutral))
    assert long.seconds - short.seconds == pytest.approx(1.0, abs=0.02)
    scaled = read_wav(await synthesis(client, {**two, "pauseLengthScale": 3.0}, neutral))
    assert scaled.seconds > read_wav(await synthesis(client, two, neutral)).seconds
    # The style's strength (Neutral is the mean of the styles: no strength to change).
    happy = (await style_ids(client))["Happy"]
    weak = read_wav(await synthesis(client, {**base, "intonationScale": 0.0}, happy))
    # Strength 0: the mean style, Neutral. Not bit for bit: the decode windows follow the
    # measured speed, and a busy machine moves them, which changes samples by 1 LSB.
    assert weak.mono.shape == plain.mono.shape
    assert largest_difference(weak.mono, plain.mono) <= WINDOW_LSB
    strong = read_wav(await synthesis(client, {**base, "intonationScale": 2.0}, happy))
    assert (
        strong.mono.shape != plain.mono.shape
        or largest_difference(strong.mono, plain.mono) > 10 * WINDOW_LSB
    )


WINDOW_LSB = 1
"""How far two syntheses of the same input may differ when the decode windows differ (they
follow the machine's measured speed): 1 LSB, measured."""


def largest_difference(ours: np.ndarray, theirs: np.ndarray) -> int:
    """The largest sample difference of two same-length recordings."""
    return int(np.abs(ours.astype(np.int32) - theirs.astype(np.int32)).max())


async def test_edited_accent_phrases_are_spoken(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    neutral = (await style_ids(client))["Neutral"]
    base = await query(client, "箸と橋。", neutral, prePhonemeLength=0, postPhonemeLength=0)
    plain = read_wav(await synthesis(client, base, neutral)).mono
    moved = json.loads(json.dumps(base))
    assert moved["accent_phrases"][0]["accent"] == 1
    moved["accent_phrases"][0]["accent"] = 2
    accent_moved = read_wav(await synthesis(client, moved, neutral)).mono
    assert not np.array_equal(accent_moved, plain)
    longer = json.loads(json.dumps(base))
    longer["accent_phrases"][0]["moras"][:2] = [{"text": k} for k in "ハハハハシ"]
    assert len(read_wav(await synthesis(client, longer, neutral)).mono) > len(plain)
    # A VOICEVOX-made query: no kana, a pause mora: read from the morae alone.
    voicevox = {**base, "kana": None}
    voicevox["accent_phrases"][0]["pause_mora"] = {"text": "、", "vowel": "pau"}
    assert len(read_wav(await synthesis(client, voicevox, neutral)).mono) > 0


async def test_streamed_synthesis_is_the_same_wav(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    neutral = (await style_ids(client))["Neutral"]
    body = await query(client, "おはようございます。今日は晴れです。", neutral)
    whole = await synthesis(client, body, neutral)
    response = await client.post(
        "/synthesis", params={"speaker": neutral, "stream": "true"}, json=body
    )
    assert "Content-Length" not in response.headers
    streamed = await response.read()
    assert streamed[:4] == b"RIFF" and streamed[4:8] == b"\xff\xff\xff\xff"
    assert streamed[22:36] == whole[22:36]
    assert _same_pcm(np.frombuffer(streamed[44:], "<i2"), np.frombuffer(whole[44:], "<i2"))


async def test_streaming_synthesis_sends_its_first_bytes_before_the_synthesis_ends(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, client = site
    neutral = (await style_ids(client))["Neutral"]
    text = "おはようございます。" + "今日は晴れです。" * 10
    body = await query(client, text, neutral)
    whole = await synthesis(client, body, neutral)
    manifest = await (await client.get("/engine_manifest")).json()
    assert manifest["supported_features"]["streaming_synthesis"] is True
    response = await client.post("/streaming_synthesis", params={"speaker": neutral}, json=body)
    assert response.status == 200 and response.headers["Content-Type"] == "audio/wav"
    assert "Content-Length" not in response.headers
    streamed = bytearray(await response.content.readexactly(44 + 2))  # the header, then sound
    # Hold the synthesis thread: whatever the synthesis had left cannot be made meanwhile.
    release = threading.Event()
    held = asyncio.ensure_future(fixture.service.workers.synthesize(release.wait, 30))
    try:
        await asyncio.sleep(0.3)
        streamed += response.content.read_nowait()  # what had come by then
        assert len(streamed) < len(whole), "the WAV was complete before its first bytes"
    finally:
        release.set()
        await held
    streamed += await response.read()
    assert streamed[:4] == b"RIFF" and streamed[4:8] == b"\xff\xff\xff\xff"
    assert streamed[22:36] == whole[22:36]  # channels, rate, bytes per second
    # the same audio as /synthesis, within one step of rounding
    assert _same_pcm(np.frombuffer(streamed[44:], "<i2"), np.frombuffer(whole[44:], "<i2"))


async def test_a_client_leaving_a_streaming_synthesis_stops_it(
    site: tuple[WebFixture, TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    _, client = site
    neutral = (await style_ids(client))["Neutral"]
    body = await query(client, "おはようございます。" + "今日は晴れです。" * 20, neutral)
    caplog.set_level(logging.DEBUG, "wyoming_hayakoe.service.syntheses")
    response = await client.post("/streaming_synthesis", params={"speaker": neutral}, json=body)
    await response.content.readexactly(44 + 2)
    response.close()  # the client goes away
    for _ in range(100):
        if any("stopped early" in m for m in caplog.messages):
            break
        await asyncio.sleep(0.05)
    assert any("stopped early" in m for m in caplog.messages), caplog.messages


async def test_multi_synthesis_zips_one_wav_per_query(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    neutral = (await style_ids(client))["Neutral"]
    queries = [await query(client, text, neutral) for text in ("はい。", "いいえ。")]
    response = await client.post("/multi_synthesis", params={"speaker": neutral}, json=queries)
    assert response.status == 200 and response.headers["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(await response.read())) as archive:
        assert archive.namelist() == ["001.wav", "002.wav"]
        for name, body in zip(archive.namelist(), queries, strict=True):
            assert archive.read(name) == await synthesis(client, body, neutral)
    mixed = [queries[0], {**queries[1], "outputSamplingRate": 24000}]
    response = await client.post("/multi_synthesis", params={"speaker": neutral}, json=mixed)
    assert "サンプリングレート" in await detail(response, 422)


# ----- errors -----


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
