"""Wyoming event handler: one instance per client connection.

Events are routed by type through a table. Routes only check the request, update state and
queue work for the connection's worker (see :mod:`.connection`, which also bounds what a
client can make the server spend), so the read loop keeps reading while audio is produced.

A synthesis that fails ends the connection once its answer is written, because Home
Assistant's TTS client waits for the end of the audio and skips ``error`` events: after an
``error`` for ``synthesize``, at once; in a text stream, after its ``synthesize-stopped`` (the
streaming client reads until that). Errors about other events keep the connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from wyoming.event import Event, Eventable
from wyoming.info import Describe
from wyoming.ping import Ping, Pong
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
    SynthesizeVoice,
)

from ..errors import HayakoeError, TextError
from ..service import SpeechRequest, TextStream, TtsService
from .audio_events import AudioResponse
from .connection import Connection, Job
from .info import build_info
from .protocol import (
    BadRequest,
    OversizedEvent,
    max_data_bytes,
    parse_stream_chunk,
    parse_stream_start,
    parse_synthesize,
)

_LOGGER = logging.getLogger(__name__)


def _is_synthesis_request(event_type: str) -> bool:
    """Requests answered with audio: an error about one of these ends the connection."""
    return Synthesize.is_type(event_type) or SynthesizeStart.is_type(event_type)


@dataclass(frozen=True)
class HandlerOptions:
    samples_per_chunk: int
    """Samples per ``audio-chunk`` event."""
    client_timeout: float
    """Seconds a write may wait for the client, or a started event for its end."""
    opening_silence: bool = False
    """Open each reply with a short silence as soon as its text is in (--first-audio-within:
    a voice satellite gives up on a reply that has not started playing within 2 s)."""


@dataclass
class _TextStream:
    """What the protocol keeps of one synthesize-start ... synthesize-stop stream (the text
    and its sentences are the service's)."""

    text: TextStream
    out: AudioResponse | None = None
    failed: bool = False  # nothing more is spoken
    error_sent: bool = False  # the connection ends with the stream
    over_limit: TextError | None = None


class HayakoeEventHandler(Connection):
    def __init__(
        self,
        service: TtsService,
        options: HandlerOptions,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self._max_text_length = service.settings.max_text_length
        super().__init__(
            reader, writer, max_data_bytes(self._max_text_length), options.client_timeout
        )
        self._service = service
        self._options = options
        self._stream: _TextStream | None = None
        self._routes: list[tuple[type[Eventable], Callable[[Event], None]]] = [
            (Describe, self._on_describe),
            (Ping, self._on_ping),
            (Synthesize, self._on_synthesize),
        ]
        if service.settings.streaming:
            self._routes += [
                (SynthesizeStart, self._on_stream_start),
                (SynthesizeChunk, self._on_stream_chunk),
                (SynthesizeStop, self._on_stream_stop),
            ]

    def _route(self, event_type: str) -> Callable[[Event], None] | None:
        return next((route for kind, route in self._routes if kind.is_type(event_type)), None)

    async def handle_event(self, event: Event) -> bool:
        route = self._route(event.type)
        if route is None:
            _LOGGER.debug("Ignoring event %s", event.type)
            return True
        try:
            route(event)
        except BadRequest as err:
            _LOGGER.warning("Bad request: %s", err)
            self._refuse(event.type, str(err), "bad-request")
        return True

    def _refuse(self, event_type: str, text: str, code: str) -> None:
        """Answer an event with an error; end what it belongs to as the client expects."""
        self._queue(partial(self._send_error, text, code))
        if SynthesizeChunk.is_type(event_type) and self._stream is not None:
            self._stream.error_sent = True
        elif _is_synthesis_request(event_type):
            self._queue(self.end_connection)

    def on_oversized(self, err: OversizedEvent) -> None:
        """Data too big for any text within the limit: its bytes were skipped, not kept."""
        _LOGGER.warning("Skipped a %s event with %d bytes of data", err.event_type, err.size)
        if SynthesizeChunk.is_type(err.event_type):
            if self._stream is not None:  # outside a stream, chunks are ignored anyway
                self._stream_over_limit(self._stream, self._stream.text.over_limit())
        elif Synthesize.is_type(err.event_type) and self._stream is not None:
            _LOGGER.debug("Ignoring synthesize inside a text stream")
        # unknown events are ignored, whatever their size
        elif self._route(err.event_type) is not None:
            message = (
                f"The {err.event_type} event carries {err.size} bytes of data, more than any "
                f"text of at most {self._max_text_length} characters "
                "(--max-text-length) needs"
            )
            self._refuse(err.event_type, message, "bad-text")

    # ----- routes: quick, they only check the request and queue work -----

    def _on_describe(self, event: Event) -> None:
        self._queue(partial(self._write_info))

    def _on_ping(self, event: Event) -> None:
        text = Ping.from_event(event).text
        self._queue(partial(self.write_event, Pong(text=text).event()))

    def _on_synthesize(self, event: Event) -> None:
        if self._stream is not None:
            # Home Assistant sends the whole text again for servers without streaming.
            _LOGGER.debug("Ignoring synthesize inside a text stream")
            return
        request = parse_synthesize(event)
        self._queue(partial(self._or_end_connection, partial(self._synthesize_text, request)))

    def _on_stream_start(self, event: Event) -> None:
        start = parse_stream_start(event)
        if self._stream is not None:
            _LOGGER.warning("synthesize-start before synthesize-stop: ending the previous stream")
            self._close_stream(self._stream)
        name, speaker = _voice_and_speaker(start.voice)
        stream = _TextStream(self._service.text_stream(name, speaker))
        self._stream = stream
        self._queue_in(stream, partial(self._begin_stream, stream))

    def _on_stream_chunk(self, event: Event) -> None:
        stream = self._stream
        if stream is None:
            _LOGGER.debug("Ignoring synthesize-chunk outside a text stream")
            return
        try:
            sentences = stream.text.add(parse_stream_chunk(event).text)
        except TextError as err:
            self._stream_over_limit(stream, err)
            return
        for sentence in sentences:
            self._queue_in(stream, partial(self._stream_sentence, stream, sentence))

    def _stream_over_limit(self, stream: _TextStream, error: TextError) -> None:
        if stream.over_limit is None:
            stream.over_limit = error
            self._queue_in(stream, partial(self._fail_stream, stream, error))

    def _on_stream_stop(self, event: Event) -> None:
        stream = self._stream
        if stream is None:
            _LOGGER.debug("Ignoring synthesize-stop outside a text stream")
            return
        self._close_stream(stream)

    def _close_stream(self, stream: _TextStream) -> None:
        self._stream = None
        for sentence in stream.text.finish():
            self._queue_in(stream, partial(self._stream_sentence, stream, sentence))
        self._queue(partial(self._end_stream, stream))

    def _queue_in(self, stream: _TextStream, job: Job) -> None:
        self._queue(partial(self._in_stream, stream, job))

    # ----- work, run in order by the connection's worker -----

    async def _or_end_connection(self, job: Job) -> None:
        """A failed request's error is the last thing the client gets."""
        try:
            await job()
        except ConnectionError:
            raise
        except Exception as err:
            await self.report(err)
            await self.end_connection()

    async def _in_stream(self, stream: _TextStream, job: Job) -> None:
        try:
            await job()
        except ConnectionError:
            raise
        except Exception as err:
            stream.error_sent = True
            await self.report(err)

    async def _write_info(self) -> None:
        info = build_info(self._service.voice_entries, self._service.settings.streaming)
        await self.write_event(info.event())

    def _new_audio(self, sample_rate: int) -> AudioResponse:
        return AudioResponse(self.write_event, sample_rate, self._options.samples_per_chunk)

    async def _synthesize_text(self, request: Synthesize) -> None:
        name, speaker = _voice_and_speaker(request.voice)
        speech = await self._service.speech(SpeechRequest(request.text, name, speaker))
        out = self._new_audio(speech.sample_rate)
        if self._options.opening_silence:
            await out.open()
        await speech.play(out.pcm)
        await out.stop()

    async def _begin_stream(self, stream: _TextStream) -> None:
        try:
            stream.out = self._new_audio(await stream.text.open())
        except HayakoeError:
            stream.failed = True
            raise

    async def _stream_sentence(self, stream: _TextStream, sentence: str) -> None:
        if stream.failed or stream.out is None:
            return
        out = stream.out
        if self._options.opening_silence:
            await out.open()  # the first sentence is in: the reply starts
        try:
            await stream.text.speak(sentence, out.pcm)
        except TextError as err:
            # One sentence the engine cannot read must not silence the rest of an answer.
            _LOGGER.warning("Skipping sentence %r: %s", sentence, err)
        except HayakoeError:
            stream.failed = True
            raise

    async def _fail_stream(self, stream: _TextStream, error: TextError) -> None:
        stream.failed = True
        raise error

    async def _end_stream(self, stream: _TextStream) -> None:
        if not stream.failed and stream.out is not None:
            await stream.out.stop()
        await self.write_event(SynthesizeStopped().event())
        if stream.error_sent:
            await self.end_connection()


def _voice_and_speaker(voice: SynthesizeVoice | None) -> tuple[str | None, str | None]:
    """The voice a request names (None: the default) and its speaker (a style)."""
    return (None, None) if voice is None else (voice.name, voice.speaker)
