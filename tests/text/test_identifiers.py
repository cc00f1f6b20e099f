"""Numbers that name rather than count (telephone numbers, postal codes) are read digit by
digit in every form people write them, and M in a sentence about an earthquake is the
magnitude (text/smarthome/identifiers.py). The normalizer alone would read them as quantities:
03-1234-5678 as サン、センニヒャクサンジューヨン…; a room number is one, as JSUT's speakers say
it."""

from __future__ import annotations

import pytest
from kana_utils import assert_reads

from wyoming_hayakoe.text.frontend import TextFrontend


@pytest.fixture(scope="module")
def smart() -> TextFrontend:
    return TextFrontend(smart_home=True)


@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("お問い合わせは03-1234-5678まで。",
         "オトイアワセワゼロサン,イチニーサンヨン,ゴーロクナナハチマデ."),
        ("携帯は090-1234-5678です。",
         "ケータイワゼロキューゼロ,イチニーサンヨン,ゴーロクナナハチデス."),
        ("フリーダイヤル0120-123-456です。",
         "フリーダイヤルゼロイチニーゼロ,イチニーサン,ヨンゴーロクデス."),
        ("0120123456へどうぞ。", "ゼロイチニーゼロイチニーサンヨンゴーロクエドーゾ."),
        ("〒100-0001 東京都千代田区",
         "ユービンバンゴーイチゼロゼロノゼロゼロゼロイチトーキョートチヨダク"),
        ("郵便番号は〒100-0001です。", "ユービンバンゴーワイチゼロゼロノゼロゼロゼロイチデス."),
        ("418号室の電気を消しました。", "ヨンヒャクジューハチゴーシツノデンキヲケシマシタ."),
        # full-width digits, the long-vowel mark or a dash between the groups, an area code
        ("市外局番２１３の、４８６ー２４３５です。",
         "シガイキョクバンニーイチサンノ,ヨンハチロク,ニーヨンサンゴーデス."),
        ("２１２－８３６－１７２５に電話します。",
         "ニーイチニー,ハチサンロク,イチナナニーゴーニデンワシマス."),
        ("地震の規模はM6.3と推定されます。",
         "ジシンノキボワマグニチュードロクテンサントスイテーサレマス."),
    ],
)  # fmt: skip
def test_identifiers_are_read_as_people_read_them(
    text: str, reading: str, smart: TextFrontend
) -> None:
    assert_reads(smart, text, reading)


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("M6のボルトを使います。", "M6のボルトを使います。"),  # no earthquake: a screw
        ("気温は10-20度です。", "気温は10から20度です。"),  # a range, not a number to dial
        ("2024-12-04に更新しました。", "二千二十四年十二月四日に更新しました。"),
        ("12号室です。", "12号室です。"),  # a room number is read as a number
        ("10ー20人です。", "10ー20人です。"),  # too few digits to dial
    ],
)
def test_numbers_that_count_are_left_to_the_other_rules(
    text: str, rewritten: str, smart: TextFrontend
) -> None:
    assert smart.rewrite(text) == rewritten
