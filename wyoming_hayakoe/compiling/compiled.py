"""What compiling hands the request-time engine: the one module ``engine/`` imports from here.

The engine opens models only through these (compiling them first in a child where the cache
has none, see voice_models.py and bert.py) and keeps the cache tidy with them; everything
else in this folder runs in the compilation child or at the server's start.
"""

from __future__ import annotations

from pathlib import Path

from .bert import open_bert
from .cache import cache_key, prune
from .decoder_choice import MODES, DecoderChoice, VoiceDecoder, fast_decoder
from .files import keep, writable
from .self_check import SelfCheckResult
from .staging import remove_abandoned
from .voice_models import VoiceModels, open_models

__all__ = [
    "MODES",
    "DecoderChoice",
    "SelfCheckResult",
    "VoiceDecoder",
    "VoiceModels",
    "cache_key",
    "fast_decoder",
    "keep",
    "open_bert",
    "open_models",
    "prune",
    "published_duration_branch",
    "remove_abandoned",
    "writable",
]


def published_duration_branch(source: Path) -> bytes:
    """The duration branch of the published synthesizer ``source``, cut out where nothing was
    compiled (see graphs/duration_branch.py)."""
    # Graph editing imports onnx: only when this is called.
    from .graphs.duration_branch import duration_branch_bytes

    return duration_branch_bytes(source)
