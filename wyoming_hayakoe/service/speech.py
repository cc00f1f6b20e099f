"""A request under way, as its adapter sees it: the audio as the output carries it.

:class:`Speech` is one text ready to speak (its voice loaded, its length within the limit, its
settings applied); :class:`TextStream` is a text that comes in pieces (Wyoming's
``synthesize-chunk``), split into sentences as they complete and spoken in one voice with each
pause carried over to the next sentence. The output's finishing (a VOICEVOX query's pitch,
silence, volume, rate, channels) runs on a file thread, never on the event loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..engine import Continuation, PcmPiece
from ..engine.finishing import Finisher, Finishing
from ..errors import TextError
from ..text.sentences import SentenceStream
from .flights import PieceCallback
from .workers import Workers

AudioCallback = Callable[[bytes], Awaitable[None]]
"""Receives the output's audio: 16-bit PCM at :attr:`Speech.sample_rate`, interleaved in
:attr:`Speech.channels`."""

Synthesis = Callable[[PieceCallback], Awaitable[int]]
"""Runs one synthesis, awaiting the callback for each piece of engine audio."""


class Speech:
    """One text ready to speak; :meth:`play` or :meth:`whole` synthesizes it."""

    def __init__(
        self,
        synthesis: Synthesis,
        voice_rate: int,
        finishing: Finishing | None,
        workers: Workers,
    ) -> None:
        self._synthesis = synthesis
        self._finishing = finishing
        self._workers = workers
        self._voice_rate = voice_rate

    @property
    def sample_rate(self) -> int:
        """The output's sampling rate (the voice's own unless the request set one)."""
        return self._finisher().output_rate

    @property
    def channels(self) -> int:
        return self._finisher().channels

    @property
    def streams(self) -> bool:
        """Whether :meth:`play` sends pieces as they come (no pitch or rate change, which
        needs the whole audio)."""
        return self._finisher().streams

    async def play(self, on_audio: AudioCallback) -> None:
        """Send the audio as the decoder makes it, finished piece by piece; whole at the end
        where the finishing needs all of it (not :attr:`streams`)."""
        if self._finishing is None:

            async def as_made(piece: PcmPiece) -> None:
                await on_audio(piece.pcm)

            await self._synthesis(as_made)
            return
        if not self.streams:
            await on_audio(await self.whole())
            return
        finisher = self._finisher()

        async def finished(piece: PcmPiece) -> None:
            await on_audio(await self._workers.files(_finish_piece, finisher, piece.pcm))

        await self._synthesis(finished)
        await on_audio(await self._workers.files(_finish_end, finisher))

    async def whole(self) -> bytes:
        """All of the audio, finished."""
        pieces: list[bytes] = []

        async def keep(piece: PcmPiece) -> None:
            pieces.append(piece.pcm)

        await self._synthesis(keep)
        if self._finishing is None:
            return b"".join(pieces)
        return await self._workers.files(_finish_whole, self._finisher(), pieces)

    def _finisher(self) -> Finisher:
        return Finisher(self._finishing or Finishing(), self._voice_rate)


def _finish_piece(finisher: Finisher, pcm: bytes) -> bytes:
    return finisher.channels_of(finisher.piece(pcm))


def _finish_end(finisher: Finisher) -> bytes:
    return finisher.channels_of(finisher.end())


def _finish_whole(finisher: Finisher, pieces: list[bytes]) -> bytes:
    mono = b"".join(finisher.piece(pcm) for pcm in pieces) + finisher.end()
    return finisher.channels_of(finisher.finish(mono))


SentenceSynthesis = Callable[[str, PieceCallback, Continuation], Awaitable[int]]
"""Runs one sentence of a stream (already split off, carrying the pause across sentences)."""

VoiceOpener = Callable[[], Awaitable[tuple[int, SentenceSynthesis]]]
"""Loads a stream's voice: its sampling rate, and how its sentences are synthesized."""


class TextStream:
    """A text that comes in pieces: :meth:`add` each, :meth:`finish` at its end; each sentence
    returned is spoken with :meth:`speak` once :meth:`open` has loaded the voice."""

    def __init__(self, max_chars: int, open_voice: VoiceOpener) -> None:
        self._max_chars = max_chars
        self._open_voice = open_voice
        self._splitter = SentenceStream()
        self._chars = 0
        self._continuation = Continuation()  # the pause carried across sentences
        self._speak: SentenceSynthesis | None = None

    def add(self, text: str) -> list[str]:
        """The sentences ``text`` completes; TextError once the stream so far is over
        ``--max-text-length`` (nothing of it is kept then)."""
        self._chars += len(text)
        if self._chars > self._max_chars:
            raise self.over_limit()
        return self._splitter.feed(text)

    def over_limit(self) -> TextError:
        """What a client is told of a stream that went over the limit."""
        return TextError(
            f"Text stream is over {self._max_chars} characters (--max-text-length); "
            "the rest is not spoken"
        )

    def finish(self) -> list[str]:
        """The sentences still held: the text has ended."""
        return self._splitter.finish()

    async def open(self) -> int:
        """Load the stream's voice and style (an error if it cannot be had); the audio's
        sampling rate."""
        rate, self._speak = await self._open_voice()
        return rate

    async def speak(self, sentence: str, on_audio: AudioCallback) -> None:
        """Speak one sentence :meth:`add` or :meth:`finish` returned, after :meth:`open`."""
        if self._speak is None:
            raise RuntimeError("TextStream.speak before open")

        async def as_made(piece: PcmPiece) -> None:
            await on_audio(piece.pcm)

        await self._speak(sentence, as_made, self._continuation)
