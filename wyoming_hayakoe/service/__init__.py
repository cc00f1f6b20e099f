"""The application service under both adapters (the Wyoming server and the web page).

It owns the engine, the voice list, the synthesis queue, the voices on disk and the user
dictionary file, and imports neither Wyoming nor the command line. This package is the
adapters' one door: what they take from the layers below (the words of a request and its
answer: accent phrases, readings, audio pieces, voice entries) they take from here.
"""

from ..engine import Continuation, PcmPiece, SynthesisParams
from ..engine.finishing import Finisher, Finishing
from ..text.accent import MARKS, AccentPhrase, Mora, PhraseReading, spoken_phrase
from ..text.aquestalk import AquesTalkError, parse_aquestalk
from ..text.explain import TextReading
from ..text.normalize import fold_punctuation
from ..text.sentences import SentenceStream
from ..text.user_dict import Entry
from ..text.with_reading import TextWithReading
from ..voices.catalog import is_valid_voice_name
from ..voices.listing import HAYAKOE_CREDIT, VoiceEntry
from . import dictionary
from .availability import BERT
from .dictionary import DictionaryEditError, validate
from .service import TtsService
from .settings import ServiceSettings
from .voice_downloads import DownloadJob
from .voice_list import voice_list
from .voice_loading import ResolvedVoice
from .voice_names import styled_voice_name
from .voice_uploads import UploadError, UploadLimits, check_file_name

__all__ = [
    "BERT",
    "HAYAKOE_CREDIT",
    "MARKS",
    "AccentPhrase",
    "AquesTalkError",
    "Continuation",
    "DictionaryEditError",
    "DownloadJob",
    "Entry",
    "Finisher",
    "Finishing",
    "Mora",
    "PcmPiece",
    "PhraseReading",
    "ResolvedVoice",
    "SentenceStream",
    "ServiceSettings",
    "SynthesisParams",
    "TextReading",
    "TextWithReading",
    "TtsService",
    "UploadError",
    "UploadLimits",
    "VoiceEntry",
    "check_file_name",
    "dictionary",
    "fold_punctuation",
    "is_valid_voice_name",
    "parse_aquestalk",
    "spoken_phrase",
    "styled_voice_name",
    "validate",
    "voice_list",
]
