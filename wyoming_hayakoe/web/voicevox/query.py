"""VOICEVOX's AudioQuery, AccentPhrase and Mora as JSON, and what they mean for these models.

The fields mean what AivisSpeech Engine made them mean for Style-Bert-VITS2 (its README,
"AudioQuery 型の仕様変更"); the synthesis settings among them are ``knobs.py``'s, the same
name and scale as the command line's and the add-on's:

- ``speedScale``: larger is faster; ``length_scale = 1 / speedScale``.
- ``intonationScale``: the style's strength: 0-1 is ``style_weight`` 0-1, 1-2 is 1-10.
- ``tempoDynamicsScale`` (AivisSpeech's own): ``sdp_ratio``: 0-1 is 0-0.2, 1-2 is 0.2-1.
- ``noiseScale``, ``noiseScaleW``: this server's own, Style-Bert-VITS2's noise (absent: the
  server's defaults).
- ``pitchScale``: the pitch times ``1 + pitchScale``; see audio.py for how.
- ``kana``: the text as written (what the BERT reads). Empty, absent, or AquesTalk-like
  notation: the text is the morae themselves.
- ``accent_phrases``: each mora's ``text`` and each phrase's ``accent`` are read (and
  ``pause_mora``, ``is_interrogative`` as a ``,`` and a ``?``); ``consonant``, ``vowel``, the
  lengths and ``pitch`` are ignored (sent as 0).

The defaults of a new query are the server's own (``--speed-scale``, ``--intonation-scale``,
``--tempo-dynamics-scale``), so a query synthesized as it came is the Wyoming side's audio.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...knobs import INTONATION, NOISE, NOISE_W, SPEED, TEMPO_DYNAMICS, Knob
from ...service import (
    AccentPhrase,
    Mora,
    PhraseReading,
    SpeechSettings,
    TextWithReading,
)
from .errors import bad_field, number

_VOWELS = frozenset("aiueoN")
DEFAULT_SILENCE_SECONDS = 0.1
"""VOICEVOX's and AivisSpeech's ``prePhonemeLength``/``postPhonemeLength``."""
MIN_RATE, MAX_RATE = 8000, 192000
"""The output sampling rates accepted (telephone to studio)."""
MORAE_PER_CHARACTER = 5
"""A query may hold this many morae per character of ``--max-text-length`` (``W`` alone
reads ダブリュー, four)."""


# ----- out -----


def mora_json(mora: Mora) -> dict[str, Any]:
    """A mora as VOICEVOX writes it (``cl`` for ッ, ``pau`` for a mark, lengths and pitch 0)."""
    if mora.is_mark:
        consonant, vowel = None, "pau"
    elif mora.phonemes[-1] in _VOWELS:
        consonant = "".join(mora.phonemes[:-1]) or None
        vowel = mora.phonemes[-1]
    else:  # ッ
        consonant, vowel = None, "cl"
    return {
        "text": mora.kana,
        "consonant": consonant,
        "consonant_length": 0.0 if consonant else None,
        "vowel": vowel,
        "vowel_length": 0.0,
        "pitch": 0.0,
    }


def phrase_json(phrase: AccentPhrase) -> dict[str, Any]:
    return {
        "moras": [mora_json(m) for m in phrase.morae],
        "accent": phrase.accent,
        "pause_mora": None,
        "is_interrogative": bool(phrase.morae) and phrase.morae[-1].kana == "?",
    }


def query_json(
    text: str, phrases: list[AccentPhrase], defaults: SpeechSettings, sample_rate: int
) -> dict[str, Any]:
    """A new AudioQuery: the server's defaults, ``kana`` the text itself."""
    return {
        "accent_phrases": [phrase_json(p) for p in phrases],
        SPEED.api_field: defaults.speed,
        INTONATION.api_field: defaults.intonation,
        TEMPO_DYNAMICS.api_field: defaults.tempo,
        "pitchScale": 0.0,
        "volumeScale": 1.0,
        "prePhonemeLength": DEFAULT_SILENCE_SECONDS,
        "postPhonemeLength": DEFAULT_SILENCE_SECONDS,
        "pauseLength": None,
        "pauseLengthScale": 1.0,
        "outputSamplingRate": sample_rate,
        "outputStereo": False,
        "kana": text,
    }


# ----- in -----


@dataclass(frozen=True)
class SynthesisRequest:
    """An AudioQuery read: what to say, and the settings it asks for."""

    reading: TextWithReading
    settings: SpeechSettings


