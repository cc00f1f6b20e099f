"""Wyoming requests as the tests and the soak send them, and everything they got back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.tts import Synthesize, SynthesizeVoice

from tools.engine_audio import opening_silence
from tools.server_process import ServerProcess


@dataclass
class Response:
    """Everything one request produced, in order."""

    events: list[Event] = field(default_factory=list)

    def of(self, type_name: str) -> list[Event]:
        return [e for e in self.events if e.type == type_name]

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    @property
    def starts(self) -> list[AudioStart]:
        return [AudioStart.from_event(e) for e in self.of("audio-start")]

    @property
    def chunks(self) -> list[AudioChunk]:
        return [AudioChunk.from_event(e) for e in self.of("audio-chunk")]

    @property
    def stops(self) -> list[AudioStop]:
        return [AudioStop.from_event(e) for e in self.of("audio-stop")]

    @property
    def errors(self) -> list[Error]:
        return [Error.from_event(e) for e in self.of("error")]

    @property
    def pcm(self) -> bytes:
        return b"".join(chunk.audio for chunk in self.chunks)

    @property
    def words(self) -> bytes:
        """The audio after the short silence every Wyoming reply opens (--first-audio-within)."""
        opening = opening_silence(self.starts[0].rate)
        if not self.pcm.startswith(opening):
            raise ValueError(f"the reply does not open with {len(opening)} bytes of silence")
        return self.pcm[len(opening) :]


async def read_until(
    client: AsyncTcpClient, done: Callable[[Event], bool], response: Response | None = None
) -> Response:
    """Read events into ``response`` up to and including the first one ``done`` accepts."""
    response = response or Response()
    while True:
        event = await client.read_event()
        if event is None:
            raise ConnectionError(f"server closed the connection after {response.types}")
        response.events.append(event)
        if done(event):
            return response


def is_type(type_name: str) -> Callable[[Event], bool]:
    return lambda event: event.type == type_name


def ends_audio(event: Event) -> bool:
    return event.type in ("audio-stop", "error")


async def synthesize(
    client: AsyncTcpClient, text: str, voice: str | None = None, speaker: str | None = None
) -> Response:
    request_voice = SynthesizeVoice(name=voice, speaker=speaker) if voice else None
    await client.write_event(Synthesize(text=text, voice=request_voice).event())
    return await read_until(client, ends_audio)


async def first_event(client: AsyncTcpClient, type_name: str, timeout: float = 60) -> Event:
    """Skip events until one of ``type_name`` arrives."""

    async def wait() -> Event:
        while True:
            event = await client.read_event()
            if event is None:
                raise ConnectionError("server closed the connection")
            if event.type == type_name:
                return event

    return await asyncio.wait_for(wait(), timeout)


async def synthesize_refused(
    server: ServerProcess, text: str, voice: str | None = None, speaker: str | None = None
) -> Response:
    """A request the server answers with an error, on its own connection: the error is the
    last thing sent, then the connection ends (clients that wait for audio see that)."""
    async with server.client() as client:
        response = await synthesize(client, text, voice, speaker)
        assert response.types == ["error"], response.types
        assert await client.read_event() is None, "the connection goes on after the error"
    return response
