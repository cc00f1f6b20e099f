"""A prepared text rendered in one loop of named steps: each sentence's front-end, its BERT
and text encoder, then each decoder window, with the pause before each sentence restored. The
loop alone asks the schedule (pacing/) what to send; the voice and the decoder below it only
compute."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ..inference.decoder import decode_steps
from ..inference.params import SynthesisParams
from ..pacing.margins import LOOKAHEAD_SENTENCES
from ..pacing.scheduler import Pacing, PlaybackClock, Scheduler
from ..pacing.sentence import SentenceDecode
from ..pacing.windows import DecodeSpeed
from ..text.frontend import Phonemes
from ..text.sentences import Sentence
from .pauses import PausePlanner, missing_silence_samples, trailing_silence_seconds
from .pieces import AudioPiece, Continuation
from .prepared import PreparedSentence, PreparedText
from .profile import RequestProfile
from .voice import Voice

_LOGGER = logging.getLogger(__name__)

Features = Callable[[Phonemes], np.ndarray]
"""BERT features of a sentence's phonemes, ``[hidden, phones]``."""


def render_steps(
    voice: Voice,
    prepared: PreparedText,
    params: SynthesisParams,
    features: Features,
    speed: DecodeSpeed,
    continuation: Continuation | None = None,
    pacing: Pacing | None = None,
) -> Iterator[AudioPiece | None]:
    """Float audio of ``prepared``, sentence by sentence (or window by window), with the
    pause that belongs before each, one step per unit of work (None: nothing to send after
    it). ``speed``: what decoding this voice takes here; ``pacing``: when the client runs
    out of audio and how many requests share the machine (default: the continuation's
    client, alone). A bad style or speaker fails here, before any work."""
    if pacing is None:
        pacing = Pacing(continuation.playback if continuation else PlaybackClock())
    rendering = _Rendering(voice, params, features, Scheduler(speed, pacing), continuation)
    sentences, trailing = _with_sentence_before(prepared, continuation)
    planner = PausePlanner(
        voice, sentences, rendering.style_vector, params, prepared.phonemize, features
    )
    return rendering.steps(sentences, trailing, planner)


@dataclass
class _Said:
    """What one sentence has said so far."""

    text: str
    index: int
    pause: int
    """Samples of silence before its first audio."""
    windows: list[np.ndarray] = field(default_factory=list)


