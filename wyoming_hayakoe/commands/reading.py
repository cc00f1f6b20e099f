"""Show how the server will read a text: ``python -m wyoming_hayakoe.commands.reading "TEXT"``.

Reads the text as the server does (:func:`wyoming_hayakoe.text.explain.read_text`, which the
web page's reading tab shows too): the smart-home rewriting (times, units, English names,
brands...) and the user dictionary of ``--data-dir`` (``user_dict.csv``) applied, sentence by
sentence as the engine speaks it. Prints the number of user-dictionary words (if any), the
rewritten text (when the rewriting changed it) with each rewritten word and the rule or table
entry that made it (``45% → 四十五パーセント  [unit: %]``, ``HayaKoe  [user dictionary line 2]``),
the normalized text, the BERT token ids of each sentence (only when a tokenizer is found), and
on the last line the katakana reading (punctuation as the marks the model sees, ``'`` for
characters OpenJTalk cannot read). ``--brief`` prints one line instead, ``REWRITTEN →
READING``, to check a sensor's announcement at a glance (``850ppm`` → ``八百五十PPM →
ハッピャクゴジューピーピーエム``). ``--json`` prints one JSON object, with the rewritten pieces
and, per sentence, the normalized text, the phonemes and the synthesizer's id sequences (after
``add_blank``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ..cli.options import DEFAULT_DATA_DIR, OneLineArgumentParser
from ..errors import HayakoeError
from ..text.explain import Rewrite, SentenceReading, TextReading, read_text
from ..text.frontend import TextFrontend
from ..text.tokenizer import VOCAB_FILE
from ..text.user_dict import UserDictionary, user_dictionary_path
from ..voices.layout import TOKENIZER_DIR, USER_DICTIONARY_FILE


def _parser() -> argparse.ArgumentParser:
    parser = OneLineArgumentParser(
        prog="python -m wyoming_hayakoe.commands.reading",
        description="Show the normalized text and the reading HayaKoe voices will speak.",
    )
    parser.add_argument("text", help="the text to read (quote it)")
    parser.add_argument(
        "--json", action="store_true", help="print phonemes and ids as one JSON object"
    )
    parser.add_argument(
        "--brief",
        action="store_true",
        help="print one line: the text as rewritten before G2P, then its katakana reading",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(DEFAULT_DATA_DIR),
        help=f"voice data folder whose {TOKENIZER_DIR} is used if present "
        f"(default: {DEFAULT_DATA_DIR})",
    )
    parser.add_argument(
        "--tokenizer-dir",
        type=Path,
        help=f"folder with the BERT {VOCAB_FILE}, to show token ids "
        f"(default: DATA_DIR/{TOKENIZER_DIR} if it exists)",
    )
    return parser


def _tokenizer_dir(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Path | None:
    if args.tokenizer_dir is not None:
        if not (args.tokenizer_dir / VOCAB_FILE).is_file():
            parser.error(f"argument --tokenizer-dir: no {VOCAB_FILE} in {args.tokenizer_dir}")
        return Path(args.tokenizer_dir)
    default = args.data_dir / TOKENIZER_DIR
    return default if (default / VOCAB_FILE).is_file() else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    tokenizer_dir = _tokenizer_dir(parser, args)
    try:
        dictionary = UserDictionary(user_dictionary_path(args.data_dir, USER_DICTIONARY_FILE))
        dictionary.refresh()  # bad lines are logged on stderr
        frontend = TextFrontend(tokenizer_dir, dictionary.surfaces, smart_home=True)
        reading = read_text(frontend, args.text, dictionary.entries)
        token_ids = [
            frontend.token_ids(s.phonemes.bert_text) if frontend.has_tokenizer else None
            for s in reading.sentences
        ]
    except HayakoeError as err:
        sys.stderr.write(f"error: {err}\n")
        return 1
    if args.json:
        sys.stdout.write(json.dumps(_report(reading, dictionary, token_ids), ensure_ascii=False))
        sys.stdout.write("\n")
        return 0
    if args.brief:
        sys.stdout.write(f"{reading.rewritten} → {reading.kana}\n")
        return 0
    if dictionary.entries:
        words = len(dictionary.entries)
        sys.stdout.write(f"user dictionary: {words} words from {dictionary.path}\n")
    if reading.rewritten != args.text:
        sys.stdout.write(f"rewritten: {reading.rewritten}\n")
    for rewrite in reading.rewrites:
        if rewrite.rules:
            rules = ", ".join(map(str, rewrite.rules))
            sys.stdout.write(f"  {_shown(rewrite)}  [{rules}]\n")
    sys.stdout.write(f"normalized: {reading.normalized}\n")
    for ids in token_ids:
        if ids is not None:
            sys.stdout.write(f"token ids: {' '.join(map(str, ids))}\n")
    sys.stdout.write(reading.kana + "\n")
    return 0


def _shown(rewrite: Rewrite) -> str:
    if rewrite.source == rewrite.text:
        return rewrite.source
    return f"{rewrite.source} → {rewrite.text}".strip()


def _report(
    reading: TextReading, dictionary: UserDictionary, token_ids: list[list[int] | None]
) -> dict[str, object]:
    return {
        "rewritten": reading.rewritten,
        "rewrites": [rewrite.as_dict() for rewrite in reading.rewrites],
        "user_dictionary_words": len(dictionary.entries),
        "normalized": reading.normalized,
        "reading": reading.kana,
        "sentences": [
            _sentence_report(sentence, ids)
            for sentence, ids in zip(reading.sentences, token_ids, strict=True)
        ],
    }


def _sentence_report(sentence: SentenceReading, token_ids: list[int] | None) -> dict[str, object]:
    phonemes = sentence.phonemes
    report: dict[str, object] = {
        "text": sentence.text,
        "normalized": phonemes.normalized,
        "bert_text": phonemes.bert_text,
        "reading": sentence.kana,
        "phones": phonemes.phones,
        "phone_ids": phonemes.phone_ids,
        "tone_ids": phonemes.tone_ids,
        "language_ids": phonemes.language_ids,
        "word2ph": phonemes.word2ph,
    }
    if token_ids is not None:
        report["token_ids"] = token_ids
    return report


if __name__ == "__main__":
    sys.exit(main())
