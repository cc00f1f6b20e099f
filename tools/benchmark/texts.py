"""The benchmark texts, calibrated on the ``full`` synthetic voice (see BENCHMARKS.md)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchText:
    key: str
    description: str
    text: str
    first_audio_target: float | None
    """Highest allowed ratio ours/reference of the time to first audio, if any."""


TOTAL_TIME_TARGET = 1.0
FIRST_AUDIO_TARGET = 0.25
SILENCE_TARGET_S = 0.05
"""Longest silence after the first sound allowed on every text, in both conditions."""

# Lengths on the full synthetic voice (about 80 ms per phoneme symbol, blanks included).
TEXTS: dict[str, BenchText] = {
    t.key: t
    for t in (
        BenchText("short", "about 2 s of audio", "了解です。", FIRST_AUDIO_TARGET),
        BenchText(
            "reply",
            "a short one-sentence reply, about 3 s of audio",
            "はい、リビングの電気をつけました。",
            FIRST_AUDIO_TARGET,
        ),
        BenchText(
            "medium",
            "about 7 s of audio",
            "明日の最高気温は二十三度の予報です。",
            FIRST_AUDIO_TARGET,
        ),
        BenchText(
            "long",
            "about 11 s of audio, two sentences",
            "明日の天気は晴れです。最高気温は二十三度の予報です。",
            FIRST_AUDIO_TARGET,
        ),
        BenchText(
            "xlong",
            "35-40 s of audio, five sentences",
            "おはようございます。今日の予定をお知らせします。"
            "午前十時から、歯医者さんで定期検診の予約があります。"
            "お昼は、お母さんと一緒にイタリア料理のお店に行きます。"
            "午後三時には、宅配便で注文した本が届く予定です。",
            FIRST_AUDIO_TARGET,
        ),
        BenchText(
            "sentence80",
            "one sentence of 80 characters",
            "明日の朝は七時に起きて、駅前のパン屋さんで朝ご飯を買ってから、八時半の電車に乗って、"
            "会社の近くの大きな公園を通って、九時までに駅の向こうの事務所に行く予定です。",
            FIRST_AUDIO_TARGET,
        ),
    )
}

QUICK = ("reply", "medium", "sentence80")


def announcement(round_index: int) -> str:
    """The repeated announcement of one round; every round has its own text, so that a cache
    filled in one round cannot answer the first request of the next."""
    return f"午前{7 + round_index % 5}時{5 + round_index}分になりました。今日も一日頑張りましょう。"


ANNOUNCEMENTS = (
    "玄関です。お客さんです。",
    "雨です。傘をどうぞ。",
    "朝です。起きましょう。",
    "お湯です。お風呂へどうぞ。",
    "洗濯です。終わりました。",
    "電話です。出てください。",
    "夕方です。窓を閉めます。",
    "時間です。出かけましょう。",
)
"""Different two-sentence announcements for several clients at once: 4.0-5.6 s of audio each
on the full synthetic voice, about 1.2-1.6 s of work on 2 cores at the full run's speed
(3.5 times real time)."""
