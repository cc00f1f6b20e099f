"""The VOICEVOX-compatible API's syntheses over aiohttp's test client, on a real service with
the tiny voice: an unedited query sounds as the Wyoming side does, what each query field and
an edited accent phrase change, streamed and zipped syntheses."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
import zipfile

import numpy as np
import pytest
from aiohttp.test_utils import TestClient
from voicevox_utils import detail, query, read_wav, same_pcm, style_ids, synthesis, trim_zeros
from web_utils import WebFixture, api_site_fixture, model_cache_fixture

from wyoming_hayakoe.inference.params import SynthesisParams
from wyoming_hayakoe.service import SpeechRequest

model_cache = model_cache_fixture()
site = api_site_fixture(SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0))
"""The tiny voice served with zero noise (the same text gives the same samples)."""
TEXT = "こんにちは。今日は7:30に起きました！"


async def test_an_unedited_query_is_the_wyoming_sides_audio(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, client = site
    happy = (await style_ids(client))["Happy"]
    body = await query(client, TEXT, happy)
    wyoming = await fixture.service.speech(SpeechRequest(TEXT, "tiny", "Happy"))
    expected = np.frombuffer(await wyoming.whole(), dtype="<i2")
    bare = read_wav(
        await synthesis(client, {**body, "prePhonemeLength": 0, "postPhonemeLength": 0}, happy)
    )
    assert bare.rate == 44100 and bare.channels == 1
    assert same_pcm(bare.mono, expected)
    # As sent (0.1 s before and after): the same samples with the silence they lack added.
    padded = read_wav(await synthesis(client, body, happy)).mono
    before, _, after = trim_zeros(padded)
    start = int(np.flatnonzero(padded)[0]) - int(np.flatnonzero(expected)[0])
    assert same_pcm(padded[start : start + len(expected)], expected)
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
    assert same_pcm(np.frombuffer(streamed[44:], "<i2"), np.frombuffer(whole[44:], "<i2"))


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
    assert same_pcm(np.frombuffer(streamed[44:], "<i2"), np.frombuffer(whole[44:], "<i2"))


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
