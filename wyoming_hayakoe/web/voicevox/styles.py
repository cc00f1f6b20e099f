"""VOICEVOX's speakers and style ids for the installed voices.

VOICEVOX clients name a voice and a style with one integer, the style id. AivisSpeech Engine
makes an AIVM model's style id from its speaker's UUID and the style's local id (its README,
"AivisSpeech Engine におけるスタイル ID"): the low 27 bits of the MD5 of the UUID, shifted left
by 5, or-ed with the local id (0-31), with bit 31 cleared. An ``.aivmx`` voice gets the same
ids here, so a client set up for AivisSpeech Engine keeps working. A voice whose model names
no UUID (a HayaKoe folder, a Style-Bert-VITS2 export) gets one from its voice name,
:func:`speaker_uuid`, and its ids by the same rule: they stay the same across restarts and
machines for as long as the voice keeps its name.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from ...service import TtsService, VoiceEntry
from .errors import VoicevoxError

_LOGGER = logging.getLogger(__name__)

_UUID_BITS = 27
_LOCAL_ID_BITS = 5
_SIGN_BIT = 1 << 31
SPEAKER_NAMESPACE = "https://github.com/wyoming-hayakoe/wyoming-hayakoe#"
"""A voice without a UUID of its own is ``uuid5(NAMESPACE_URL, SPEAKER_NAMESPACE + name)``."""


def style_id(speaker: str, local_id: int) -> int:
    """AivisSpeech Engine's style id of the style ``local_id`` of the speaker ``speaker``."""
    digest = int(hashlib.md5(speaker.encode(), usedforsecurity=False).hexdigest(), 16)
    combined = ((digest & ((1 << _UUID_BITS) - 1)) << _LOCAL_ID_BITS) | (
        local_id & ((1 << _LOCAL_ID_BITS) - 1)
    )
    return combined & ~_SIGN_BIT


def speaker_uuid(entry: VoiceEntry) -> str:
    """The speaker UUID of a voice: its AIVM manifest's, else one made from its name."""
    if entry.speaker_uuid:
        return entry.speaker_uuid
    return str(uuid.uuid5(uuid.NAMESPACE_URL, SPEAKER_NAMESPACE + entry.name))


@dataclass(frozen=True)
class StyleRef:
    """What a style id names: a voice of this server and one of its styles."""

    voice: str
    style: str


class StyleTable:
    """The installed voices as VOICEVOX speakers, the default voice first."""

    def __init__(self, entries: list[VoiceEntry], default_voice: str) -> None:
        installed = [e for e in entries if e.installed]
        self.entries = sorted(installed, key=lambda e: (e.name != default_voice, e.name))
        self._styles: dict[int, StyleRef] = {}
        self._ids: dict[tuple[str, str], int] = {}
        for entry in self.entries:
            speaker = speaker_uuid(entry)
            local_ids = entry.style_ids or tuple(range(len(entry.styles)))
            for style, local_id in zip(entry.styles, local_ids, strict=False):
                number = style_id(speaker, local_id)
                if number in self._styles:
                    taken = self._styles[number]
                    _LOGGER.warning(
                        "Style %s of %s has the style id %d of %s (%s) already; it has none",
                        style, entry.name, number, taken.voice, taken.style,
                    )  # fmt: skip
                    continue
                self._styles[number] = StyleRef(entry.name, style)
                self._ids[(entry.name, style)] = number

    def lookup(self, number: int) -> StyleRef:
        """The voice and style of a style id; 422 as VOICEVOX answers an unknown one."""
        ref = self._styles.get(number)
        if ref is None:
            raise VoicevoxError(422, f"スタイル {number} は存在しません (no style id {number})")
        return ref

    def speakers(self) -> list[dict[str, Any]]:
        """``GET /speakers``: one speaker per installed voice."""
        return [self._speaker(entry) for entry in self.entries]

    def speaker(self, uuid_text: str) -> VoiceEntry:
        """The voice whose speaker UUID this is; 404 as VOICEVOX answers an unknown one."""
        for entry in self.entries:
            if speaker_uuid(entry) == uuid_text:
                return entry
        raise VoicevoxError(404, f"該当する話者が見つかりません (no speaker {uuid_text})")

    def style_ids(self, entry: VoiceEntry) -> list[tuple[str, int]]:
        """(style, id) of each style of ``entry`` that has an id."""
        ids = self._ids
        return [(s, ids[(entry.name, s)]) for s in entry.styles if (entry.name, s) in ids]

    def _speaker(self, entry: VoiceEntry) -> dict[str, Any]:
        return {
            "name": entry.description,
            "speaker_uuid": speaker_uuid(entry),
            "styles": [
                {"name": style, "id": number, "type": "talk"}
                for style, number in self.style_ids(entry)
            ],
            "version": "1.0.0",
            "supported_features": {"permitted_synthesis_morphing": "NOTHING"},
        }


def style_table(service: TtsService) -> StyleTable:
    """The speakers of the voices the service knows now."""
    return StyleTable(service.voice_entries, service.settings.default_voice)


async def find_style(service: TtsService, number: int) -> StyleRef:
    """The style of a style id, looking at the data dirs again for an id not known yet (a
    voice copied in since)."""
    try:
        return style_table(service).lookup(number)
    except VoicevoxError:
        await service.refresh_voices()
        return style_table(service).lookup(number)
