"""The synthesis engine: text -> sentences -> phonemes -> BERT features -> audio.

It knows nothing of Wyoming. Its calls block on ONNX Runtime: callers on an event loop run them
in a worker thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import TextError
from ..runtime.model_cache import cached_number, release_freed_heap
from ..runtime.sessions import RuntimeSettings
from ..text.frontend import Phonemes, TextFrontend
from ..text.sentences import Sentence, split_long, split_text
from ..text.user_dict import UserDictionary
from . import audio as pcm
from .audio_cache import AudioCache
from .bert import BERT_PATH, TOKENIZER_PATH, BertEncoder
from .pauses import PausePlanner, missing_silence_samples, trailing_silence_seconds
from .synthesizer import SynthesisParams, synthesize
from .voice import SYNTHESIZER_FILE, Voice

__all__ = ["Continuation", "Engine", "RenderedChunk", "SentenceAudio", "SynthesisParams", "Voice"]

_LOGGER = logging.getLogger(__name__)

MAX_SENTENCE_CHARS = 250
"""Longer sentences are cut at a comma (see sentences.split_long)."""

_CACHEABLE_TEXT_CHARS = 2000
"""Longer texts are not announcements: they are neither looked up nor kept."""

CALIBRATION_TEXT = "こんにちは。今日は良い天気ですね、お出かけにぴったりです。"
_CALIBRATION_PARAMS = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)


@dataclass(frozen=True)
class RenderedChunk:
    """A sentence, or the next window of it, as float audio before the loudness gain."""

    text: str
    """The sentence this audio belongs to."""
    sentence_index: int
    pause_samples: int
    """Silence to play before ``audio``: the pause after the previous sentence, on the first
    chunk of every sentence but the first; 0 otherwise."""
    audio: np.ndarray
    """Float32 samples in [-1, 1] at the voice's sample rate."""


@dataclass
class Continuation:
    """What the next part of a text streamed in pieces needs from the part before it.

    Pass the same object to every ``synthesize`` call of one stream: the pause between the
    last sentence of one call and the first of the next is then predicted like any other.
    """

    previous_source: str = ""
    """Source text of the last sentence synthesized so far."""
    trailing_seconds: float = 0.0
    """Silence already at the end of that sentence's audio."""


@dataclass(frozen=True)
class SentenceAudio:
    """The audio of a sentence, or of its next window, as 16-bit mono PCM ready to send."""

    text: str
    """The sentence this audio belongs to."""
    pcm: bytes
    """Little-endian int16, starting with the pause before the sentence on its first chunk."""


