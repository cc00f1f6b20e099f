"""A request the service owns: an adapter's settings become the engine's parameters and the
output's finishing in the service, once, and the finishing runs off the event loop."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import numpy as np
import pytest
from fake_engine import FakeEngine, fake_pcm
from inprocess import Running, serving

from wyoming_hayakoe.engine.finishing import Finisher
from wyoming_hayakoe.errors import TextError
from wyoming_hayakoe.inference.params import SynthesisParams
from wyoming_hayakoe.knobs import INTONATION, SPEED, TEMPO_DYNAMICS
from wyoming_hayakoe.service import SpeechRequest, SpeechSettings
from wyoming_hayakoe.service.request import (
    default_settings,
    finishes,
    finishing,
    synthesis_params,
)

BASE = SynthesisParams(length_scale=0.8, style_weight=2.0, sdp_ratio=0.5, style="Happy")


# ----- settings -> parameters: pure -----


def test_no_setting_leaves_the_servers_parameters_and_audio_as_they_are() -> None:
    assert synthesis_params(BASE, SpeechSettings()) is BASE
    assert not finishes(SpeechSettings())
    # a new query's defaults, sent back as they came, ask for the same parameters
    again = synthesis_params(BASE, default_settings(BASE))
    knobs = ("length_scale", "style_weight", "sdp_ratio")
    assert [getattr(again, name) for name in knobs] == pytest.approx(
        [getattr(BASE, name) for name in knobs]
    )
    assert dataclasses.replace(again, **{name: getattr(BASE, name) for name in knobs}) == BASE


def test_each_setting_sets_its_own_parameter() -> None:
    settings = SpeechSettings(speed=1.25, intonation=1.5, tempo=2.0, noise=0.1, noise_w=0.2)
    params = synthesis_params(BASE, settings)
    assert params.length_scale == pytest.approx(SPEED.to_param(1.25))
    assert params.style_weight == pytest.approx(INTONATION.to_param(1.5))
    assert params.sdp_ratio == pytest.approx(TEMPO_DYNAMICS.to_param(2.0))
    assert (params.noise_scale, params.noise_scale_w) == (0.1, 0.2)
    assert (params.style, params.speaker_id) == (BASE.style, BASE.speaker_id)


def test_a_raised_pitch_is_synthesized_longer_and_pauses_follow_the_speed() -> None:
    raised = synthesis_params(BASE, SpeechSettings(pitch=0.25))
    assert raised.length_scale == pytest.approx(BASE.length_scale * 1.25)
    faster = synthesis_params(BASE, SpeechSettings(speed=2.0, pause_length=0.5, pause_scale=3))
    assert faster.pause_seconds == pytest.approx(0.25)
    assert faster.pause_scale == 3
    # with no speed of its own, the server's speed (1 / 0.8) shortens the pause
    assert synthesis_params(BASE, SpeechSettings(pause_length=1.0)).pause_seconds == (
        pytest.approx(0.8)
    )
    assert finishing(BASE, SpeechSettings(volume=2)).speed == pytest.approx(1.25)
    assert finishes(SpeechSettings(volume=2)) and finishes(SpeechSettings(sample_rate=8000))


# ----- a request through the service -----


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    async with serving(tmp_path, FakeEngine(tmp_path)) as started:
        yield started


async def test_finishing_is_done_off_the_event_loop_piece_by_piece(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    piece = Finisher.piece

    def recorded(self: Finisher, pcm: bytes) -> bytes:
        threads.append(threading.current_thread().name)
        return piece(self, pcm)

    monkeypatch.setattr(Finisher, "piece", recorded)
    text = "はい。"
    plain = await running.service.speech(SpeechRequest(text, "tiny"))
    assert plain.streams and plain.channels == 1
    louder = await running.service.speech(
        SpeechRequest(text, "tiny", settings=SpeechSettings(volume=0.5, stereo=True))
    )
    assert louder.streams and louder.channels == 2
    heard: list[bytes] = []
    await louder.play(_append_to(heard))
    assert threads and threading.main_thread().name not in threads
    samples = np.frombuffer(b"".join(heard), dtype="<i2")
    expected = np.frombuffer(await plain.whole(), dtype="<i2")
    assert np.array_equal(samples[::2], samples[1::2])  # the same audio in both channels
    assert np.allclose(samples[::2], expected * 0.5, atol=1)
    assert await plain.whole() == fake_pcm(text)


async def test_a_rate_change_is_sent_whole_at_its_rate(running: Running) -> None:
    settings = SpeechSettings(sample_rate=8000)
    speech = await running.service.speech(SpeechRequest("はい。", "tiny", settings=settings))
    assert not speech.streams and speech.sample_rate == 8000
    heard: list[bytes] = []
    await speech.play(_append_to(heard))
    voice_rate = (await running.service.speech(SpeechRequest("はい。", "tiny"))).sample_rate
    assert len(heard) == 1
    assert len(heard[0]) // 2 == round(len(fake_pcm("はい。")) // 2 * 8000 / voice_rate)


async def test_a_text_over_the_limit_is_refused_before_its_voice_is_loaded(
    running: Running,
) -> None:
    limit = running.service.settings.max_text_length
    with pytest.raises(TextError, match=f"the limit is {limit}"):
        await running.service.speech(SpeechRequest("あ" * (limit + 1), "no-such-voice"))


async def test_a_stream_counts_its_text_and_speaks_its_sentences_in_order(
    running: Running,
) -> None:
    limit = running.service.settings.max_text_length
    stream = running.service.text_stream("tiny", None)
    assert stream.add("こんにちは。今日") == ["こんにちは。"]
    with pytest.raises(RuntimeError):
        await stream.speak("こんにちは。", _append_to([]))
    rate = await stream.open()
    assert rate == (await running.service.speech(SpeechRequest("はい。", "tiny"))).sample_rate
    heard: list[bytes] = []
    await stream.speak("こんにちは。", _append_to(heard))
    assert b"".join(heard) == fake_pcm("こんにちは。")
    with pytest.raises(TextError, match="the rest is not spoken"):
        stream.add("あ" * limit)
    assert stream.finish() == ["今日"]


def _append_to(heard: list[bytes]) -> Callable[[bytes], Awaitable[None]]:
    async def append(data: bytes) -> None:
        heard.append(data)

    return append
