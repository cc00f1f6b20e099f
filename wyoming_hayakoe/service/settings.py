"""What the service is configured with; built by the entry point from its options."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..inference.params import SynthesisParams


@dataclass(frozen=True)
class ServiceSettings:
    default_voice: str
    """The voice of requests that name none; loaded at start-up."""
    params: SynthesisParams
    """Defaults for every request (the style applies where the voice has it)."""
    max_text_length: int
    """Longest text accepted, in characters, whole or streamed."""
    streaming: bool
    """Whether streamed text (synthesize-start/chunk/stop) is accepted."""
    local_files_only: bool
    """Never download: only installed voices are offered and loaded."""
    default_style: str | None = None
    """The style asked for as default, checked against the default voice at start-up."""
    threads: int | None = None
    """ONNX Runtime intra-op threads (None: the cores this process may use)."""
    cache_dir: Path | None = None
    """Models compiled for this machine (see compiling/)."""
    audio_cache_bytes: int = 0
    """Memory for finished audio of repeated requests."""
    user_dictionary: Path | None = None
    """user_dict.csv, reloaded when edited."""
    decoder: str = "auto"
    """Which decoder serves: ``reference`` (FP32, HayaKoe's), ``fast`` (the mixed-precision
    variant made on this machine) or ``auto`` (the fast one where this machine needs it and
    it passed its quality gate; see compiling/decoder_choice.py)."""
    english_model: bool = True
    """Whether the English model reads the English words no dictionary knows (else they are
    spelled); a VOICEVOX query may ask otherwise for itself."""
    max_waiting: int = 16
    """Syntheses in progress at once (running or waiting for the CPU); a request for another
    is refused at once. Requests that join an identical one in progress, or that the audio
    cache answers, do not count. (The command line's default is the same.)"""
