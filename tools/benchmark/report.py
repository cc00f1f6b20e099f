"""The table and its figures, from the raw results."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tools.benchmark.ours import Sample
from tools.benchmark.results import Results, TextTimings
from tools.benchmark.texts import SILENCE_TARGET_S, TEXTS, TOTAL_TIME_TARGET

FIRST_AUDIO_REPEAT_LIMIT_S = 0.020
READY_TARGET = 0.5
RSS_TARGET = 0.6
NAN = float("nan")


@dataclass(frozen=True)
class Row:
    metric: str
    ours: str
    reference: str
    ratio: str
    target: str
    met: str


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else NAN


def _s(value: float) -> str:
    return f"{value:.3f} s" if value == value else "n/a"


def _mb(value: float) -> str:
    return f"{value:,.0f} MB" if value == value else "n/a"


def _x(value: float) -> str:
    return f"{value:.2f}x" if value == value else "n/a"


def _ratio_row(
    metric: str, ours: float, theirs: float, fmt: Callable[[float], str], target: float | None
) -> Row:
    ratio = ours / theirs if theirs else NAN
    ratio_text = f"{ratio:.2f}" if ratio == ratio else "n/a"
    if target is None:
        return Row(metric, fmt(ours), fmt(theirs), ratio_text, "—", "—")
    met = "n/a" if ratio != ratio else ("yes" if ratio <= target else "NO")
    return Row(metric, fmt(ours), fmt(theirs), ratio_text, f"≤ {target:g}", met)


def _timing_rows(res: Results) -> list[Row]:
    first, total, speed, heard = [], [], [], []
    for key, t in res.timings.items():
        ours_first = median([s.first_s for s in t.ours])
        target = TEXTS[key].first_audio_target
        first.append(
            _ratio_row(f"first audio, {key}", ours_first, median(t.reference_first), _s, target)
        )
        ours_total = median([s.total_s for s in t.ours])
        theirs_total = median([s.total_s for s in t.reference_generate])
        total.append(
            _ratio_row(f"total time, {key}", ours_total, theirs_total, _s, TOTAL_TIME_TARGET)
        )
        ours_speed = median([s.speed for s in t.ours])
        theirs_speed = median([s.speed for s in t.reference_generate])
        speed.append(_ratio_row(f"speed multiple, {key}", ours_speed, theirs_speed, _x, None))
        if t.reference_listening:
            ours_heard = [(s.listening_end_s, s.longest_silence_s) for s in t.ours]
            labels = ("listening ends", "longest silence after the first sound")
            for index, label in enumerate(labels):
                ours_value = median([pair[index] for pair in ours_heard])
                theirs_value = median([pair[index] for pair in t.reference_listening])
                row = _ratio_row(f"{label}, {key}", ours_value, theirs_value, _s, None)
                if index == 1:
                    met = "yes" if ours_value <= SILENCE_TARGET_S else "NO"
                    row = dataclasses.replace(row, target=f"≤ {SILENCE_TARGET_S} s", met=met)
                heard.append(row)
            heard += _ideal_rows(key, t)
    return first + total + speed + heard


def _ideal_rows(key: str, t: TextTimings) -> list[Row]:
    """Against an ideal schedule of our own decoding, which knows the speed in advance: sound
    starts once the first latent exists (front-end, BERT, text encoder; nothing can sound
    before) and no sooner than ``total - audio`` (else the last chunk comes late); it ends
    at ``max(total, start + audio)``. Without the server's first-latent time (no --debug),
    the latent is taken to exist at once: a lower bound."""

    def start(s: Sample) -> float:
        latent = s.first_latent_s if s.first_latent_s == s.first_latent_s else 0.0
        return max(latent, s.total_s - s.audio_s)

    ideal_first = median([start(s) for s in t.ours])
    ideal_end = median([max(s.total_s, start(s) + s.audio_s) for s in t.ours])
    heard_end = median([s.listening_end_s for s in t.ours])
    first = median([s.first_s for s in t.ours])
    return [
        Row(f"listening ends vs ideal schedule, {key}", _s(heard_end), _s(ideal_end),
            f"+{heard_end - ideal_end:.2f} s", "≤ +1.0 s",
            "yes" if heard_end - ideal_end <= 1.0 else "NO"),
        Row(f"first audio vs ideal schedule, {key}", _s(first), _s(ideal_first),
            f"+{first - ideal_first:.2f} s", "≤ +0.3 s",
            "yes" if first - ideal_first <= 0.3 else "NO"),
    ]  # fmt: skip


def _memory_rows(res: Results) -> list[Row]:
    if not res.starts_ours:
        return []
    ours_one = median([s.peak_after_request_mb for s in res.starts_ours])
    ref_loaded = median([s.peak_loaded_mb for s in res.starts_reference])
    ref_one = median([s.peak_after_request_mb for s in res.starts_reference])
    out = [
        _ratio_row(
            "peak RSS, 1 voice (ours after 1 request, ref. after prepare)",
            ours_one,
            ref_loaded,
            _mb,
            RSS_TARGET,
        ),
        _ratio_row("peak RSS, 1 voice, both after 1 request", ours_one, ref_one, _mb, None),
    ]
    four = res.four_voices
    if not four:
        return out
    out.append(
        _ratio_row(
            "peak RSS, 4 voices (ours after 1 request each, ref. after prepare)",
            four["ours_peak_mb"],
            four["reference_peak_loaded_mb"],
            _mb,
            None,
        )
    )
    out.append(
        _ratio_row(
            "peak RSS, 4 voices, both after 1 request each",
            four["ours_peak_mb"],
            four["reference_peak_mb"],
            _mb,
            None,
        )
    )
    # Both sides after requests: a peak taken right after loading is mostly the transient
    # of building the BERT session, which hides what each voice costs.
    ours_each = (four["ours_peak_mb"] - ours_one) / 3
    ref_each = (four["reference_peak_mb"] - ref_one) / 3
    out.append(
        Row(
            "peak RSS added per further voice (after 1 request each)",
            _mb(ours_each),
            _mb(ref_each),
            f"{ours_each / ref_each:.2f}" if ref_each > 0 else "n/a",
            f"< BERT ({res.bert_mb:,.0f} MB)",
            "yes" if ours_each < res.bert_mb else "NO",
        )
    )
    return out


def _other_rows(res: Results) -> list[Row]:
    out: list[Row] = []
    if res.starts_ours:
        ours_ready = median([s.ready_s for s in res.starts_ours])
        ref_ready = median([s.ready_s for s in res.starts_reference])
        out.append(_ratio_row("ready time", ours_ready, ref_ready, _s, READY_TARGET))
    if res.repeat_ours:
        ours_repeat = median([second for _, second in res.repeat_ours])
        theirs_repeat = median([second for _, second in res.repeat_reference])
        row = _ratio_row("repeated announcement, first audio", ours_repeat, theirs_repeat, _s, None)
        met = "yes" if ours_repeat < FIRST_AUDIO_REPEAT_LIMIT_S else "NO"
        out.append(Row(row.metric, row.ours, row.reference, row.ratio, "< 0.020 s", met))
    parity = res.parity
    if parity.get("error"):
        out.append(Row("audio parity", parity["error"], "—", "—", "≤ 1e-4", "NO"))
    elif parity:
        diffs = [parity.get("max_diff_whole"), parity.get("max_diff_split")]
        shown = ", ".join("shape differs" if d is None else f"{d:.1e}" for d in diffs)
        ok = all(d is not None and d <= parity["tolerance"] for d in diffs)
        limit = f"≤ {parity['tolerance']:g}"
        out.append(
            Row("audio parity, max abs difference (whole, split graph)", shown, "—", "—", limit,
                "yes" if ok else "NO")
        )  # fmt: skip
        wire = parity.get("wire_max_diff_lsb")
        allowed = parity["wire_allowed_lsb"]
        out.append(
            Row("server PCM vs engine PCM, max diff",
                "length differs" if wire is None else f"{wire} LSB", "—", "—",
                f"≤ {allowed} LSB", "yes" if wire is not None and wire <= allowed else "NO")
        )  # fmt: skip
    return out


def rows(res: Results) -> list[Row]:
    return _timing_rows(res) + _memory_rows(res) + _other_rows(res)


def table(table_rows: list[Row]) -> str:
    header = Row("metric", "ours", "reference", "ratio", "target", "met?")
    lines = [_line(header), "|" + "---|" * 6]
    lines += [_line(r) for r in table_rows]
    return "\n".join(lines)


def _line(row: Row) -> str:
    cells = (row.metric, row.ours, row.reference, row.ratio, row.target, row.met)
    return "| " + " | ".join(cells) + " |"
