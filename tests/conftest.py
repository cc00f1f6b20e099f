"""Shared fixtures.

Text front-end: ``bert_tokenizer_dir``, ``text_frontend``, ``plain_frontend``,
``available_frontend``, ``transformers_tokenizer``, ``hayakoe_reference``, ``check_phonemes``.

Compiled voices (tests/support/compiled_voices.py): compiling a voice starts a dozen child
processes, so a test that needs a compiled voice but does not test the compilation takes a
copy of a cache made once per run:

* ``tiny_model_cache``: a writable model cache in the test's ``tmp_path`` with the tiny voice
  (tests/fixtures/tiny-voice) and its BERT compiled. ``Engine(TINY_VOICE_ROOT,
  cache_dir=tiny_model_cache)`` loads it in a fraction of a second; other voices loaded with
  the same BERT are compiled on top of it as usual.
* ``compiled_caches``: the same for any fixture voices, for module-scoped engines too:
  ``compiled_caches.copy(tmp_path_factory.mktemp("cache"), ROOT, (VOICE_DIR, source))``.

Servers: ``abuse_server``, the one tiny-voice server the abuse tests attack for the run;
``tiny_voice_root_compiled``, for a module whose servers run on tools.server_process's
TINY_ARGS: the first of them finds the tiny voice compiled.

The slow set: tests marked ``slow`` (soak, fuzz, idle CPU, download faults, the parity with
the reference hayakoe, the browser, compiling edited or new voices) are left out of the
default run (``-m "not slow and not arm64"`` in pyproject's addopts); ``script/test -m slow``
runs them, as .ci/run does.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

from tools.tokenizer_files import TOKENIZER_ENV, real_tokenizer_dir
from wyoming_hayakoe.text.symbols import SYMBOL_TO_ID
from wyoming_hayakoe.text.tokenizer import tokenize

if TYPE_CHECKING:  # the front-end loads OpenJTalk, the engine ONNX Runtime: only the
    # fixtures that need them import them
    from compiled_voices import CompiledCaches

    from tools.server_process import ServerProcess
    from wyoming_hayakoe.text.frontend import Phonemes, TextFrontend

TESTS_DIR = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def compiled_caches(tmp_path_factory: pytest.TempPathFactory) -> CompiledCaches:
    """Model caches with fixture voices compiled, each made at first use and kept for the
    run: ``.copy(target, bert_root, voices)`` gives a writable copy, ``.master(...)`` the
    shared one (read it only)."""
    from compiled_voices import CompiledCaches

    return CompiledCaches(tmp_path_factory.mktemp("compiled-voices"))


@pytest.fixture
def tiny_model_cache(compiled_caches: CompiledCaches, tmp_path: Path) -> Path:
    """A writable model cache with the tiny voice and its BERT compiled (a copy per test)."""
    return compiled_caches.copy(tmp_path / "model-cache")


@pytest.fixture(scope="session")
def tiny_voice_root_compiled(compiled_caches: CompiledCaches) -> None:
    """Servers started on the fixture voice as their data dir (tools.server_process's
    TINY_ARGS) keep their models in tests/fixtures/tiny-voice/cache (gitignored): the run's
    compiled tiny voice is put there, so in a clean clone the first such server does not
    compile it while a test waits. Files already there are kept (a server may map them)."""
    from tools.server_process import TINY_VOICE_ROOT

    def copy_new(source: str, target: str) -> None:
        if not os.path.exists(target):
            shutil.copy2(source, target)

    master = compiled_caches.master()
    shutil.copytree(master, TINY_VOICE_ROOT / "cache", copy_function=copy_new, dirs_exist_ok=True)


@pytest.fixture(scope="session")
def abuse_server(
    tmp_path_factory: pytest.TempPathFactory, tiny_voice_root_compiled: None
) -> Iterator[ServerProcess]:
    """The tiny-voice server that the abuse tests attack (test_protocol_abuse,
    test_slow_clients; see reliability_utils.abuse_server): one for the run."""
    from reliability_utils import abuse_server_for_the_run

    yield from abuse_server_for_the_run(tmp_path_factory.mktemp("abuse"))


@pytest.fixture(scope="session")
def bert_tokenizer_dir() -> Path:
    """The real tokenizer files of the HayaKoe BERT (vocab.txt and configs)."""
    path = real_tokenizer_dir()
    if not (path / "vocab.txt").is_file():
        pytest.skip(
            f"the real BERT tokenizer files are absent: no {path / 'vocab.txt'} "
            f"(set {TOKENIZER_ENV} to a folder holding them)"
        )
    return path


@pytest.fixture(scope="session")
def text_frontend(bert_tokenizer_dir: Path) -> TextFrontend:
    from wyoming_hayakoe.text.frontend import TextFrontend

    return TextFrontend(bert_tokenizer_dir)


@pytest.fixture(scope="session")
def plain_frontend() -> TextFrontend:
    """A front-end without tokenizer files (everything but token ids works)."""
    from wyoming_hayakoe.text.frontend import TextFrontend

    return TextFrontend()


@pytest.fixture(scope="session")
def available_frontend() -> TextFrontend:
    """With the real tokenizer files when they are there (token ids checked), else without."""
    from wyoming_hayakoe.text.frontend import TextFrontend

    path = real_tokenizer_dir()
    return TextFrontend(path if (path / "vocab.txt").is_file() else None)


@pytest.fixture(scope="session")
def transformers_tokenizer(bert_tokenizer_dir: Path) -> Any:
    """transformers' BertJapaneseTokenizer on the real files: what the model was trained with."""
    module = pytest.importorskip(
        "transformers.models.bert_japanese.tokenization_bert_japanese",
        reason="transformers (dev dependency) is not installed",
    )
    return module.BertJapaneseTokenizer.from_pretrained(str(bert_tokenizer_dir))


