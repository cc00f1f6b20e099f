"""The Wyoming ``info`` event: the program, its voices and their styles.

Home Assistant lets a user pick a voice but not a speaker, so besides listing each style as a
speaker of its voice, every style other than the voice's default one is also listed as a voice
of its own, named ``<voice> (<style>)``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from wyoming.info import Attribution, Info, TtsProgram, TtsVoice, TtsVoiceSpeaker

from .. import __version__
from ..engine.voice import VoiceConfig
from ..errors import ModelFileError
from ..voices.catalog import CatalogVoice

_LOGGER = logging.getLogger(__name__)

PROGRAM_NAME = "hayakoe"
PROGRAM_DESCRIPTION = "HayaKoe: fast Japanese Style-Bert-VITS2 voices on the CPU"
HAYAKOE_ATTRIBUTION = Attribution(
    name="HayaKoe (AGPL-3.0)", url="https://github.com/LemonDouble/hayakoe"
)
LANGUAGES = ["ja"]

_STYLED_NAME_RE = re.compile(r"^(?P<voice>.+) \((?P<style>[^()]+)\)$")


@dataclass(frozen=True)
class VoiceEntry:
    """What the server can say about one voice, installed or not."""

    name: str
    styles: tuple[str, ...]  # ordered by style id; the first one is the default
    installed: bool
    description: str
    attribution: Attribution
    license: str | None = None


def styled_voice_name(voice: str, style: str) -> str:
    return f"{voice} ({style})"


def split_styled_voice_name(name: str) -> tuple[str, str] | None:
    """``"jvnv-F1-jp (Happy)"`` -> ``("jvnv-F1-jp", "Happy")``; None if not of that form."""
    match = _STYLED_NAME_RE.match(name)
    if match is None:
        return None
    return match.group("voice"), match.group("style")


def read_voice_styles(voice_dir: Path) -> tuple[str, ...]:
    """Style names of an installed voice, ordered by id, from its ``config.json``."""
    config = VoiceConfig.read(voice_dir / "config.json")
    return tuple(sorted(config.styles, key=config.styles.__getitem__))


def collect_voice_entries(
    installed: Mapping[str, Path],
    catalog: Mapping[str, CatalogVoice],
    names: Iterable[str],
) -> list[VoiceEntry]:
    """One entry per voice name, preferring what the installed files say over the catalog.

    A voice whose files cannot be read is left out with a warning rather than breaking
    ``describe``.
    """
    entries: list[VoiceEntry] = []
    for name in sorted(set(names)):
        known = catalog.get(name)
        voice_dir = installed.get(name)
        try:
            if voice_dir is not None:
                styles = read_voice_styles(voice_dir)
            elif known is not None:
                styles = tuple(known.styles)
            else:
                continue
        except ModelFileError as err:
            _LOGGER.warning("Leaving voice %s out of the voice list: %s", name, err)
            continue
        if not styles:
            styles = ("Neutral",)
        entries.append(
            VoiceEntry(
                name=name,
                styles=styles,
                installed=voice_dir is not None,
                description=known.description if known is not None else name,
                attribution=_voice_attribution(known),
                license=known.license if known is not None else None,
            )
        )
    return entries


def build_info(entries: Iterable[VoiceEntry], streaming: bool) -> Info:
    voices: list[TtsVoice] = []
    for entry in entries:
        description = entry.description
        if entry.license:
            description = f"{description} ({entry.license})"
        voices.append(
            TtsVoice(
                name=entry.name,
                description=description,
                attribution=entry.attribution,
                installed=entry.installed,
                version=None,
                languages=list(LANGUAGES),
                speakers=[TtsVoiceSpeaker(name=style) for style in entry.styles],
            )
        )
        # The first style is the voice's own default: the plain name already selects it.
        voices.extend(
            TtsVoice(
                name=styled_voice_name(entry.name, style),
                description=f"{description}, style {style}",
                attribution=entry.attribution,
                installed=entry.installed,
                version=None,
                languages=list(LANGUAGES),
            )
            for style in entry.styles[1:]
        )
    program = TtsProgram(
        name=PROGRAM_NAME,
        description=PROGRAM_DESCRIPTION,
        attribution=HAYAKOE_ATTRIBUTION,
        installed=True,
        version=__version__,
        voices=voices,
        supports_synthesize_streaming=streaming,
    )
    return Info(tts=[program])


def _voice_attribution(known: CatalogVoice | None) -> Attribution:
    if known is not None and known.attribution_name:
        return Attribution(name=known.attribution_name, url=known.attribution_url)
    return HAYAKOE_ATTRIBUTION
