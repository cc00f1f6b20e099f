"""The Wyoming ``info`` event: the program, its voices and their styles.

Home Assistant lets a user pick a voice but not a speaker, so besides listing each style as a
speaker of its voice, every style other than the voice's default one is also listed as a voice
of its own, named ``<voice> (<style>)``.
"""

from __future__ import annotations

from collections.abc import Iterable

from wyoming.info import Attribution, Info, TtsProgram, TtsVoice, TtsVoiceSpeaker

from .. import __version__
from ..service import HAYAKOE_CREDIT, VoiceEntry, styled_voice_name

PROGRAM_NAME = "hayakoe"
PROGRAM_DESCRIPTION = "HayaKoe: fast Japanese Style-Bert-VITS2 voices on the CPU"
LANGUAGES = ["ja"]


def build_info(entries: Iterable[VoiceEntry], streaming: bool) -> Info:
    """The program is installed when a voice is: Home Assistant sets up only an installed
    program and lists only installed voices, and a first start that is still downloading has
    neither to offer yet (the add-on tells Home Assistant about it once it has one)."""
    voices: list[TtsVoice] = []
    entries = list(entries)
    for entry in entries:
        description = entry.description
        if entry.license:
            description = f"{description} ({entry.license})"
        attribution = Attribution(*entry.credit)
        voices.append(
            TtsVoice(
                name=entry.name,
                description=description,
                attribution=attribution,
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
                attribution=attribution,
                installed=entry.installed,
                version=None,
                languages=list(LANGUAGES),
            )
            for style in entry.styles[1:]
        )
    program = TtsProgram(
        name=PROGRAM_NAME,
        description=PROGRAM_DESCRIPTION,
        attribution=Attribution(*HAYAKOE_CREDIT),
        installed=any(entry.installed for entry in entries),
        version=__version__,
        voices=voices,
        supports_synthesize_streaming=streaming,
    )
    return Info(tts=[program])
