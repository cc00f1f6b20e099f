"""The engine's audio without the server, for the tests and the benchmark.

``pcm_pieces`` runs the one synthesis entry point the service runs (Engine.synthesis_steps)
and collects what it sends (a Wyoming client hears ``opening_silence`` before it);
``float_pieces`` stops before the loudness gain and the 16-bit rounding, for comparisons with
the reference's float audio.
"""

from __future__ import annotations

from collections.abc import Iterator

from wyoming_hayakoe.engine import Continuation, Engine, PcmPiece, SynthesisParams, Voice, rendering
from wyoming_hayakoe.engine.pieces import AudioPiece
from wyoming_hayakoe.server.audio_events import OPENING_SILENCE_SECONDS
from wyoming_hayakoe.text.with_reading import TextWithReading


def pcm_pieces(
    engine: Engine,
    voice: Voice,
    text: str | TextWithReading,
    params: SynthesisParams | None = None,
    continuation: Continuation | None = None,
) -> Iterator[PcmPiece]:
    """The PCM of ``text`` as the service sends it (from and into the audio cache)."""
    prepared, params = engine.prepare(text), params or SynthesisParams()
    key = engine.audio_key(voice, prepared, params, continuation)
    cached = engine.kept_audio(key)
    if cached is not None:
        return iter(cached)
    steps = engine.synthesis_steps(voice, prepared, params, continuation, keep_as=key)
    return (piece for piece in steps if piece is not None)


def opening_silence(sample_rate: int) -> bytes:
    """The 16-bit silence that opens a reply to a Wyoming client (--first-audio-within)."""
    return bytes(2 * int(OPENING_SILENCE_SECONDS * sample_rate))


def float_pieces(
    engine: Engine,
    voice: Voice,
    text: str,
    params: SynthesisParams,
    continuation: Continuation | None = None,
) -> Iterator[AudioPiece]:
    """Float audio per sentence (or window of it), with the pause that belongs before it:
    what ``pcm_pieces`` sends, before the gain and the 16-bit rounding."""
    speed = engine.voices.speed(voice)
    steps = rendering.render_steps(
        voice, engine.prepare(text), params, engine.features, speed, continuation
    )
    return (piece for piece in steps if piece is not None)
