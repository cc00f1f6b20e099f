"""A reply opens with a short silence as soon as its text is in (--first-audio-within): a
voice satellite gives up on a reply that has not started playing 2 s after it asked, and on a
slow board the first words can take longer. Proven with the synthesis thread held: the
silence comes while nothing can be synthesized, and the words follow it unchanged."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_engine import FakeEngine, fake_pcm
from inprocess import Running, serving, synthesize_event
from wyoming.client import AsyncTcpClient
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from tools.engine_audio import opening_silence
from tools.wyoming_requests import Response, is_type, read_until, synthesize
from wyoming_hayakoe.text.sentences import split_text

TEXT = "リビングの電気を消しました。明日は雨です。"


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    async with serving(tmp_path, FakeEngine(tmp_path), opening_silence=True) as started:
        yield started


class _Held:
    """The synthesis thread busy until released, as on a board slower than speech."""

    def __init__(self, running: Running) -> None:
        self._release = threading.Event()
        self._task = asyncio.ensure_future(
            running.service.workers.synthesize(self._release.wait, 30)
        )

    async def release(self) -> None:
        self._release.set()
        await self._task


async def _opening(client: AsyncTcpClient) -> Response:
    """Events up to the end of the opening silence (it comes in several chunks)."""
    response = await read_until(client, is_type("audio-start"))
    silence = opening_silence(response.starts[0].rate)
    while len(response.pcm) < len(silence):
        await read_until(client, is_type("audio-chunk"), response)
    return response


def _words(text: str) -> bytes:
    return b"".join(fake_pcm(sentence.text) for sentence in split_text(text))


async def test_a_reply_opens_with_silence_before_the_words_can_be_made(running: Running) -> None:
    held = _Held(running)
    try:
        async with running.client() as client:
            await client.write_event(synthesize_event(TEXT))
            opened = await _opening(client)
            await held.release()
            rest = await read_until(client, is_type("audio-stop"))
    finally:
        await held.release()
    assert opened.types[0] == "audio-start" and set(opened.types[1:]) == {"audio-chunk"}
    assert opened.pcm == opening_silence(opened.starts[0].rate)
    assert rest.pcm == _words(TEXT)  # the words as without it


async def test_a_streamed_reply_opens_when_its_first_sentence_is_in(running: Running) -> None:
    """As Home Assistant streams a language model's answer: a few characters at a time, the
    whole text again in synthesize, then synthesize-stop."""
    held = _Held(running)
    try:
        async with running.client() as client:
            await client.write_event(SynthesizeStart().event())
            for start in range(0, len(TEXT), 4):
                await client.write_event(SynthesizeChunk(text=TEXT[start : start + 4]).event())
            opened = await _opening(client)
            await client.write_event(Synthesize(text=TEXT).event())
            await client.write_event(SynthesizeStop().event())
            await held.release()
            rest = await read_until(client, is_type("synthesize-stopped"))
    finally:
        await held.release()
    assert opened.types[0] == "audio-start" and set(opened.types[1:]) == {"audio-chunk"}
    assert opened.pcm == opening_silence(opened.starts[0].rate)
    assert rest.pcm == _words(TEXT)
    assert rest.types[-2:] == ["audio-stop", "synthesize-stopped"]
    assert not rest.of("audio-start")  # one reply: the whole text again is not spoken again


async def test_a_text_too_long_gets_its_error_before_any_audio(tmp_path: Path) -> None:
    async with (
        serving(
            tmp_path, FakeEngine(tmp_path), max_text_length=10, opening_silence=True
        ) as running,
        running.client() as client,
    ):
        await client.write_event(synthesize_event("あ" * 11))
        response = await read_until(client, lambda event: event.type in ("error", "audio-stop"))
    assert response.types == ["error"]


async def test_without_it_a_reply_is_the_words_alone(tmp_path: Path) -> None:
    async with serving(tmp_path, FakeEngine(tmp_path)) as running, running.client() as client:
        response: Response = await synthesize(client, TEXT)
    assert response.pcm == _words(TEXT)
