"""Model caches with fixture voices already compiled, made once per test run.

Compiling a voice for this machine (split, optimized copies, decoder stages, self-check,
gain) starts a dozen child processes: seconds even for the tiny voice, and about 40 places
in the tests did it again on an empty cache. They take a copy of a cache compiled once
instead (conftest's ``compiled_caches`` and ``tiny_model_cache``). Tests of the compilation
itself still start from an empty cache.

Only the public way a voice is loaded is used (``Engine(root, cache_dir=...)``,
``voices.load``, ``voices.gain``), so the caches hold whatever the engine compiles today. The cache
key is the model file's size and modification time, not its path: a copy of a fixture voice
made with its times kept (``shutil.copytree``) finds its compiled models here too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tools.server_process import TINY_VOICE_DIR, TINY_VOICE_ROOT
from wyoming_hayakoe.engine import Engine
from wyoming_hayakoe.voices import layout
from wyoming_hayakoe.voices.sources import VoiceSource

Voice = Path | VoiceSource
"""A voice folder (HayaKoe), or a source found by the voice store (.aivmx, SBV2 export)."""


def compile_voices(cache: Path, bert_root: Path, voices: tuple[Voice, ...]) -> None:
    """Compile ``voices`` with the BERT of ``bert_root`` into ``cache``, as a server does
    at its first start (their gain and the default decoder choice too)."""
    engine = Engine(bert_root, threads=1, cache_dir=cache)
    engine.open_bert()
    for voice in voices:
        loaded = engine.voices.load(voice)
        engine.voices.gain(loaded)
        engine.choose_decoder(loaded, "auto")


class CompiledCaches:
    """Caches made at first use and kept for the run; never written after (take a copy)."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._made: dict[tuple[Path, tuple[tuple[str, int, int, int], ...]], Path] = {}

    def master(
        self, bert_root: Path = TINY_VOICE_ROOT, voices: tuple[Voice, ...] = (TINY_VOICE_DIR,)
    ) -> Path:
        """The shared cache for ``voices`` with the BERT of ``bert_root``: read it, never
        write it (hand :meth:`copy` to anything that may)."""
        key = (bert_root.resolve(), tuple(_identity(v) for v in voices))
        cache = self._made.get(key)
        if cache is None:
            # On top of the first voice's cache: the tiny voice is compiled once for the run.
            first = self.master(bert_root, voices[:1]) if len(voices) > 1 else None
            cache = self._root / f"cache-{len(self._made)}"
            if first is not None:
                shutil.copytree(first, cache)
            compile_voices(cache, bert_root, voices)
            self._made[key] = cache
        return cache

    def copy(
        self,
        target: Path,
        bert_root: Path = TINY_VOICE_ROOT,
        voices: tuple[Voice, ...] = (TINY_VOICE_DIR,),
    ) -> Path:
        """A writable copy of :meth:`master` at ``target`` (a new or an empty folder; copied,
        not linked: a test may edit a compiled file in place)."""
        shutil.copytree(self.master(bert_root, voices), target, dirs_exist_ok=True)
        return target


def _identity(voice: Voice) -> tuple[str, int, int, int]:
    """What the engine's cache knows a voice by: its model file's name, size and time (a
    copy with its times kept is the same voice), and the speaker."""
    model = voice.model if isinstance(voice, VoiceSource) else layout.synthesizer_file(voice)
    speaker = voice.speaker_id if isinstance(voice, VoiceSource) else 0
    stat = model.stat()
    return model.name, stat.st_size, stat.st_mtime_ns, speaker
