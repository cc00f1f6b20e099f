"""A stand-in for the engine, for fast in-process tests of the service, handler and connection.

It has the engine's interface (``voices.load``, ``voices.gain``, ``refresh_user_dictionary``,
``prepare``, ``audio_key``, ``kept_audio``, ``synthesis_steps``) and records what it
was asked, but synthesizes nothing: each sentence becomes a fixed number of samples derived
from its text, so tests can check exactly what was sent.
The voices are read from real voice folders (their config.json), as the engine reads them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyoming_hayakoe.engine import Continuation, Pacing, PcmPiece, SynthesisParams
from wyoming_hayakoe.text.sentences import split_for_synthesis
from wyoming_hayakoe.voices.config import VoiceConfig
from wyoming_hayakoe.voices.sources import VoiceSource, hayakoe_source

SAMPLES_PER_CHARACTER = 100


@dataclass
class FakeVoice:
    """What the service reads of a voice: name, styles, speakers, sample rate, its files."""

    name: str
    config: VoiceConfig
    source: VoiceSource
    gain: float | None = None
    speaker_id: int = 0
    decoder: object = None
    """The fake engine has one decoder: choosing it changes nothing."""

    @property
    def sample_rate(self) -> int:
        return self.config.sample_rate

    @property
    def styles(self) -> list[str]:
        return self.config.styles_by_id

    @property
    def speakers(self) -> list[str]:
        return self.config.speakers_by_id


@dataclass(frozen=True)
class FakePrepared:
    """A text as the fake engine prepares it: not rewritten, split as the engine splits."""

    rewritten: str
    sentences: list[str]
    whole: bool


def fake_pcm(sentence: str) -> bytes:
    """The PCM the fake engine sends for one sentence: its length says which sentence it was."""
    return bytes([len(sentence) % 256, 0]) * (SAMPLES_PER_CHARACTER * len(sentence))


@dataclass
class FakeLoadedVoices:
    """The fake engine's voices: each load, warm-up and calibration noted through ``note``."""

    note: Callable[[str], None]
    seconds_per_sentence: float

    def load(self, voice: VoiceSource | Path, name: str | None = None) -> FakeVoice:
        source = voice if isinstance(voice, VoiceSource) else hayakoe_source(voice.name, voice)
        name = name or source.name
        self.note(f"load {name}")
        config = source.read_config()
        speaker = source.speaker_id if source.speaker is not None else config.default_speaker_id
        return FakeVoice(name, config, source, speaker_id=speaker)

    def warm_up(self, voice: FakeVoice) -> None:
        self.note(f"warm up {voice.name} start")
        time.sleep(self.seconds_per_sentence)
        self.note(f"warm up {voice.name} end")

    def gain(self, voice: FakeVoice) -> float:
        if voice.gain is None:
            self.note(f"calibrate {voice.name} start")
            time.sleep(self.seconds_per_sentence)
            voice.gain = 1.0
            self.note(f"calibrate {voice.name} end")
        return voice.gain


@dataclass
class FakeEngine:
    """Records calls; ``seconds_per_sentence`` makes a synthesis take time (in the thread)."""

    bert_root: Path
    options: dict[str, Any] = field(default_factory=dict)
    seconds_per_sentence: float = 0.0
    seconds_per_refresh: float = 0.0
    seconds_to_prepare: dict[str, float] = field(default_factory=dict)
    """How long preparing a text takes (in the thread), for the texts named."""
    requests: list[tuple[str, str, SynthesisParams]] = field(default_factory=list)
    prepared: list[tuple[str, bool]] = field(default_factory=list)
    """Each text prepared, and whether it was to be split into sentences."""
    log: list[tuple[float, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.voices = FakeLoadedVoices(self._note, self.seconds_per_sentence)
        """As the engine's LoadedVoices: loading, warm-up and calibration, noted in the log."""

    def _note(self, what: str) -> None:
        with self._lock:
            self.log.append((time.monotonic(), what))

    def open_bert(self) -> None:
        if not any(entry == "open bert end" for _, entry in self.log):
            self._note("open bert start")
            time.sleep(self.seconds_per_sentence)
            self._note("open bert end")

    def open_text(self) -> None:
        self._note("open text")

    def choose_decoder(self, voice: FakeVoice, mode: str) -> None:
        self._note(f"choose decoder {mode}")

    def refresh_user_dictionary(self) -> bool:
        self._note("refresh start")
        time.sleep(self.seconds_per_refresh)
        self._note("refresh end")
        return False

    def prepare(self, text: str, whole: bool = True) -> FakePrepared:
        self._note(f"prepare {text} start")
        time.sleep(self.seconds_to_prepare.get(text, 0.0))
        self.prepared.append((text, whole))
        sentences = [s.text for s in split_for_synthesis(text)] if whole else [text]
        return FakePrepared(text, sentences, whole)

    def audio_key(
        self,
        voice: FakeVoice,
        prepared: FakePrepared,
        params: SynthesisParams,
        continuation: Continuation | None = None,
    ) -> Hashable | None:
        if continuation is not None:
            return None
        return (voice.name, params, prepared.rewritten, prepared.whole)

    def kept_audio(self, key: Hashable | None) -> list[PcmPiece] | None:
        return None  # no audio cache: every request synthesizes or joins a flight

    def synthesis_steps(
        self,
        voice: FakeVoice,
        prepared: FakePrepared,
        params: SynthesisParams,
        continuation: Continuation | None = None,
        pacing: Pacing | None = None,
        keep_as: Hashable | None = None,
    ) -> Iterator[PcmPiece | None]:
        self.requests.append((voice.name, prepared.rewritten, params))
        self._note(f"synthesize {prepared.rewritten} start")
        try:
            for sentence in prepared.sentences:
                self._note(f"step {sentence} start")
                time.sleep(self.seconds_per_sentence)
                self._note(f"step {sentence} end")
                pcm = fake_pcm(sentence)
                if pacing is not None:
                    pacing.playback.sent(len(pcm) / 2 / voice.sample_rate, time.monotonic())
                yield PcmPiece(sentence, pcm)
        finally:
            self._note(f"synthesize {prepared.rewritten} end")


def fake_engine_factory(engine: FakeEngine) -> Any:
    """An ``engine_factory`` for TtsService that hands out ``engine``."""

    def create(bert_root: Path, **options: Any) -> FakeEngine:
        engine.bert_root = bert_root
        engine.options = options
        return engine

    return create
