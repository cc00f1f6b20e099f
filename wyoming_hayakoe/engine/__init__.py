"""Blocking synthesis: text -> sentences -> phonemes -> BERT features -> audio.

No asyncio and no Wyoming here: callers on an event loop run the engine in a worker thread.
"""

from ..compiling.compiled import DecoderChoice, SelfCheckResult
from ..inference.params import SynthesisParams
from ..pacing.scheduler import Pacing
from .engine import Continuation, Engine, PcmPiece
from .voice import Voice

__all__ = [
    "Continuation",
    "DecoderChoice",
    "Engine",
    "Pacing",
    "PcmPiece",
    "SelfCheckResult",
    "SynthesisParams",
    "Voice",
]