class _Rendering:
    """One request's render loop and its named steps. The loop is the one place that asks
    the schedule (pacing/scheduler.py) what to send after each step."""

    def __init__(
        self,
        voice: Voice,
        params: SynthesisParams,
        features: Features,
        scheduler: Scheduler,
        continuation: Continuation | None,
    ) -> None:
        self.voice = voice
        self.params = params
        self.features = features
        self.style_vector = voice.style_vector(params.style, params.style_weight)
        voice.check_speaker(params.speaker_id)
        self.scheduler = scheduler
        self.continuation = continuation
        self.profile = RequestProfile()

    def steps(
        self, sentences: list[PreparedSentence], trailing: float | None, planner: PausePlanner
    ) -> Iterator[AudioPiece | None]:
        """The loop: each sentence's front-end, BERT and text encoder (one step), then each
        decoder window (a step each); ``trailing``: the silence ending what was said before
        (None: nothing was, or the first sentence is that earlier one)."""
        scheduler = self.scheduler
        try:
            for index, sentence in enumerate(sentences):
                if index == 0 and trailing is not None:
                    continue  # already spoken by an earlier call
                phonemes = self._front_end(sentence)
                if phonemes is None:
                    continue
                said = _Said(sentence.text, index, self._pause(planner, index, trailing))
                scheduler.begin_sentence(len(phonemes.phone_ids), _later_phonemes(sentences, index))
                yield from scheduler.release(None)
                encoded = self._encode(phonemes)
                if isinstance(encoded, np.ndarray):  # a synthesizer that is not split
                    yield from self._send(self._piece(said, encoded))
                else:
                    yield from self._send(None)
                    yield from self._decode(said, *encoded)
                trailing = self._ended(sentence, said)
            yield from scheduler.flush()
        finally:
            self.profile.log(self.voice.sample_rate)
            _LOGGER.debug("Schedule: %s", scheduler.summary())

    # ----- the steps -----

    def _front_end(self, sentence: PreparedSentence) -> Phonemes | None:
        """The sentence's phonemes (read once); None if it has nothing to say."""
        with self.profile.timing("front_end"):
            phonemes = sentence.phonemes
        if not phonemes.has_speech:
            _LOGGER.debug("Nothing to say in %r", sentence.text)
            return None
        return phonemes

    def _pause(self, planner: PausePlanner, index: int, trailing: float | None) -> int:
        """Samples of silence the pause before sentence ``index`` still needs after the
        silence ending the audio before it (0 for the first thing said)."""
        if trailing is None:
            return 0
        with self.profile.timing("pauses"):
            target = _pause_target(planner, index, self.params)
        return missing_silence_samples(trailing, target, self.voice.sample_rate)

    def _encode(self, phonemes: Phonemes) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """BERT and the text encoder: the latent and speaker condition the decoder takes (a
        synthesizer that is not split: the sentence's whole audio)."""
        with self.profile.timing("bert"):
            hidden = self.features(phonemes)
        with self.profile.timing("synthesizer"):
            return self.voice.encode(phonemes, hidden, self.style_vector, self.params)

    def _decode(
        self, said: _Said, latent: np.ndarray, condition: np.ndarray
    ) -> Iterator[AudioPiece | None]:
        """Each decoder window as the schedule sizes it when it is due, one step each."""
        decoder = self.voice.decoder
        assert decoder is not None  # a split synthesizer's latent
        schedule = SentenceDecode(self.scheduler, decoder, latent.shape[2], self.voice.sample_rate)
        windows = decode_steps(decoder.stream(latent, condition), schedule, self.scheduler.now)
        while True:
            with self.profile.timing("synthesizer"):
                try:
                    window = next(windows)
                except StopIteration:
                    break
            yield from self._send(None if window is None else self._piece(said, window))
        self.scheduler.decoded.append(schedule.windows)

    def _send(self, piece: AudioPiece | None) -> list[AudioPiece | None]:
        """What goes out after a step: what the schedule releases, or None (nothing yet)."""
        seconds = 0.0 if piece is None else piece.seconds(self.voice.sample_rate)
        released: list[AudioPiece | None] = list(self.scheduler.release(piece, seconds))
        return released or [None]

    def _piece(self, said: _Said, audio: np.ndarray) -> AudioPiece:
        """The sentence's next audio, its pause before the first."""
        pause = 0 if said.windows else said.pause
        said.windows.append(audio)
        self.profile.audio_samples += len(audio) + pause
        return AudioPiece(said.text, said.index, pause, audio)

    def _ended(self, sentence: PreparedSentence, said: _Said) -> float:
        """The seconds of silence the sentence's audio ends with (the next pause follows
        from it), kept in the continuation for a stream's next sentence."""
        trailing = trailing_silence_seconds(np.concatenate(said.windows), self.voice.sample_rate)
        if self.continuation is not None:
            self.continuation.previous_source = sentence.source
            self.continuation.trailing_seconds = trailing
        return trailing


def _with_sentence_before(
    prepared: PreparedText, continuation: Continuation | None
) -> tuple[list[PreparedSentence], float | None]:
    """The sentences to render and the silence ending the audio before them (None: nothing
    was said before). A continued text puts the sentence before at index 0, so its pause is
    predicted as usual."""
    sentences = list(prepared.sentences)
    if continuation is None or not continuation.previous_source:
        return sentences, None
    source = continuation.previous_source
    sentences.insert(0, PreparedSentence(Sentence(source.strip(), source), prepared.phonemize))
    return sentences, continuation.trailing_seconds


def _later_phonemes(sentences: list[PreparedSentence], index: int) -> list[int]:
    """The phonemes of each of the next sentences that has something to say: the schedule
    plans a held-back sentence with them (pacing/plan.py). Phonemizing is cheap, and each is
    read once (a prepared sentence keeps its phonemes)."""
    counts = []
    for later in sentences[index + 1 : index + 1 + LOOKAHEAD_SENTENCES]:
        phonemes = later.phonemes
        if phonemes.has_speech:
            counts.append(len(phonemes.phone_ids))
    return counts


def _pause_target(planner: PausePlanner, index: int, params: SynthesisParams) -> float:
    """Seconds of pause before sentence ``index``: asked for, or predicted and scaled."""
    if params.pause_seconds is not None:
        return params.pause_seconds
    return planner.pause_before(index) * params.pause_scale