@dataclass(frozen=True)
class ReferenceOutput:
    """What hayakoe 1.3.1 makes of a text; ``failure`` says how it failed, if it did."""

    failure: str | None
    normalized: str = ""
    bert_text: str = ""
    phone_ids: tuple[int, ...] = ()
    tone_ids: tuple[int, ...] = ()
    language_ids: tuple[int, ...] = ()
    word2ph: tuple[int, ...] = ()
    token_ids: tuple[int, ...] = ()
    reading: str = ""


@pytest.fixture(scope="session")
def hayakoe_reference(bert_tokenizer_dir: Path) -> Callable[[str], ReferenceOutput]:
    """The reference pipeline, from text to the synthesizer and BERT inputs (no models)."""
    pytest.importorskip("hayakoe", reason="the reference hayakoe 1.3.1 is not installed")
    pytest.importorskip("transformers", reason="transformers (dev dependency) is not installed")
    from hayakoe.models.text_preprocess import prepare_phone_sequences
    from hayakoe.nlp import bert_models
    from hayakoe.nlp.japanese.g2p import text_to_sep_kata

    from tools.reference_g2p import read_as_we_do

    read_as_we_do()

    # The reference keeps its tokenizer in a global, which another test may have pointed at
    # the tiny voice's files: drop it and load the real files.
    bert_models.unload_tokenizer()
    tokenizer = bert_models.load_tokenizer(str(bert_tokenizer_dir))
    hps = SimpleNamespace(version="2.7.0-JP-Extra", data=SimpleNamespace(add_blank=True))

    def run(text: str) -> ReferenceOutput:
        try:
            normalized, phones, tones, languages, word2ph = prepare_phone_sequences(text, hps)
            words, readings = text_to_sep_kata(normalized, raise_yomi_error=False)
            bert_text = "".join(words)
            token_ids = tokenizer(bert_text)["input_ids"]
        except Exception as err:  # the oracle's failures are data here
            return ReferenceOutput(failure=f"{type(err).__name__}: {err}")
        failure = None
        # Its BERT step asserts the first; the second is needed to spread the features.
        if len(word2ph) != len(bert_text) + 2:
            failure = f"word2ph has {len(word2ph)} entries for {len(bert_text)} characters"
        elif len(token_ids) != len(word2ph):
            failure = f"{len(token_ids)} BERT tokens for {len(word2ph)} word2ph entries"
        return ReferenceOutput(
            failure,
            normalized,
            bert_text,
            tuple(phones),
            tuple(tones),
            tuple(languages),
            tuple(word2ph),
            tuple(token_ids),
            "".join(readings),
        )

    return run


@pytest.fixture(scope="session")
def check_phonemes() -> Callable[..., None]:
    """Asserts what the engine relies on for any :class:`Phonemes`."""

    def check(phonemes: Phonemes, frontend: TextFrontend | None = None) -> None:
        count = len(phonemes.phone_ids)
        assert count % 2 == 1 and count >= 5, "padding and blanks missing"
        assert len(phonemes.phones) == len(phonemes.tone_ids) == count
        assert len(phonemes.language_ids) == count
        assert [SYMBOL_TO_ID[p] for p in phonemes.phones] == phonemes.phone_ids
        assert phonemes.phone_ids[::2] == [0] * (count // 2 + 1), "add_blank"
        assert phonemes.tone_ids[::2] == [0] * (count // 2 + 1)
        assert set(phonemes.tone_ids[1::2]) <= {6, 7}, "JP tones are 6 (low) and 7 (high)"
        assert phonemes.language_ids == [0, 1] * (count // 2) + [0]
        assert phonemes.phones[1] == phonemes.phones[-2] == "_", "padding at both ends"
        assert len(phonemes.word2ph) == len(phonemes.bert_text) + 2
        assert sum(phonemes.word2ph) == count
        assert min(phonemes.word2ph) >= 0 and phonemes.word2ph[0] == 3
        assert len(tokenize(phonemes.bert_text)) + 2 == len(phonemes.word2ph)
        if frontend is not None and frontend.has_tokenizer:
            assert len(frontend.token_ids(phonemes.bert_text)) == len(phonemes.word2ph)

    return check
