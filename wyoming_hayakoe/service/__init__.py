"""The application service under both adapters (the Wyoming server and the web page).

It owns the engine, the voice list, the synthesis queue, the voices on disk and the user
dictionary file, and imports neither Wyoming nor the command line. This package is the
adapters' one door. An adapter states a request (:class:`SpeechRequest`, with the settings its
client may set: :class:`SpeechSettings`) and gets its audio (:class:`Speech`, or
:class:`TextStream` for a text that comes in pieces); the voice, the length check, the
settings and the output's finishing are the service's.

The lower layers' names it passes, each because an adapter speaks it in its protocol:
VOICEVOX's accent phrases and morae as JSON (``AccentPhrase``, ``Mora``, ``PhraseReading``,
``TextWithReading``, and ``AquesTalkError`` for its notation's 400), the page's reading
(``TextReading``), the dictionary's words (``Entry``), ``describe``'s and the page's voice
entries (``VoiceEntry``, ``HAYAKOE_CREDIT``), and what a voice may be named
(``is_valid_voice_name``, checked by the page's uploads).
"""

from ..text.accent import AccentPhrase, Mora, PhraseReading
from ..text.aquestalk import AquesTalkError
from ..text.explain import TextReading
from ..text.user_dict import Entry
from ..text.with_reading import TextWithReading
from ..voices.catalog import is_valid_voice_name
from ..voices.listing import HAYAKOE_CREDIT, VoiceEntry
from . import dictionary
from .availability import BERT
from .dictionary import DictionaryEditError
from .request import SpeechRequest, SpeechSettings
from .service import TtsService
from .settings import ServiceSettings
from .speech import Speech, TextStream
from .voice_list import voice_list
from .voice_names import styled_voice_name
from .voice_uploads import UploadError, UploadLimits, check_file_name

__all__ = [
    "BERT",
    "HAYAKOE_CREDIT",
    "AccentPhrase",
    "AquesTalkError",
    "DictionaryEditError",
    "Entry",
    "Mora",
    "PhraseReading",
    "ServiceSettings",
    "Speech",
    "SpeechRequest",
    "SpeechSettings",
    "TextReading",
    "TextStream",
    "TextWithReading",
    "TtsService",
    "UploadError",
    "UploadLimits",
    "VoiceEntry",
    "check_file_name",
    "dictionary",
    "is_valid_voice_name",
    "styled_voice_name",
    "voice_list",
]
