"""The application: owns the engine, the voice list and the synthesis queue.

Both adapters stand on it: the Wyoming server (``server/``) and the web page (``web/``). It
speaks neither protocol and knows nothing of the command line: ``__main__`` builds its
settings. Everything that blocks (disk scans, downloads, loading ONNX sessions, compiling the
user dictionary, synthesis) runs on the service's worker threads (workers.py), never on the
event loop.

Several requests at once: each synthesis runs step by step (a sentence's front-end, BERT and
text encoder; a decoder window), one step at a time, the step whose listener needs it first
(pacing/turns.py). Requests for the same audio while one is in progress share it
(flights.py). At most ``max_waiting`` syntheses are in progress: a request beyond that is
refused at once rather than queued.

Voices are loaded by voice_loading.py: what cannot be had yet does not take down what can
(a voice or the BERT that cannot be downloaded or loaded is refused with its reason while the
others serve, and the default voice and the BERT are retried in the background until they are
there).
"""

from __future__ import annotations

from functools import partial

from ..engine import Continuation, Engine, SynthesisParams, Voice
from ..engine.prepared import PreparedText
from ..errors import UnknownVoiceError
from ..foreground import Foreground
from ..progress import ProgressBoard
from ..text.frontend import TextFrontend
from ..text.with_reading import TextWithReading
from ..voices.listing import VoiceEntry
from ..voices.store import VoiceStore
from .availability import Availabilities
from .dictionary import DictionaryFile
from .flights import PieceCallback
from .request import (
    SpeechRequest,
    SpeechSettings,
    check_length,
    default_settings,
    finishes,
    finishing,
    synthesis_params,
)
from .settings import ServiceSettings
from .shared_engine import EngineFactory, SharedEngine
from .speech import SentenceSynthesis, Speech, TextStream
from .syntheses import Syntheses
from .text_readings import TextReadings
from .voice_loading import ResolvedVoice, VoiceLoader
from .voice_management import VoiceManagement
from .voice_names import VoiceListing, VoiceNames
from .workers import Workers


