"""The ``info`` event: a program is installed only when one of its voices is (Home Assistant
sets up an installed program alone and lists installed voices alone)."""

from __future__ import annotations

from wyoming_hayakoe.server.info import build_info
from wyoming_hayakoe.service import VoiceEntry


def entry(name: str, installed: bool) -> VoiceEntry:
    return VoiceEntry(name, ("Neutral", "Happy"), installed, f"voice {name}", ("me", "https://x"))


def test_nothing_installed_is_no_installed_program() -> None:
    """A first start still downloading (or one that cannot): the catalog is listed, and
    neither a voice nor the program claims to be installed."""
    (program,) = build_info([entry("jvnv-F1-jp", False), entry("jvnv-M1-jp", False)], True).tts
    assert program.installed is False
    assert [voice.installed for voice in program.voices] == [False] * 4  # styles as voices too


def test_one_installed_voice_makes_the_program_installed() -> None:
    (program,) = build_info([entry("jvnv-F1-jp", False), entry("tiny", True)], False).tts
    assert program.installed is True
    installed = [voice.name for voice in program.voices if voice.installed]
    assert installed == ["tiny", "tiny (Happy)"]
