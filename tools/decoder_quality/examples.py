"""The oracle's inputs on disk: joe's decoder graph and one ``.npz`` per sentence of each set,
laid out as the product's ``fast_decoder`` command reads them::

    DIR/decoder.onnx  DIR/calibration/NN.npz  DIR/tuning/NN.npz  DIR/check/NN.npz

Each is made once and kept: a later run reads them back.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import corpus
from .joe import INPUT, LatentMaker, write_decoder

SETS = {"calibration": corpus.CALIBRATION, "tuning": corpus.TUNING, "check": corpus.CHECK}

Feeds = dict[str, np.ndarray]


@dataclass(frozen=True)
class Examples:
    decoder: Path
    sets: dict[str, list[Feeds]]


def prepare(folder: Path, names: Iterable[str] = tuple(SETS)) -> Examples:
    """The decoder and the sets ``names``, made where missing."""
    decoder = folder / "decoder.onnx"
    if not decoder.exists():
        partial = folder / "decoder.partial.onnx"
        write_decoder(partial)
        partial.replace(decoder)
    sets = {}
    for name in names:
        sets[name] = load_examples(write_examples(SETS[name], folder / name, folder))
    return Examples(decoder, sets)


def write_examples(texts: tuple[str, ...], folder: Path, work: Path) -> list[Path]:
    """One ``NN.npz`` per text (its latent as ``z``), the set made once and whole.

    A seeded ONNX Runtime kernel draws on from where its last run stopped: a set's latents are
    the same on every machine only if one fresh session makes them all, in order."""
    paths = [folder / f"{index:02d}.npz" for index in range(len(texts))]
    if all(path.exists() for path in paths):
        return paths
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    maker = LatentMaker.open(work)
    for text, path in zip(texts, paths, strict=True):
        arrays: dict[str, Any] = {INPUT: maker.latent(text)}
        np.savez(partial / path.name, **arrays)
    shutil.rmtree(folder, ignore_errors=True)
    partial.replace(folder)
    return paths


def load_examples(paths: list[Path]) -> list[Feeds]:
    examples = []
    for path in paths:
        with np.load(path) as stored:
            examples.append({INPUT: stored[INPUT]})
    return examples
