"""The request loop: text -> sentences -> phonemes -> BERT features -> audio, sentence by sentence.

It owns what every voice shares (the text front-end, the BERT, the audio cache, the user
dictionary) and the voices loaded so far. Its calls block on ONNX Runtime.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Hashable, Iterator
from pathlib import Path

import numpy as np

from ..runtime.sessions import RuntimeSettings, release_freed_heap
from ..text.frontend import Phonemes, TextFrontend
from ..text.sentences import Sentence
from ..text.with_reading import TextWithReading
from ..voices import layout
from ..voices.config import VoiceConfig
from ..voices.sources import VoiceSource, hayakoe_source
from . import audio as pcm
from .audio_cache import AudioCache
from .calibration import CALIBRATION_TEXT, Calibration, calibration, gain_file, gain_of
from .compiler.bert import open_bert
from .compiler.cache import cache_key, keep, prune, writable
from .compiler.staging import remove_abandoned
from .pacing import Pacing, PlaybackClock, Scheduler
from .params import SynthesisParams
from .pauses import PausePlanner, missing_silence_samples, trailing_silence_seconds
from .pieces import AudioPiece, Continuation, PcmPiece
from .prepared import PreparedSentence, PreparedText
from .profile import RequestProfile
from .reading import Reading
from .schedule import DecodeSpeed
from .streaming import warm_up
from .voice import Voice

_LOGGER = logging.getLogger(__name__)

_CACHEABLE_TEXT_CHARS = 2000
"""Longer texts are not announcements: they are neither looked up nor kept."""
_END = object()


class Engine:
    """Holds the shared tokenizer and BERT, and the voices loaded so far."""

    def __init__(
        self,
        bert_root: Path,
        threads: int | None = None,
        cache_dir: Path | None = None,
        audio_cache_bytes: int = 0,
        user_dictionary: Path | None = None,
    ) -> None:
        """``cache_dir``: where models compiled for this machine are kept (see compiler/);
        without it models load as published and sentences come out whole.
        ``audio_cache_bytes``: memory for finished audio of repeated requests (0: none).
        ``user_dictionary``: a user dictionary file (see user_dict.py), reloaded when edited."""
        self.settings = RuntimeSettings.create(threads)
        self.cache_dir = cache_dir
        if cache_dir is not None and writable(cache_dir):
            remove_abandoned(cache_dir)
            prune(cache_dir)
        self.audio_cache = AudioCache(audio_cache_bytes) if audio_cache_bytes > 0 else None
        started = time.monotonic()
        frontend = TextFrontend(layout.tokenizer_dir(bert_root), smart_home=True)
        self.reading = Reading(frontend, user_dictionary, self._clear_audio_cache)
        self.refresh_user_dictionary()
        self.bert = open_bert(
            layout.bert_model(bert_root), self.settings, cache_dir, self.frontend.max_token_id
        )
        self._voices: dict[Path, Voice] = {}
        self._speeds: dict[Path, DecodeSpeed] = {}
        self._load_lock = threading.Lock()
        release_freed_heap()
        _LOGGER.info(
            "Loaded tokenizer and BERT from %s in %.2f s (%d threads)",
            bert_root,
            time.monotonic() - started,
            self.settings.threads,
        )

    def load_voice(self, voice: VoiceSource | Path, name: str | None = None) -> Voice:
        """Load (once per model file) the voice: its sessions, no synthesis yet. A folder is
        a HayaKoe voice folder; the speakers of one model share its sessions."""
        source = (
            voice if isinstance(voice, VoiceSource) else hayakoe_source(name or voice.name, voice)
        )
        key = source.model.resolve()
        with self._load_lock:
            loaded = self._voices.get(key)
            if loaded is None:
                loaded = Voice.load(source, self.settings, name, self.cache_dir, self._calibration)
                if loaded.decoder is not None:
                    warm_up(loaded.decoder, loaded.sample_rate, self._speed(loaded))
                release_freed_heap()
                self._voices[key] = loaded
            if loaded.name == (name or source.name) and loaded.source.path == source.path:
                return loaded
            return loaded.for_source(source)

    def gain(self, voice: Voice) -> float:
        """The voice's loudness gain, measured on the calibration sentences once (when its
        models are compiled, or here; then kept with its compiled models). Call it where
        synthesis may run."""
        if voice.gain is None:
            started = time.monotonic()
            key = self._calibration_key(voice.speaker_id)
            kept = gain_file(voice.compiled, key) if voice.compiled else None
            try:
                voice.gain = float(kept.read_text()) if kept else None
            except (OSError, ValueError):
                voice.gain = None
            if voice.gain is None:
                inputs = self._calibration(voice.config, voice.style_vectors, voice.speaker_id)
                voice.gain = gain_of(
                    voice.synthesizer, voice.inputs, voice.decoder, inputs, voice.sample_rate
                )
                if kept is not None:
                    keep(kept, repr(voice.gain), f"the gain of {voice.name}")
            _LOGGER.info(
                "Voice %s calibrated in %.2f s (gain %.2f)",
                voice.name,
                time.monotonic() - started,
                voice.gain,
            )
        return voice.gain

    def _calibration(self, config: VoiceConfig, vectors: np.ndarray, speaker: int) -> Calibration:
        """The calibration sentences of a voice's speaker, as synthesizer inputs."""
        return calibration(
            self._calibration_key(speaker),
            self.prepare(CALIBRATION_TEXT),
            self.features,
            config.styles,
            vectors,
            speaker,
        )

    def _calibration_key(self, speaker: int) -> str:
        """What the calibration inputs depend on besides the voice: the speaker and the BERT."""
        return f"speaker{speaker}-{cache_key([self.bert.path])}"

    def decode_speed(self, voice: Voice) -> float | None:
        """Seconds of audio the decoder makes per second for ``voice`` on this machine, as
        the schedule assumes it (conservative); None before it has decoded anything."""
        speed = self._speeds.get(voice.source.path.resolve())
        return speed.assumed() if speed is not None and speed.observed else None

    def _speed(self, voice: Voice) -> DecodeSpeed:
        return self._speeds.setdefault(voice.source.path.resolve(), DecodeSpeed())

    @property
    def frontend(self) -> TextFrontend:
        """The text front-end with the user dictionary's words in effect now."""
        return self.reading.frontend

    @property
    def dictionary_generation(self) -> int:
        """Counts the user dictionary's edits applied so far (see reading.py)."""
        return self.reading.generation

    def refresh_user_dictionary(self) -> bool:
        """Apply edits of the user dictionary file; True if the words in effect changed.
        Compiling takes seconds: servers call it outside the synthesis slot."""
        return self.reading.refresh()

    def _clear_audio_cache(self) -> None:
        if self.audio_cache is not None:
            self.audio_cache.clear()  # cached readings may have changed

    def prepare(self, text: str | TextWithReading, whole: bool = True) -> PreparedText:
        """The text of a request, rewritten and split once (see Reading.prepare)."""
        return self.reading.prepare(text, whole)

    def synthesis_key(
        self, voice: Voice, prepared: PreparedText, params: SynthesisParams
    ) -> Hashable | None:
        """What decides a request's audio: the same key, the same audio. None for a text
        too long to keep (it is neither cached nor shared)."""
        if len(prepared.rewritten) > _CACHEABLE_TEXT_CHARS:
            return None
        # The rewritten text and the reading given decide the sentences and, with the user
        # dictionary's state, the sounds and pauses.
        return (
            voice.source.path.resolve(),
            params,
            prepared.rewritten,
            prepared.whole,
            prepared.dictionary_generation,
            prepared.reading,
        )

    def cached_audio(self, key: Hashable) -> list[PcmPiece] | None:
        """The finished audio of an earlier request with this key, if it is still kept."""
        cached = self.audio_cache.get(key) if self.audio_cache is not None else None
        return None if cached is None else [PcmPiece(text, pcm) for text, pcm in cached]

    def synthesize(
        self,
        voice: Voice,
        text: str | TextWithReading,
        params: SynthesisParams | None = None,
        continuation: Continuation | None = None,
    ) -> Iterator[PcmPiece]:
        """Yield PCM as soon as it is synthesized: sentence by sentence, window by window."""
        steps = self.synthesis_steps(
            voice, self.prepare(text), params or SynthesisParams(), continuation
        )
        return (piece for piece in steps if piece is not None)

    def synthesis_steps(
        self,
        voice: Voice,
        prepared: PreparedText,
        params: SynthesisParams,
        continuation: Continuation | None = None,
        pacing: Pacing | None = None,
    ) -> Iterator[PcmPiece | None]:
        """:meth:`synthesize`, one step per unit of work: a sentence's front-end, BERT and
        text encoder, then each decoder window. After each step, the PCM to send, or None
        when there is nothing to send yet; a caller may run other work between two steps.
        The finished audio of a whole text goes into the audio cache."""
        gain = self.gain(voice)
        key = None if continuation else self.synthesis_key(voice, prepared, params)
        cached = self.cached_audio(key) if key is not None else None
        if cached is not None:
            yield from cached
            return
        keep = self.audio_cache is not None and key is not None
        produced: list[tuple[str, bytes]] = []
        for piece in self.render_steps(voice, prepared, params, continuation, pacing):
            if piece is None:
                yield None
                continue
            audio = pcm.silence_pcm16(piece.pause_samples) + pcm.to_pcm16(piece.audio, gain)
            if keep:
                produced.append((piece.text, audio))
            yield PcmPiece(piece.text, audio)
        # Only complete audio is kept: a generator closed early never gets here. Audio read
        # before a dictionary edit is not: its key is never asked for again.
        current = prepared.dictionary_generation == self.dictionary_generation
        if self.audio_cache is not None and key is not None and current:
            self.audio_cache.put(key, produced)

    def render(
        self,
        voice: Voice,
        text: str,
        params: SynthesisParams,
        continuation: Continuation | None = None,
    ) -> Iterator[AudioPiece]:
        """Float audio per sentence (or window of it), with the pause that belongs before it."""
        steps = self.render_steps(voice, self.prepare(text), params, continuation)
        return (piece for piece in steps if piece is not None)

    def render_steps(
        self,
        voice: Voice,
        prepared: PreparedText,
        params: SynthesisParams,
        continuation: Continuation | None = None,
        pacing: Pacing | None = None,
    ) -> Iterator[AudioPiece | None]:
        """:meth:`render` of a text prepared by :meth:`prepare`, one step per unit of work
        (None: nothing to send after it). ``pacing``: when the client runs out of audio and
        how many requests share the machine (default: the continuation's client, alone)."""
        # Fail before any work on a bad style or speaker.
        style_vector = voice.style_vector(params.style, params.style_weight)
        voice.check_speaker(params.speaker_id)
        sentences = list(prepared.sentences)
        trailing: float | None = None  # silence at the end of the sentence before, if any
        if continuation is not None and continuation.previous_source:
            # The sentence before stands at index 0 so its pause is predicted as usual.
            source = continuation.previous_source
            previous = Sentence(source.strip(), source)
            sentences.insert(0, PreparedSentence(previous, prepared.phonemize))
            trailing = continuation.trailing_seconds
        planner = PausePlanner(
            voice, sentences, style_vector, params, prepared.phonemize, self.features
        )
        profile = RequestProfile()
        if pacing is None:
            pacing = Pacing(continuation.playback if continuation else PlaybackClock())
        scheduler = Scheduler(self._speed(voice), pacing.playback, sharing=pacing.sharing)
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
                windows: list[np.ndarray] = []
                for piece in self._sentence_steps(
                    voice, sentence, index, pause, (style_vector, params), scheduler, profile
                ):
                    if piece is not None:
                        windows.append(piece.audio)
                    yield piece
                trailing = trailing_silence_seconds(np.concatenate(windows), voice.sample_rate)
                if continuation is not None:
                    continuation.previous_source = sentence.source
                    continuation.trailing_seconds = trailing
        finally:
            profile.log(voice.sample_rate)
            _LOGGER.debug("Schedule: %s", scheduler.summary())

    def _sentence_steps(
        self,
        voice: Voice,
        sentence: PreparedSentence,
        index: int,
        pause: int,
        style: tuple[np.ndarray, SynthesisParams],
        scheduler: Scheduler,
        profile: RequestProfile,
    ) -> Iterator[AudioPiece | None]:
        """One sentence's steps (BERT and text encoder, then each window); ``pause`` goes
        before its first audio."""
        with profile.timing("bert"):
            features = self.features(sentence.phonemes)
        steps = voice.synthesis_steps(sentence.phonemes, features, *style, scheduler=scheduler)
        while True:
            with profile.timing("synthesizer"):
                window = next(steps, _END)
            if window is _END:
                return
            if window is None:
                yield None
                continue
            assert isinstance(window, np.ndarray)
            profile.audio_samples += len(window) + pause
            scheduler.sent((len(window) + pause) / voice.sample_rate)
            yield AudioPiece(sentence.text, index, pause, window)
            pause = 0

    def features(self, phonemes: Phonemes) -> np.ndarray:
        """BERT features of one prepared text, ``[hidden, phones]``."""
        return self.bert.features(self.frontend.token_ids(phonemes.bert_text), phonemes.word2ph)


def _pause_target(planner: PausePlanner, index: int, params: SynthesisParams) -> float:
    """Seconds of pause before sentence ``index``: asked for, or predicted and scaled."""
    if params.pause_seconds is not None:
        return params.pause_seconds
    return planner.pause_before(index) * params.pause_scale