def read_phrases(raw: Any, max_morae: int) -> tuple[PhraseReading, ...]:
    """The readings of VOICEVOX accent phrases (422 naming the first bad field)."""
    if not isinstance(raw, list):
        raise bad_field("accent_phrases", "Input should be a valid list", raw, "list_type")
    phrases: list[PhraseReading] = []
    total = 0
    for index, item in enumerate(raw):
        where = f"accent_phrases.{index}"
        if not isinstance(item, dict) or not isinstance(item.get("moras"), list):
            raise bad_field(where, "Input should be an object with 'moras'", item, "model_type")
        morae = [_mora_text(m, f"{where}.moras.{i}") for i, m in enumerate(item["moras"])]
        accent = item.get("accent")
        if isinstance(accent, bool) or not isinstance(accent, int):
            message = "Input should be a valid integer"
            raise bad_field(f"{where}.accent", message, accent, "int_type")
        question = item.get("is_interrogative") is True
        phrase = PhraseReading.of_morae(
            morae, accent, question, isinstance(item.get("pause_mora"), dict)
        )
        total += len(phrase.kana)
        if total > max_morae:
            raise bad_field("accent_phrases", f"more than {max_morae} morae", None, "too_long")
        phrases.append(phrase)
    return tuple(phrases)


def _mora_text(mora: Any, where: str) -> str:
    text = mora.get("text") if isinstance(mora, dict) else None
    if not isinstance(text, str) or not text:
        raise bad_field(f"{where}.text", "Input should be a valid string", text, "string_type")
    return text


def read_query(body: Any, max_morae: int, defaults: SpeechSettings) -> SynthesisRequest:
    """An AudioQuery as sent to ``/synthesis`` (422 naming the first bad field). A field left
    out or null takes the server's default (``defaults``: its ``--speed-scale``,
    ``--intonation-scale`` and ``--tempo-dynamics-scale``), as a new query would have held it."""
    if not isinstance(body, dict):
        raise bad_field("", "Input should be a valid dictionary", body, "dict_type")
    phrases = read_phrases(body.get("accent_phrases"), max_morae)
    kana = body.get("kana")
    if kana is not None and not isinstance(kana, str):
        raise bad_field("kana", "Input should be a valid string", kana, "string_type")
    reading = TextWithReading.of_query(kana, phrases)
    pause = body.get("pauseLength")
    rate = body.get("outputSamplingRate")
    if rate is not None and (
        isinstance(rate, bool) or not isinstance(rate, int) or not MIN_RATE <= rate <= MAX_RATE
    ):
        message = f"Input should be a whole number from {MIN_RATE} to {MAX_RATE}"
        raise bad_field("outputSamplingRate", message, rate, "range")
    stereo = body.get("outputStereo", False)
    if not isinstance(stereo, bool):
        raise bad_field("outputStereo", "Input should be a valid boolean", stereo, "bool_type")
    settings = SpeechSettings(
        speed=_knob(body, SPEED, defaults.speed),
        intonation=_knob(body, INTONATION, defaults.intonation),
        tempo=_knob(body, TEMPO_DYNAMICS, defaults.tempo),
        pitch=number(body, "pitchScale", -0.5, 0.5, 0.0),
        volume=number(body, "volumeScale", 0.0, 20.0, 1.0),
        pre_seconds=number(body, "prePhonemeLength", 0.0, 10.0, DEFAULT_SILENCE_SECONDS),
        post_seconds=number(body, "postPhonemeLength", 0.0, 10.0, DEFAULT_SILENCE_SECONDS),
        pause_length=None if pause is None else number(body, "pauseLength", 0.0, 10.0),
        pause_scale=number(body, "pauseLengthScale", 0.0, 10.0, 1.0),
        sample_rate=rate,
        stereo=stereo,
        noise=_optional(body, NOISE),
        noise_w=_optional(body, NOISE_W),
    )
    return SynthesisRequest(reading, settings)


def _knob(body: dict[str, Any], knob: Knob, default: float | None) -> float:
    """The knob's field, or (left out) the server's default."""
    return number(body, knob.api_field, knob.low, knob.high, default)


def _optional(body: dict[str, Any], knob: Knob) -> float | None:
    """The knob's field, or None (left out: the server's default, not the query's)."""
    return (
        None
        if body.get(knob.api_field) is None
        else number(body, knob.api_field, knob.low, knob.high)
    )
