"""Fixtures of the text front-end tests (tokenizer files, front-ends, the reference oracle)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

from tools.shared_data import TOKENIZER_ENV, real_tokenizer_dir
from wyoming_hayakoe.text.symbols import SYMBOL_TO_ID
from wyoming_hayakoe.text.tokenizer import tokenize

if TYPE_CHECKING:  # the front-end loads OpenJTalk: only the fixtures that need it import it
    from wyoming_hayakoe.text.frontend import Phonemes, TextFrontend

TESTS_DIR = Path(__file__).resolve().parent


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
