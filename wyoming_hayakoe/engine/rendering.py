"""A prepared text rendered step by step: each sentence's front-end, BERT and text encoder,
then each decoder window, with the pause before each sentence restored."""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Iterator

import numpy as np

from ..inference.params import SynthesisParams
from ..pacing.margins import LOOKAHEAD_SENTENCES
from ..pacing.scheduler import Pacing, PlaybackClock, Scheduler
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
    client, alone)."""
    # Fail before any work on a bad style or speaker.
    style_vector = voice.style_vector(params.style, params.style_weight)
    voice.check_speaker(params.speaker_id)
    sentences, trailing = _with_sentence_before(prepared, continuation)
    planner = PausePlanner(voice, sentences, style_vector, params, prepared.phonemize, features)
    profile = RequestProfile()
    if pacing is None:
        pacing = Pacing(continuation.playback if continuation else PlaybackClock())
    scheduler = Scheduler(speed, pacing)
    try:
        for index, sentence in enumerate(sentences):
            if index == 0 and trailing is not None:
                continue  # already spoken by an earlier call
            with profile.timing("front_end"):
                phonemes = sentence.phonemes
            if not phonemes.has_speech:
                _LOGGER.debug("Nothing to say in %r", sentence.text)
                continue
            pause = 0
            if trailing is not None:
                with profile.timing("pauses"):
                    target = _pause_target(planner, index, params)
                pause = missing_silence_samples(trailing, target, voice.sample_rate)
            scheduler.begin_sentence(len(phonemes.phone_ids), _later_phonemes(sentences, index))
            steps = _sentence_steps(
                voice, sentence, (index, pause), features, (style_vector, params), scheduler,
                profile,
            )  # fmt: skip
            trailing = yield from _released(steps, scheduler, voice.sample_rate)
            if continuation is not None:
                continuation.previous_source = sentence.source
                continuation.trailing_seconds = trailing
        yield from scheduler.flush()
    finally:
        profile.log(voice.sample_rate)
        _LOGGER.debug("Schedule: %s", scheduler.summary())


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


def _released(
    steps: Iterator[AudioPiece | None], scheduler: Scheduler, sample_rate: int
) -> Generator[AudioPiece | None, None, float]:
    """One sentence's ``steps`` as the schedule sends them (None: a step with nothing to
    send); returns the seconds of silence its audio ends with."""
    yield from scheduler.release(None)
    windows: list[np.ndarray] = []
    for piece in steps:
        if piece is not None:
            windows.append(piece.audio)
        seconds = 0.0 if piece is None else piece.seconds(sample_rate)
        released = scheduler.release(piece, seconds)
        if not released:
            yield None
        yield from released
    return trailing_silence_seconds(np.concatenate(windows), sample_rate)


def _sentence_steps(
    voice: Voice,
    sentence: PreparedSentence,
    place: tuple[int, int],
    features: Features,
    style: tuple[np.ndarray, SynthesisParams],
    scheduler: Scheduler,
    profile: RequestProfile,
) -> Iterator[AudioPiece | None]:
    """One sentence's steps (BERT and text encoder, then each window). ``place``: its index
    and the pause (samples) that goes before its first audio."""
    index, pause = place
    with profile.timing("bert"):
        hidden = features(sentence.phonemes)
    steps = voice.synthesis_steps(sentence.phonemes, hidden, *style, scheduler=scheduler)
    while True:
        with profile.timing("synthesizer"):
            try:
                window = next(steps)
            except StopIteration:
                return
        if window is None:
            yield None
            continue
        profile.audio_samples += len(window) + pause
        yield AudioPiece(sentence.text, index, pause, window)
        pause = 0


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
