"""The gate's thresholds, derived from what PESQ-WB heard in the measured variants.

The gate passes a variant whose mean log-mel distance over the check sentences is at most
MEAN_THRESHOLD_DB and whose worst sentence is at most WORST_THRESHOLD_DB. So:

- the mean threshold is the largest distance, on a 0.05 dB grid, below that of every variant
  whose mean PESQ-WB on a set fell under 4.2 (its closest counterexample): every variant
  within it had a mean of 4.2 or more (one point per variant and set, as the gate takes the
  mean over one set);
- the worst threshold likewise from the sentences (each sentence of each variant a point),
  against PESQ-WB 4.0.

Strictly below the counterexample and rounded down: nothing measured contradicts the rule, and
the margin (how far the counterexample lies above) is printed with it. Derived on the
calibration and tuning sets (the calibration's sentences are not those it hears in int8: a
pair of distance and PESQ holds whatever the ranges were set on); the check set, which nothing
was chosen on, then says whether the rule holds there too. Derived on the tuning set alone (32
sentences) the rule came out 0.25-0.3 dB looser and had counterexamples on the check set: the
more sentences, the closer the counterexamples found (docs/fast-decoder.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .variants import Measured

MEAN_PESQ_TARGET = 4.2
WORST_PESQ_TARGET = 4.0
STEP_DB = 0.05
DERIVED_ON = ("calibration", "tuning")
CONFIRMED_ON = "check"


@dataclass(frozen=True)
class Point:
    label: str
    distance_db: float
    pesq: float


@dataclass(frozen=True)
class Threshold:
    target_pesq: float
    value_db: float
    counterexample: Point | None
    """The least distance whose PESQ fell under the target (None: none did)."""
    largest_within: Point | None
    """The largest distance within the threshold."""
    lowest_within: Point | None
    """The lowest PESQ within the threshold."""
    points: int

    @property
    def margin_db(self) -> float | None:
        if self.counterexample is None:
            return None
        return self.counterexample.distance_db - self.value_db


def threshold(points: Sequence[Point], target_pesq: float) -> Threshold:
    failing = [p for p in points if p.pesq < target_pesq]
    counterexample = min(failing, key=lambda p: p.distance_db, default=None)
    bound = (
        counterexample.distance_db
        if counterexample is not None
        else max(p.distance_db for p in points) + STEP_DB
    )
    steps = math.floor(bound / STEP_DB + 1e-9)
    if steps * STEP_DB >= bound - 1e-9:  # within means at most: stay strictly below
        steps -= 1
    value = round(steps * STEP_DB, 2)
    within = [p for p in points if p.distance_db <= value]
    return Threshold(
        target_pesq,
        value,
        counterexample,
        max(within, key=lambda p: p.distance_db, default=None),
        min(within, key=lambda p: p.pesq, default=None),
        len(points),
    )


def variant_points(measured: Sequence[Measured], sets: Sequence[str]) -> list[Point]:
    """Each variant's mean on each of ``sets``."""
    return [
        Point(f"{m.name}, {name} set", m.scores[name].log_mel_mean, m.scores[name].pesq_mean)
        for m in measured
        for name in sets
    ]


def sentence_points(measured: Sequence[Measured], sets: Sequence[str]) -> list[Point]:
    return [
        Point(f"{m.name}, {name} sentence {index}", s.log_mel_db, s.pesq)
        for m in measured
        for name in sets
        for index, s in enumerate(m.scores[name].sentences)
    ]


def rank_correlation(points: Sequence[Point]) -> float:
    """Spearman's: -1 when a larger distance always meant a lower PESQ."""
    from scipy.stats import spearmanr

    result = spearmanr([p.distance_db for p in points], [p.pesq for p in points])
    return float(np.asarray(result[0]))


def violations(points: Sequence[Point], limit: Threshold) -> list[Point]:
    """Points within the threshold whose PESQ fell under its target."""
    return [p for p in points if p.distance_db <= limit.value_db and p.pesq < limit.target_pesq]


@dataclass(frozen=True)
class Derivation:
    sets: tuple[str, ...]
    """What it was derived on."""
    mean: Threshold
    worst: Threshold
    check_mean_violations: list[Point]
    check_worst_violations: list[Point]
    variant_correlation: float
    sentence_correlation: float


def derive(measured: Sequence[Measured], sets: Sequence[str] = DERIVED_ON) -> Derivation:
    variants = variant_points(measured, sets)
    sentences = sentence_points(measured, sets)
    mean = threshold(variants, MEAN_PESQ_TARGET)
    worst = threshold(sentences, WORST_PESQ_TARGET)
    return Derivation(
        tuple(sets),
        mean,
        worst,
        violations(variant_points(measured, [CONFIRMED_ON]), mean),
        violations(sentence_points(measured, [CONFIRMED_ON]), worst),
        rank_correlation(variants),
        rank_correlation(sentences),
    )


def _point(point: Point | None) -> str:
    if point is None:
        return "none"
    return f"{point.label} ({point.distance_db:.3f} dB, PESQ-WB {point.pesq:.3f})"


def _sets(derivation: Derivation) -> str:
    plural = "s" if len(derivation.sets) > 1 else ""
    return f"the {' and '.join(derivation.sets)} set{plural}"


def describe(derivation: Derivation) -> list[str]:
    lines = [
        f"Rank correlation of the log-mel distance with PESQ-WB on {_sets(derivation)} "
        "(Spearman): "
        f"{derivation.variant_correlation:.3f} over the variants' means, "
        f"{derivation.sentence_correlation:.3f} over the sentences.",
    ]
    for title, limit, broken in (
        ("mean", derivation.mean, derivation.check_mean_violations),
        ("worst", derivation.worst, derivation.check_worst_violations),
    ):
        kind = "means of a variant on a set" if title == "mean" else "sentences"
        margin = limit.margin_db
        lines += [
            f"{title.upper()}_THRESHOLD_DB = {limit.value_db:g}: over {limit.points} {kind}, "
            f"the closest with PESQ-WB under {limit.target_pesq:g} is "
            f"{_point(limit.counterexample)}"
            + (f", {margin:.3f} dB above the threshold." if margin is not None else "."),
            f"  within it, the largest distance: {_point(limit.largest_within)}; "
            f"the lowest PESQ-WB: {_point(limit.lowest_within)}.",
            f"  on the {CONFIRMED_ON} set: "
            + (
                "no counterexample within it."
                if not broken
                else f"{len(broken)} within it under the target: "
                + "; ".join(_point(p) for p in broken)
            ),
        ]
    return lines


def in_short(derivation: Derivation) -> str:
    """The two thresholds and how many counterexamples the check set has within them."""
    broken = len(derivation.check_mean_violations), len(derivation.check_worst_violations)
    return (
        f"derived on {_sets(derivation)}: mean "
        f"{derivation.mean.value_db:g} dB, worst {derivation.worst.value_db:g} dB; within them "
        f"on the {CONFIRMED_ON} set, {broken[0]} variant mean(s) under PESQ-WB "
        f"{MEAN_PESQ_TARGET:g} and {broken[1]} sentence(s) under {WORST_PESQ_TARGET:g}"
    )
