"""Wyoming event handler: one instance per client connection.

Events are routed by type through a table. Routes only update state and queue work, so the
read loop keeps reading while audio is produced: a client that hangs up is noticed at once and
its synthesis is cancelled. One worker task per connection runs the queued work in order, so
responses come back in the order of the requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial

from wyoming.error import Error
from wyoming.event import Event, Eventable
from wyoming.info import Describe
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
    SynthesizeVoice,
)

from .audio_response import AudioResponse
from .engine import Continuation, SentenceAudio
from .errors import (
    DownloadError,
    HayakoeError,
    ModelFileError,
    TextError,
    UnknownStyleError,
    UnknownVoiceError,
)
from .service import ResolvedVoice, TtsService
from .text_stream import SentenceStream

_LOGGER = logging.getLogger(__name__)

# Machine-readable codes of the ``error`` events, most specific class first.
_ERROR_CODES: tuple[tuple[type[Exception], str], ...] = (
    (UnknownVoiceError, "unknown-voice"),
    (UnknownStyleError, "unknown-style"),
    (TextError, "bad-text"),
    (ModelFileError, "model-file"),
    (DownloadError, "download-failed"),
    (HayakoeError, "synthesis-failed"),
)

Job = Callable[[], Awaitable[None]]


def _event_type(eventable: Eventable) -> str:
    return eventable.event().type


@dataclass(frozen=True)
class HandlerOptions:
    samples_per_chunk: int
    streaming: bool
    max_text_length: int


@dataclass
class _TextStream:
    """State of one synthesize-start ... synthesize-stop stream."""

    voice: SynthesizeVoice | None
    splitter: SentenceStream = field(default_factory=SentenceStream)
    chars: int = 0
    resolved: ResolvedVoice | None = None
    out: AudioResponse | None = None
    failed: bool = False
    over_limit: bool = False
    # Sentences reach the engine one by one: this carries the pause across them.
    continuation: Continuation = field(default_factory=Continuation)


class HayakoeEventHandler(AsyncEventHandler):
    def __init__(
        self,
        service: TtsService,
        options: HandlerOptions,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        super().__init__(reader, writer)
        self._service = service
        self._options = options
        self._jobs: asyncio.Queue[Job] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._stream: _TextStream | None = None
        self._routes: dict[str, Callable[[Event], None]] = {
            _event_type(Describe()): self._on_describe,
            _event_type(Ping()): self._on_ping,
            _event_type(Synthesize(text="")): self._on_synthesize,
        }
        if options.streaming:
            self._routes.update(
                {
                    _event_type(SynthesizeStart()): self._on_stream_start,
                    _event_type(SynthesizeChunk(text="")): self._on_stream_chunk,
                    _event_type(SynthesizeStop()): self._on_stream_stop,
                }
            )

    async def handle_event(self, event: Event) -> bool:
        route = self._routes.get(event.type)
        if route is None:
            _LOGGER.debug("Ignoring event %s", event.type)
        else:
            route(event)
        return True

    async def disconnect(self) -> None:
        if self._worker is not None:
            self._worker.cancel()  # drops the sentences not yet started
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker

    # ----- routes: quick, they only queue work -----

    def _queue(self, job: Job) -> None:
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name="hayakoe connection worker")
        self._jobs.put_nowait(job)

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
        self._queue(partial(self._synthesize_text, Synthesize.from_event(event)))

    def _on_stream_start(self, event: Event) -> None:
        if self._stream is not None:
            _LOGGER.warning("synthesize-start before synthesize-stop: ending the previous stream")
            self._close_stream(self._stream)
        start = SynthesizeStart.from_event(event)
        stream = _TextStream(voice=start.voice)
        self._stream = stream
        self._queue(partial(self._begin_stream, stream))

    def _on_stream_chunk(self, event: Event) -> None:
        stream = self._stream
        if stream is None:
            _LOGGER.debug("Ignoring synthesize-chunk outside a text stream")
            return
        text = SynthesizeChunk.from_event(event).text
        stream.chars += len(text)
        if stream.chars > self._options.max_text_length:
            if not stream.over_limit:
                stream.over_limit = True
                self._queue(partial(self._fail_stream, stream))
            return
        for sentence in stream.splitter.feed(text):
            self._queue(partial(self._stream_sentence, stream, sentence))

    def _on_stream_stop(self, event: Event) -> None:
        stream = self._stream
        if stream is None:
            _LOGGER.debug("Ignoring synthesize-stop outside a text stream")
            return
        self._close_stream(stream)

    def _close_stream(self, stream: _TextStream) -> None:
        self._stream = None
        for sentence in stream.splitter.finish():
            self._queue(partial(self._stream_sentence, stream, sentence))
        self._queue(partial(self._end_stream, stream))

    # ----- work, run in order by the connection's worker -----

    async def _work(self) -> None:
        while True:
            job = await self._jobs.get()
            try:
                await job()
            except HayakoeError as err:
                _LOGGER.warning("Request failed: %s", err)
                await self._send_error(str(err), _error_code(err))
            except ConnectionError:
                _LOGGER.debug("Client went away")
                self._drop_jobs()
                return
            except Exception as err:
                _LOGGER.exception("Unexpected error")
                await self._send_error(f"Internal error: {err}", "internal-error")
            finally:
                self._jobs.task_done()

    def _drop_jobs(self) -> None:
        while not self._jobs.empty():
            self._jobs.get_nowait()
            self._jobs.task_done()

    async def finish(self) -> None:
        """Wait until every request received so far has been answered."""
        if self._worker is not None and not self._worker.done():
            await self._jobs.join()

    async def _send_error(self, text: str, code: str) -> None:
        with contextlib.suppress(ConnectionError):
            await self.write_event(Error(text=text, code=code).event())

    async def _write_info(self) -> None:
        await self.write_event(self._service.info().event())

    async def _resolve(self, voice: SynthesizeVoice | None) -> ResolvedVoice:
        name = voice.name if voice is not None else None
        speaker = voice.speaker if voice is not None else None
        return await self._service.resolve(name, speaker)

    def _new_audio(self, resolved: ResolvedVoice) -> AudioResponse:
        return AudioResponse(
            self.write_event, resolved.voice.sample_rate, self._options.samples_per_chunk
        )

    async def _synthesize_text(self, request: Synthesize) -> None:
        resolved = await self._resolve(request.voice)
        out = self._new_audio(resolved)

        async def on_sentence(audio: SentenceAudio) -> None:
            await out.pcm(audio.pcm)

        await self._service.synthesize(resolved, request.text, on_sentence)
        await out.stop()

    async def _begin_stream(self, stream: _TextStream) -> None:
        try:
            stream.resolved = await self._resolve(stream.voice)
        except HayakoeError:
            stream.failed = True
            raise
        stream.out = self._new_audio(stream.resolved)

    async def _stream_sentence(self, stream: _TextStream, sentence: str) -> None:
        if stream.failed or stream.resolved is None or stream.out is None:
            return
        out = stream.out

        async def on_sentence(audio: SentenceAudio) -> None:
            await out.pcm(audio.pcm)

        try:
            await self._service.synthesize(
                stream.resolved, sentence, on_sentence, stream.continuation
            )
        except TextError as err:
            # One sentence the engine cannot read must not silence the rest of an answer.
            _LOGGER.warning("Skipping sentence %r: %s", sentence, err)
        except HayakoeError:
            stream.failed = True
            raise

    async def _fail_stream(self, stream: _TextStream) -> None:
        stream.failed = True
        raise TextError(
            f"Text stream is over {self._options.max_text_length} characters "
            f"(--max-text-length); the rest is not spoken"
        )

    async def _end_stream(self, stream: _TextStream) -> None:
        if not stream.failed and stream.out is not None:
            await stream.out.stop()
        await self.write_event(SynthesizeStopped().event())


def _error_code(err: Exception) -> str:
    for cls, code in _ERROR_CODES:
        if isinstance(err, cls):
            return code
    return "internal-error"
