"""What a synthetic SBV2 or AIVMX voice holds: its model name, styles and speakers (the
fixtures in sbv2_fixtures.py, written by sbv2_export.py and aivmx.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SpeakerSpec:
    name: str
    local_id: int
    # (style name, style id = row of style_vectors.npy); AIVM lets each speaker list a subset
    styles: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class VoiceSpec:
    model_name: str
    style_names: tuple[str, ...]  # style2id order; index 0 is the mean style
    speakers: tuple[SpeakerSpec, ...]

    @property
    def spk2id(self) -> dict[str, int]:
        return {s.name: s.local_id for s in self.speakers}

    @property
    def style2id(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.style_names)}
