"""Which layer groups go int8, chosen by measuring each on the voice itself.

1. *Sensitivity*: each group alone in int8, the rest FP32; its log-mel distance from the
   reference on the selection sentences (quality.py). A stage over the budget by less than
   BLOCKS_WITHIN times is tried block by block too: some of its blocks may fit where the
   whole does not (on a real trained decoder, a stage of three blocks 1.33 dB, two of them
   1.17 dB).
2. *Order*: least distance per second saved first (savings.py: measured once for all the
   groups within budget; a group that saves nothing is dropped), so the groups that bring the
   most speed for the least error come first.
3. *Prefix*: the longest run of that order whose variant stays within the selection budget (a
   share of the gate's thresholds, so that sentences the calibration never saw pass too),
   found by bisection: error grows as groups are added.
4. *Equalization*: the chosen groups once more with cross-layer equalization; kept if closer.

Each trial quantizes and decodes once; a full-size decoder of seven groups takes about eleven,
three more for each stage tried by blocks. A trial measured by an earlier child for the same
job (checkpoints.py) is not made again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from .generator import Generator
from .quality import MEAN_THRESHOLD_DB, WORST_THRESHOLD_DB, log_mel_distance
from .variant import Precision

_LOGGER = logging.getLogger(__name__)

SELECTION_MARGIN = 0.8
"""The selection sentences must stay within this share of the gate's thresholds: chosen on
them, the variant is then judged on others."""
BLOCKS_WITHIN = 3.0
"""A stage whose distance alone is within this many times the budget is tried block by block:
on a real trained decoder the stages farther out were 4-5 times over, and each of their
blocks alone over the budget too."""


@dataclass(frozen=True)
class Trial:
    """One variant decoded on the selection sentences."""

    precision: Precision
    mean_db: float
    worst_db: float

    @property
    def within_budget(self) -> bool:
        return self.over_budget <= 1.0

    @property
    def over_budget(self) -> float:
        """How many times the selection budget its farther measure is."""
        return max(
            self.mean_db / (MEAN_THRESHOLD_DB * SELECTION_MARGIN),
            self.worst_db / (WORST_THRESHOLD_DB * SELECTION_MARGIN),
        )

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "precision": self.precision.as_dict()}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Trial:
        return cls(Precision.from_dict(raw["precision"]), raw["mean_db"], raw["worst_db"])


Decode = Callable[[Precision], Sequence[np.ndarray]]
"""A variant built and decoded on the selection sentences."""
Savings = Callable[[Precision], Mapping[str, float]]
"""Seconds each int8 group of a variant saves (savings.py)."""


class Search:
    def __init__(
        self,
        generator: Generator,
        decode: Decode,
        references: Sequence[np.ndarray],
        sample_rate: int,
        can_equalize: bool,
        known: Mapping[Precision, Trial] | None = None,
        keep: Callable[[Trial], None] = lambda _trial: None,
    ) -> None:
        """``known``: trials measured before, taken as they are; ``keep``: told each new
        one."""
        self.generator = generator
        self._decode = decode
        self._references = references
        self._sample_rate = sample_rate
        self._can_equalize = can_equalize
        self._known = dict(known or {})
        self._keep = keep
        self.trials: list[Trial] = []

    def trial(self, precision: Precision) -> Trial:
        trial = self._known.get(precision)
        if trial is None:
            audio = self._decode(precision)
            distances = [
                log_mel_distance(r, a, self._sample_rate)
                for r, a in zip(self._references, audio, strict=True)
            ]
            trial = Trial(precision, float(np.mean(distances)), float(np.max(distances)))
            self._keep(trial)
        self.trials.append(trial)
        _LOGGER.debug("%s: %.2f dB (worst %.2f)", precision.describe(), trial.mean_db,
                      trial.worst_db)  # fmt: skip
        return trial

    def choose(self, base: Precision, savings: Savings | None = None) -> Trial | None:
        """The most seconds saved in int8 within budget (``base`` gives everything but the
        groups; without ``savings`` a group's multiply-adds stand for its seconds), or None if
        no group is within budget."""
        alone = {g.name: self._alone(base, g.name) for g in self.generator.groups}
        for stage, blocks in self.generator.blocks.items():
            if not alone[stage].within_budget and alone[stage].over_budget <= BLOCKS_WITHIN:
                alone.update({b.name: self._alone(base, b.name) for b in blocks})
        units = [name for name, trial in alone.items() if trial.within_budget]
        if not units:
            return None
        saved = (
            savings(replace(base, int8_groups=tuple(units)))
            if savings is not None
            else {name: self.generator.group(name).work for name in units}
        )
        order = sorted(
            (name for name in units if saved[name] > 0),
            key=lambda name: alone[name].mean_db / saved[name],
        )
        if not order:
            return None
        best = alone[order[0]]
        low, high = 1, len(order)  # the prefix of length `low` is within budget
        while low < high:
            middle = (low + high + 1) // 2
            names = tuple(order[:middle])
            trial = self.trial(replace(base, int8_groups=names))
            if trial.within_budget:
                low, best = middle, trial
            else:
                high = middle - 1
        if self._can_equalize:
            equalized = self.trial(replace(best.precision, equalized=True))
            if equalized.mean_db < best.mean_db and equalized.within_budget:
                best = equalized
        return best

    def _alone(self, base: Precision, name: str) -> Trial:
        return self.trial(replace(base, int8_groups=(name,)))
