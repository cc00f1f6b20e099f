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

from ..compiling.compiled import (
    DecoderChoice,
    cache_key,
    open_bert,
    prune,
    remove_abandoned,
    writable,
)
from ..inference import audio as pcm
from ..inference.bert import BertEncoder
from ..inference.calibration import CALIBRATION_TEXT, Calibration, calibration
from ..inference.params import SynthesisParams
from ..pacing.scheduler import Pacing
from ..runtime.sessions import RuntimeSettings, release_freed_heap
from ..text.frontend import Phonemes, TextFrontend
from ..text.tokenizer_loader import load_tokenizer
from ..text.with_reading import TextWithReading
from ..voices import layout
from ..voices.config import VoiceConfig
from . import rendering
from .audio_cache import AudioCache
from .frontend_state import FrontendState
from .loaded_voices import LoadedVoices
from .pieces import Continuation, PcmPiece
from .prepared import PreparedText
from .voice import Voice

_LOGGER = logging.getLogger(__name__)

_CACHEABLE_TEXT_CHARS = 2000
"""Longer texts are not announcements: they are neither looked up nor kept."""


class Engine:
    """Holds the shared tokenizer and BERT, and the voices loaded so far."""

    def __init__(
        self,
        bert_root: Path,
        threads: int | None = None,
        cache_dir: Path | None = None,
        audio_cache_bytes: int = 0,
        user_dictionary: Path | None = None,
        english_model: bool = True,
    ) -> None:
        """``cache_dir``: where models compiled for this machine are kept (see compiling/);
        without it models load as published and sentences come out whole.
        ``audio_cache_bytes``: memory for finished audio of repeated requests (0: none).
        ``user_dictionary``: a user dictionary file (see user_dict.py), reloaded when edited.
        ``english_model``: whether the English model reads the English words no dictionary
        knows (else they are spelled).
        The text front-end and the BERT are opened at their first use, or by
        :meth:`open_text` and :meth:`open_bert` (a server opens them beside its first voice)."""
        self.settings = RuntimeSettings.create(threads)
        self.cache_dir = cache_dir
        if cache_dir is not None and writable(cache_dir):
            remove_abandoned(cache_dir)
            prune(cache_dir)
        self.audio_cache = AudioCache(audio_cache_bytes) if audio_cache_bytes > 0 else None
        self._tokenizer = load_tokenizer(layout.tokenizer_dir(bert_root))
        self._user_dictionary = user_dictionary
        self._english_model = english_model
        self._frontend_state: FrontendState | None = None
        self._frontend_lock = threading.Lock()
        self._bert_model = layout.bert_model(bert_root)
        self._bert: BertEncoder | None = None
        self._bert_lock = threading.Lock()
        self.voices = LoadedVoices(
            self.settings, cache_dir, self._calibration, self._calibration_key
        )

    @property
    def frontend_state(self) -> FrontendState:
        """The text front-end with the user dictionary (opened now if it is not yet)."""
        return self._frontend_state or self.open_text()

    def open_text(self) -> FrontendState:
        """Open the text front-end (OpenJTalk's dictionaries, the user dictionary), once."""
        with self._frontend_lock:
            if self._frontend_state is None:
                started = time.monotonic()
                frontend = TextFrontend(self._tokenizer, smart_home=True,
                                        english_model=self._english_model)  # fmt: skip
                state = FrontendState(frontend, self._user_dictionary, self._clear_audio_cache)
                state.refresh()
                self._frontend_state = state
                _LOGGER.info("Loaded the text front-end in %.2f s", time.monotonic() - started)
            return self._frontend_state

    @property
    def bert(self) -> BertEncoder:
        """The BERT every voice shares (opened now if it is not yet)."""
        return self._bert or self.open_bert()

    def open_bert(self) -> BertEncoder:
        """Open the BERT (compiling it for this machine first if needed), once: a caller
        meanwhile waits for it. It takes about as long as a voice's own models, so a server
        opens it beside its first voice (and the text front-end)."""
        with self._bert_lock:
            if self._bert is None:
                started = time.monotonic()
                self._bert = open_bert(
                    self._bert_model, self.settings, self.cache_dir, self._tokenizer.max_id
                )
                release_freed_heap()
                _LOGGER.info(
                    "Loaded the BERT from %s in %.2f s (%d threads)",
                    self._bert_model,
                    time.monotonic() - started,
                    self.settings.threads,
                )
            return self._bert

    def choose_decoder(
        self, voice: Voice, mode: str, keep_float: tuple[str, ...] | None = None
    ) -> DecoderChoice | None:
        """Serve ``voice`` with the decoder ``mode`` (reference, fast or auto) chooses, making
        its fast variant first if needed (minutes on a small board: call it once the voice
        serves, where loading may run); None for a voice served whole."""

        def prepare(text: str) -> list[Phonemes]:
            return [sentence.phonemes for sentence in self.prepare(text).sentences]

        return self.voices.choose_decoder(voice, mode, prepare, self.features, keep_float)

    def _calibration(self, config: VoiceConfig, vectors: np.ndarray, speaker: int) -> Calibration:
        """The calibration sentences of a voice's speaker, as synthesizer inputs."""
        return calibration(
            self._calibration_key(speaker),
            [sentence.phonemes for sentence in self.prepare(CALIBRATION_TEXT).sentences],
            self.features,
            config.styles,
            vectors,
            speaker,
        )

    def _calibration_key(self, speaker: int) -> str:
        """What the calibration inputs depend on besides the voice: the speaker and the BERT."""
        return f"speaker{speaker}-{cache_key([self._bert_model])}"

    @property
    def frontend(self) -> TextFrontend:
        """The text front-end with the user dictionary's words in effect now."""
        return self.frontend_state.frontend

    @property
    def dictionary_generation(self) -> int:
        """Counts the user dictionary's edits applied so far (see frontend_state.py)."""
        return self.frontend_state.generation

    def refresh_user_dictionary(self) -> bool:
        """Apply edits of the user dictionary file; True if the words in effect changed.
        Compiling takes seconds: servers call it on another thread than synthesis."""
        return self.frontend_state.refresh()

    def _clear_audio_cache(self) -> None:
        if self.audio_cache is not None:
            self.audio_cache.clear()  # cached readings may have changed

    def prepare(self, text: str | TextWithReading, whole: bool = True) -> PreparedText:
        """The text of a request, rewritten and split once (see FrontendState.prepare)."""
        return self.frontend_state.prepare(text, whole)

    def audio_key(
        self,
        voice: Voice,
        prepared: PreparedText,
        params: SynthesisParams,
        continuation: Continuation | None = None,
    ) -> Hashable | None:
        """The key of a request's audio: the same key, the same audio (identical requests
        share one synthesis by it, and its finished audio is kept under it). None for a
        continuation or a text too long to keep: neither kept nor shared."""
        if continuation is not None or len(prepared.rewritten) > _CACHEABLE_TEXT_CHARS:
            return None
        # The rewritten text and the reading given decide the sentences and, with the user
        # dictionary's state, the sounds and pauses.
        key = (
            voice.source.path.resolve(),
            params,
            prepared.rewritten,
            prepared.whole,
            prepared.dictionary_generation,
            prepared.reading,
        )
        return key

    def kept_audio(self, key: Hashable | None) -> list[PcmPiece] | None:
        """The audio an earlier request finished under ``key``, if it is still kept."""
        if key is None or self.audio_cache is None:
            return None
        cached = self.audio_cache.get(key)
        return None if cached is None else [PcmPiece(text, pcm) for text, pcm in cached]

    def synthesis_steps(
        self,
        voice: Voice,
        prepared: PreparedText,
        params: SynthesisParams,
        continuation: Continuation | None = None,
        pacing: Pacing | None = None,
        keep_as: Hashable | None = None,
    ) -> Iterator[PcmPiece | None]:
        """The audio of ``prepared`` as 16-bit PCM, one step per unit of work: a sentence's
        front-end, BERT and text encoder, then each decoder window. After each step, the PCM
        to send, or None when there is nothing to send yet; a caller may run other work
        between two steps. ``pacing``: when the client runs out of audio and how many requests
        share the machine (default: the continuation's client, alone). ``keep_as``: the
        :meth:`audio_key` the complete audio is kept under (the caller has looked it up in
        :meth:`kept_audio` already: one lookup per request)."""
        gain = self.voices.gain(voice)
        cache = self.audio_cache if keep_as is not None else None  # None: nothing kept
        produced: list[tuple[str, bytes]] = []
        speed = self.voices.speed(voice)
        steps = rendering.render_steps(
            voice, prepared, params, self.features, speed, continuation, pacing
        )
        for piece in steps:
            if piece is None:
                yield None
                continue
            audio = pcm.silence_pcm16(piece.pause_samples) + pcm.to_pcm16(piece.audio, gain)
            if cache is not None and piece.text:  # not the silence that opened a held-back reply
                produced.append((piece.text, audio))
            yield PcmPiece(piece.text, audio)
        # Only complete audio is kept: a generator closed early never gets here. Audio read
        # before a dictionary edit is not: its key is never asked for again.
        current = prepared.dictionary_generation == self.dictionary_generation
        if cache is not None and current:
            cache.put(keep_as, produced)

    def features(self, phonemes: Phonemes) -> np.ndarray:
        """BERT features of one prepared text, ``[hidden, phones]``."""
        return self.bert.features(self.frontend.token_ids(phonemes.bert_text), phonemes.word2ph)
