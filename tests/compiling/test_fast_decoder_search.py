"""Which layer groups the fast decoder's search puts in int8 (compiling/fast_decoder/search.py),
on a decoder whose every variant's distance from the reference is known: the audio of a variant
is the reference with noise of the distance its groups add up to, measured by the product's
own measure. What is checked is the choice: stages too costly whole tried block by block, the
order by distance per second saved, and what saves nothing left out."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from wyoming_hayakoe.compiling.fast_decoder.generator import Generator, LayerGroup
from wyoming_hayakoe.compiling.fast_decoder.quality import log_mel_distance
from wyoming_hayakoe.compiling.fast_decoder.search import Search
from wyoming_hayakoe.compiling.fast_decoder.variant import Precision

RATE = 22050


def _group(name: str, work: float = 1.0) -> LayerGroup:
    return LayerGroup(name, (f"/dec/{name.replace(' ', '.')}/Conv",), work, 1)


GENERATOR = Generator(
    (_group("conv_pre"), _group("stage 0"), _group("stage 1"), _group("stage 2"),
     _group("conv_post")),
    {"stage 1": (_group("block 3"), _group("block 4"), _group("block 5")),
     "stage 2": (_group("block 6"), _group("block 7"), _group("block 8"))},
)  # fmt: skip
DISTANCE_DB = {"conv_pre": 0.3, "stage 0": 0.35, "stage 1": 1.9, "block 3": 0.5,
               "block 4": 0.6, "block 5": 0.8, "stage 2": 5.0, "block 6": 0.1,
               "conv_post": 4.0}  # fmt: skip
"""Each group alone; a set adds up. Stage 1 is over the budget (1.2 dB at worst) by less than
three times, stage 2 by more (its block 6 would fit, but a stage that far out is not split)."""


def _speechlike() -> np.ndarray:
    t = np.arange(RATE) / RATE
    return (np.sin(2 * np.pi * 180 * t) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t))).astype(
        np.float32
    )


REFERENCE = _speechlike()
NOISE = np.random.default_rng(11).standard_normal(len(REFERENCE)).astype(np.float32)


def _with_distance(target_db: float) -> np.ndarray:
    """The reference with noise at ``target_db`` of the product's measure (bisection)."""
    low, high = -8.0, 0.0  # log10 of the noise's level
    for _ in range(40):
        middle = (low + high) / 2
        if log_mel_distance(REFERENCE, REFERENCE + 10**middle * NOISE, RATE) < target_db:
            low = middle
        else:
            high = middle
    return REFERENCE + 10**low * NOISE


class _Decoder:
    """Decodes a variant as the reference plus the noise its groups add up to."""

    def __init__(self) -> None:
        self.decoded: list[tuple[str, ...]] = []

    def __call__(self, precision: Precision) -> list[np.ndarray]:
        self.decoded.append(precision.int8_groups)
        audio = _with_distance(sum(DISTANCE_DB[name] for name in precision.int8_groups))
        return [audio, audio]


def _search(decoder: _Decoder) -> Search:
    return Search(GENERATOR, decoder, [REFERENCE, REFERENCE], RATE, can_equalize=False)


def test_a_stage_too_costly_whole_is_tried_block_by_block_and_ordered_by_seconds_saved() -> None:
    saved_for: list[tuple[str, ...]] = []

    def savings(precision: Precision) -> Mapping[str, float]:
        saved_for.append(precision.int8_groups)
        return {"conv_pre": 0.0, "stage 0": 1.0, "block 3": 0.5, "block 4": 1.0, "block 5": 3.0}

    decoder = _Decoder()
    chosen = _search(decoder).choose(Precision(()), savings)
    alone = [groups for groups in decoder.decoded if len(groups) == 1]
    assert alone == [("conv_pre",), ("stage 0",), ("stage 1",), ("stage 2",), ("conv_post",),
                     ("block 3",), ("block 4",), ("block 5",)]  # fmt: skip
    # savings measured once, for every group within budget alone
    assert saved_for == [("conv_pre", "stage 0", "block 3", "block 4", "block 5")]
    # least distance per second saved first: block 5 (0.27 dB/s), stage 0 (0.35), block 4
    # (0.6), block 3 (1.0); conv_pre saves nothing. The longest prefix within 1.2 dB: two.
    assert chosen is not None
    assert chosen.precision.int8_groups == ("block 5", "stage 0")
    assert chosen.worst_db == pytest.approx(1.15, abs=0.02)


def test_without_measured_savings_the_multiply_adds_order_the_groups() -> None:
    chosen = _search(_Decoder()).choose(Precision(()))
    # every group does the same work: least distance first, as many as fit in 1.2 dB
    assert chosen is not None
    assert chosen.precision.int8_groups == ("conv_pre", "stage 0", "block 3")


def test_nothing_within_budget_is_no_choice() -> None:
    def nothing_saved(precision: Precision) -> Mapping[str, float]:
        return dict.fromkeys(precision.int8_groups, 0.0)

    assert _search(_Decoder()).choose(Precision(()), nothing_saved) is None


def test_the_groups_but_those_kept_split_a_stage_whose_block_is_kept() -> None:
    assert GENERATOR.all_but(["stage 2", "conv_post", "block 4"]) == (
        "conv_pre", "stage 0", "block 3", "block 5"
    )  # fmt: skip
    assert GENERATOR.knows("block 7") and not GENERATOR.knows("block 9")
    assert GENERATOR.group("block 4").convs == ("/dec/block.4/Conv",)
