"""The server as Home Assistant's Wyoming TTS client sees it, over a real socket.

Home Assistant's one-shot client (``async_get_tts_audio``) reads until ``audio-stop`` or until
the connection closes and skips every other event, ``error`` included. Its streaming client
(``async_stream_tts_audio``) reads until ``synthesize-stopped`` or until the connection closes.
It writes the WAV header when the first ``audio-chunk`` arrives (one-shot), so audio without a
chunk becomes a 0-byte file that its mp3 conversion cannot read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeVoice,
)

from tools.server_process import TINY_VOICE_DIR, ServerProcess, start_server
from tools.wyoming_requests import Response

pytestmark = pytest.mark.skipif(
    not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing"
)

# Generous: a request that is answered at all is answered within a second or two.
ANSWER_TIMEOUT = 20
TEXT = "こんにちは。"
NOTHING_TO_SPEAK = ["👍", "。。。", "   ", "\n"]


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, tiny_voice_root_compiled: None
) -> Iterator[ServerProcess]:
    with start_server(tmp_path_factory.mktemp("ha-client"), "--threads", "1") as proc:
        yield proc


async def read_to_the_end(client: AsyncTcpClient, last: str) -> tuple[Response, bool]:
    """Read as Home Assistant does: until an event of type ``last`` or the end of the
    connection. Returns the events and whether the connection ended."""
    response = Response()
    while True:
        event = await client.read_event()
        if event is None:
            return response, True
        response.events.append(event)
        if event.type == last:
            return response, False


async def one_shot(server: ServerProcess, synthesize: Synthesize) -> tuple[Response, bool]:
    async with server.client() as client:
        await client.write_event(synthesize.event())
        return await asyncio.wait_for(read_to_the_end(client, "audio-stop"), ANSWER_TIMEOUT)


async def streamed(
    server: ServerProcess, voice: SynthesizeVoice | None, text: str, read_past_stop: bool = False
) -> tuple[Response, bool]:
    """The events Home Assistant's streaming client writes, in its order; with
    ``read_past_stop``, also whether the connection ends after ``synthesize-stopped``."""
    requests: list[Event] = [SynthesizeStart(voice=voice).event()]
    requests += [SynthesizeChunk(text=text[i : i + 2]).event() for i in range(0, len(text), 2)]
    requests += [Synthesize(text=text, voice=voice).event(), SynthesizeStop().event()]
    async with server.client() as client:
        for request in requests:
            await client.write_event(request)
        response, ended = await asyncio.wait_for(
            read_to_the_end(client, "synthesize-stopped"), ANSWER_TIMEOUT
        )
        if read_past_stop and not ended:  # after synthesize-stopped: the end of the connection?
            ended = await asyncio.wait_for(client.read_event(), ANSWER_TIMEOUT) is None
        return response, ended


@pytest.mark.parametrize(
    ("voice", "code"),
    [
        (SynthesizeVoice(name="no-such-voice"), "unknown-voice"),
        (SynthesizeVoice(name="tiny", speaker="NoSuchStyle"), "unknown-style"),
        (SynthesizeVoice(name="tiny (NoSuchStyle)"), "unknown-style"),
    ],
)
async def test_error_on_a_request_ends_the_connection(
    server: ServerProcess, voice: SynthesizeVoice, code: str
) -> None:
    response, ended = await one_shot(server, Synthesize(text=TEXT, voice=voice))
    assert response.types == ["error"] and ended
    assert response.errors[0].code == code


@pytest.mark.parametrize(
    ("voice", "code"),
    [
        (SynthesizeVoice(name="no-such-voice"), "unknown-voice"),
        (SynthesizeVoice(name="tiny", speaker="NoSuchStyle"), "unknown-style"),
    ],
)
async def test_error_in_a_stream_is_stopped_then_the_connection_ends(
    server: ServerProcess, voice: SynthesizeVoice, code: str
) -> None:
    response, ended = await streamed(server, voice, TEXT + TEXT, read_past_stop=True)
    assert response.types == ["error", "synthesize-stopped"]
    assert response.errors[0].code == code
    assert ended


async def test_a_good_request_keeps_the_connection(server: ServerProcess) -> None:
    async with server.client() as client:
        for _ in range(2):
            await client.write_event(Synthesize(text=TEXT).event())
            response, ended = await asyncio.wait_for(
                read_to_the_end(client, "audio-stop"), ANSWER_TIMEOUT
            )
            assert not ended and response.types[-1] == "audio-stop"
            assert len(response.pcm) > 0


def assert_audio_with_a_chunk(response: Response) -> None:
    audio = [t for t in response.types if t.startswith("audio-")]
    assert audio[0] == "audio-start" and audio[-1] == "audio-stop", response.types
    assert "audio-chunk" in audio, response.types
    start = response.starts[0]
    assert all(len(chunk.audio) > 0 for chunk in response.chunks)
    # A short silence: audible nothing, well under half a second.
    assert all(chunk.audio == bytes(len(chunk.audio)) for chunk in response.chunks)
    seconds = len(response.pcm) / (start.rate * start.width * start.channels)
    assert 0 < seconds <= 0.5


@pytest.mark.parametrize("text", NOTHING_TO_SPEAK)
async def test_nothing_to_speak_still_sends_a_chunk(server: ServerProcess, text: str) -> None:
    response, ended = await one_shot(server, Synthesize(text=text))
    assert not ended
    assert_audio_with_a_chunk(response)


@pytest.mark.parametrize("text", NOTHING_TO_SPEAK)
async def test_nothing_to_speak_in_a_stream_still_sends_a_chunk(
    server: ServerProcess, text: str
) -> None:
    response, _ = await streamed(server, None, text)
    assert response.types[-1] == "synthesize-stopped"
    assert_audio_with_a_chunk(Response(response.events[:-1]))