class Engine:
    """Holds the shared tokenizer and BERT, and the voices loaded so far."""

    def __init__(
        self,
        bert_root: Path,
        threads: int | None = None,
        max_text_length: int | None = None,
        cache_dir: Path | None = None,
        audio_cache_bytes: int = 0,
        user_dictionary: Path | None = None,
    ) -> None:
        """``cache_dir``: where models prepared for this machine are kept (see model_cache);
        without it models load unprepared and sentences come out whole.
        ``audio_cache_bytes``: memory for finished audio of repeated requests (0: none).
        ``user_dictionary``: a user dictionary file (see user_dict.py), reloaded when edited."""
        self.settings = RuntimeSettings.create(threads)
        self.max_text_length = max_text_length
        self.cache_dir = cache_dir
        self.audio_cache = AudioCache(audio_cache_bytes) if audio_cache_bytes > 0 else None
        started = time.monotonic()
        self.frontend = TextFrontend(bert_root / TOKENIZER_PATH, smart_home=True)
        self.user_dictionary = UserDictionary(user_dictionary) if user_dictionary else None
        self.refresh_user_dictionary()
        self.bert = BertEncoder(bert_root / BERT_PATH, self.settings, cache_dir)
        self._voices: dict[Path, Voice] = {}
        self._gains: dict[Path, float] = {}
        self._load_lock = threading.Lock()
        release_freed_heap()
        _LOGGER.info(
            "Loaded tokenizer and BERT from %s in %.2f s (%d threads)",
            bert_root,
            time.monotonic() - started,
            self.settings.threads,
        )

    def load_voice(self, voice_dir: Path, name: str | None = None) -> Voice:
        """Load (once) the voice in ``voice_dir`` and measure its loudness gain."""
        key = voice_dir.resolve()
        with self._load_lock:
            voice = self._voices.get(key)
            if voice is None:
                started = time.monotonic()
                voice = Voice.load(voice_dir, self.settings, name, self.cache_dir)
                self._gains[key] = cached_number(
                    self.cache_dir,
                    [voice_dir / SYNTHESIZER_FILE, self.bert.path],
                    "gain",
                    lambda: self._calibrate(voice),
                )
                release_freed_heap()
                self._voices[key] = voice
                _LOGGER.info(
                    "Voice %s ready in %.2f s (gain %.2f)",
                    voice.name,
                    time.monotonic() - started,
                    self._gains[key],
                )
            return voice

    def refresh_user_dictionary(self) -> None:
        """Apply edits of the user dictionary file (one stat when nothing changed)."""
        if self.user_dictionary is not None and self.user_dictionary.refresh():
            self.frontend = self.frontend.with_keep_words(self.user_dictionary.surfaces)
            if self.audio_cache is not None:
                self.audio_cache.clear()  # cached readings may have changed

    def gain(self, voice: Voice) -> float:
        return self._gains.get(voice.directory.resolve(), 1.0)

    def synthesize(
        self,
        voice: Voice,
        text: str,
        params: SynthesisParams | None = None,
        continuation: Continuation | None = None,
    ) -> Iterator[SentenceAudio]:
        """Yield PCM as soon as it is synthesized: sentence by sentence, window by window."""
        self.refresh_user_dictionary()
        params = params or SynthesisParams()
        key = None if continuation else self._cache_key(voice, text, params)
        cached = self.audio_cache.get(key) if self.audio_cache and key else None
        if cached is not None:
            for sentence, audio in cached:
                yield SentenceAudio(sentence, audio)
            return
        gain = self.gain(voice)
        produced: list[tuple[str, bytes]] = []
        for chunk in self.render(voice, text, params, continuation):
            audio = pcm.silence_pcm16(chunk.pause_samples) + pcm.to_pcm16(chunk.audio, gain)
            if key is not None:  # keep audio only where it will be cached
                produced.append((chunk.text, audio))
            yield SentenceAudio(chunk.text, audio)
        # Only complete audio is kept: a generator closed early never gets here.
        if self.audio_cache is not None and key is not None:
            self.audio_cache.put(key, produced)

    def _cache_key(self, voice: Voice, text: str, params: SynthesisParams) -> tuple | None:
        if self.audio_cache is None or len(text) > _CACHEABLE_TEXT_CHARS:
            return None
        try:
            rewritten = self.frontend.rewrite(text)
            normalized = self.frontend.normalize(rewritten)
        except TextError:
            return None
        # The normalized text decides the sounds and pauses, the split decides the sentences.
        sentences = tuple(s.text for s in split_for_synthesis(rewritten))
        return (voice.directory.resolve(), params, normalized, sentences)

    def render(
        self,
        voice: Voice,
        text: str,
        params: SynthesisParams,
        continuation: Continuation | None = None,
    ) -> Iterator[RenderedChunk]:
        """Float audio per sentence (or window of it), with the pause that belongs before it."""
        if self.max_text_length is not None and len(text) > self.max_text_length:
            raise TextError(f"Text has {len(text)} characters; the limit is {self.max_text_length}")
        # Fail before any work on a bad style or speaker.
        style_vector = voice.style_vector(params.style, params.style_weight)
        voice.check_speaker(params.speaker_id)
        # Smart-home rewriting first: a "?" inside a URL must not end a sentence.
        sentences = split_for_synthesis(self.frontend.rewrite(text))
        trailing: float | None = None  # silence at the end of the sentence before, if any
        if continuation is not None and continuation.previous_source:
            # The sentence before stands at index 0 so its pause is predicted as usual.
            previous = continuation.previous_source
            sentences.insert(0, Sentence(previous.strip(), previous))
            trailing = continuation.trailing_seconds
        planner = PausePlanner(self, voice, sentences, style_vector, params)
        profile = _Profile()
        try:
            for index, sentence in enumerate(sentences):
                if index == 0 and trailing is not None:
                    continue  # already spoken by an earlier call
                with profile.timing("front_end"):
                    phonemes = self.frontend.phonemize(sentence.text)
                if not phonemes.has_speech:
                    _LOGGER.debug("Nothing to say in %r", sentence.text)
                    continue
                with profile.timing("bert"):
                    features = self.features(phonemes)
                pause = 0
                if trailing is not None:
                    with profile.timing("pauses"):
                        target = planner.pause_before(index)
                    pause = missing_silence_samples(trailing, target, voice.sample_rate)
                windows: list[np.ndarray] = []
                early = trailing is None  # the first sound of a request: worth a cut
                chunks = synthesize(voice, phonemes, features, style_vector, params, early)
                while True:
                    with profile.timing("synthesizer"):
                        window = next(chunks, None)
                    if window is None:
                        break
                    windows.append(window)
                    profile.audio_samples += len(window) + pause
                    yield RenderedChunk(sentence.text, index, pause, window)
                    pause = 0
                trailing = trailing_silence_seconds(np.concatenate(windows), voice.sample_rate)
                if continuation is not None:
                    continuation.previous_source = sentence.source
                    continuation.trailing_seconds = trailing
        finally:
            profile.log(voice.sample_rate)

    def features(self, phonemes: Phonemes) -> np.ndarray:
        """BERT features of one prepared text, ``[hidden, phones]``."""
        return self.bert.features(self.frontend.token_ids(phonemes.bert_text), phonemes.word2ph)

    def _calibrate(self, voice: Voice) -> float:
        rendered = list(self.render(voice, CALIBRATION_TEXT, _CALIBRATION_PARAMS))
        samples = np.concatenate([s.audio for s in rendered]) if rendered else np.zeros(0)
        return pcm.calibration_gain(samples, voice.sample_rate)


@dataclass
class _Profile:
    """Where one request's time went (``--debug`` logs it), waiting for the caller excluded."""

    seconds: dict[str, float] = field(default_factory=dict)
    audio_samples: int = 0

    @contextmanager
    def timing(self, step: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[step] = self.seconds.get(step, 0.0) + time.perf_counter() - started

    def log(self, sample_rate: int) -> None:
        steps = ", ".join(f"{step} {spent:.3f} s" for step, spent in self.seconds.items())
        _LOGGER.debug("%.2f s of audio; %s", self.audio_samples / sample_rate, steps or "no work")


def split_for_synthesis(text: str) -> list[Sentence]:
    """The pieces ``render`` synthesizes one by one (sentences, long ones cut at commas)."""
    return [piece for s in split_text(text) for piece in split_long(s, MAX_SENTENCE_CHARS)]