class TtsService:
    def __init__(
        self,
        store: VoiceStore,
        settings: ServiceSettings,
        engine_factory: EngineFactory = Engine,
    ) -> None:
        self.settings = settings
        self._store = store
        self._names = VoiceNames(store, settings.local_files_only)
        self.progress = ProgressBoard()
        """Downloads and compiles in progress (work on the service's threads reports here);
        the web page shows its snapshot."""
        foreground = Foreground()  # the syntheses in progress, which compile children stop for
        self._workers = Workers(self.progress, foreground)
        self._syntheses = Syntheses(self._workers, settings.max_waiting, foreground)
        availability = Availabilities()
        self._engine = SharedEngine(store, settings, engine_factory, self._workers, availability)
        self.voice_loading = VoiceLoader(
            store,
            settings,
            self._names,
            self._workers,
            self._engine,
            self._syntheses,
            availability,
        )
        """Which voice and style a request means, loaded once; the default voice's bring-up;
        each voice's state (the server's log and the web page show it)."""
        self.voice_management = VoiceManagement(
            store,
            self._workers,
            settings.default_voice,
            downloads_allowed=not settings.local_files_only,
            refresh_voices=self.refresh_voices,
        )
        """Downloads, uploads and removals of voices (the web page's)."""
        self.readings = TextReadings(
            self.loaded_text_frontend, self._workers, settings.user_dictionary,
            settings.english_model, settings.max_text_length,
        )  # fmt: skip
        """How the engine reads a text (the page's reading, the VOICEVOX API's phrases)."""
        self.dictionary = DictionaryFile(
            settings.user_dictionary, self._workers, self.loaded_text_frontend
        )
        """The user dictionary file, as the adapters edit it."""

    @property
    def workers(self) -> Workers:
        """The one set of worker threads; the adapters run their blocking work on them."""
        return self._workers

    @property
    def store(self) -> VoiceStore:
        """The voice store the service loads from (the web page lists and manages it)."""
        return self._store

    # ----- the voice list -----

    async def refresh_voices(self) -> None:
        """Look at the data dirs again, off the event loop; :attr:`voice_listing` shows it."""
        await self._workers.load(self._names.rescan)

    @property
    def voice_listing(self) -> VoiceListing:
        """Every voice a client may ask for, as of the last look (from memory)."""
        return self._names.listing

    @property
    def voice_entries(self) -> list[VoiceEntry]:
        """What ``describe`` shows of every voice a client may ask for, from memory."""
        return self._names.entries

    # ----- voices -----

    async def loaded_text_frontend(self) -> TextFrontend | None:
        """The engine's text front-end with the user dictionary's words in effect (an edited
        dictionary is compiled first, on the text thread as for a request, not on the synthesis
        thread); None while there is no engine (its shared BERT is still coming or cannot be
        had): a reading needs OpenJTalk and the rules, not the BERT, and the engine reads the
        dictionary file when it is made."""
        engine = self._engine.ready
        if engine is None:
            return None
        await self._workers.read_text(engine.refresh_user_dictionary)
        return engine.frontend

    # ----- synthesis -----

    @property
    def default_settings(self) -> SpeechSettings:
        """The server's speed, intonation and tempo on the knobs' scales (what a new VOICEVOX
        query holds)."""
        return default_settings(self.settings.params)

    async def speech(self, request: SpeechRequest) -> Speech:
        """The request ready to speak: its text within ``--max-text-length``, its voice and
        style loaded, its settings applied (each refusal an error before any audio);
        :meth:`Speech.play` or :meth:`Speech.whole` synthesizes it.

        The same request (voice, parameters, rewritten text) made while one is in progress
        joins it; if the caller is cancelled (the client went away), only its own audio stops,
        and the synthesis stops once nobody listens. Raises ServerBusyError when
        ``max_waiting`` syntheses are in progress already.
        """
        check_length(request.text, self.settings.max_text_length)
        resolved = await self._resolve(request.voice, request.style, request.installed_only)
        settings = request.settings
        params = synthesis_params(resolved.params, settings)
        finished = finishing(resolved.params, settings) if finishes(settings) else None
        synthesis = partial(self._synthesize, resolved.voice, params, request.text)
        return Speech(synthesis, resolved.voice.sample_rate, finished, self._workers)

    def text_stream(self, voice: str | None, style: str | None) -> TextStream:
        """A text that will come in pieces, spoken sentence by sentence in ``voice``."""

        async def open_voice() -> tuple[int, SentenceSynthesis]:
            resolved = await self._resolve(voice, style)
            sentence = partial(self._synthesize_sentence, resolved.voice, resolved.params)
            return resolved.voice.sample_rate, sentence

        return TextStream(self.settings.max_text_length, open_voice)

    async def load_voice(self, voice: str, style: str | None) -> int:
        """Load an installed voice and style ahead of its requests (never downloading); its
        sampling rate."""
        return (await self._resolve(voice, style, installed_only=True)).voice.sample_rate

    async def _resolve(
        self, voice: str | None, style: str | None, installed_only: bool = False
    ) -> ResolvedVoice:
        if installed_only:
            await self.refresh_voices()  # a voice copied in since counts
            if voice not in self.voice_listing.installed:
                raise UnknownVoiceError(f"voice {voice!r} is not installed")
        return await self.voice_loading.resolve(voice, style)

    async def _synthesize_sentence(
        self,
        voice: Voice,
        params: SynthesisParams,
        sentence: str,
        on_piece: PieceCallback,
        continuation: Continuation,
    ) -> int:
        """One sentence a stream split off already: rewritten, not split again."""
        return await self._synthesize(voice, params, sentence, on_piece, continuation, False)

    async def _synthesize(
        self,
        voice: Voice,
        params: SynthesisParams,
        text: str | TextWithReading,
        on_piece: PieceCallback,
        continuation: Continuation | None = None,
        whole: bool = True,
    ) -> int:
        """Synthesize ``text``, awaiting ``on_piece`` for each piece of audio as it is ready;
        the number of pieces."""
        engine = await self._engine.get()
        # On the one text thread, in the order the requests came: a later request's text is
        # never ready first, so its audio cannot go ahead (on two loading threads it could).
        # An edited user dictionary is compiled there first; synthesis keeps going meanwhile.
        prepared = await self._workers.read_text(_prepared, engine, text, whole)
        return await self._syntheses.run(engine, voice, params, prepared, on_piece, continuation)

    @property
    def busy(self) -> bool:
        """True while a worker thread is still inside the engine or a download."""
        return self._workers.busy

    async def close(self) -> None:
        """Stop taking work. Threads still inside ONNX are not waited for."""
        self._syntheses.close()
        self._engine.cancel()
        self.voice_management.close()
        self._workers.shutdown()


def _prepared(engine: Engine, text: str | TextWithReading, whole: bool) -> PreparedText:
    """The request's text rewritten and split, with the user dictionary as it is now."""
    engine.refresh_user_dictionary()
    return engine.prepare(text, whole)
