"""The application service under both adapters (the Wyoming server and the web page).

It owns the engine, the voice list and the synthesis queue, and imports neither Wyoming nor
the command line.
"""

from .service import ResolvedVoice, TtsService, VoiceStatus
from .settings import ServiceSettings

__all__ = ["ResolvedVoice", "ServiceSettings", "TtsService", "VoiceStatus"]
