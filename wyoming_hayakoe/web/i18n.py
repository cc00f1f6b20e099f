"""The page's words in Japanese and English, chosen by the browser's ``Accept-Language``."""

from __future__ import annotations

import re

LANGUAGES = ("ja", "en")

_RULES = {
    "unit": "単位", "currency": "通貨", "brand": "ブランド", "time": "時刻", "date": "日付",
    "weekday": "曜日", "duration": "時間の長さ", "timestamp": "日時", "range": "範囲",
    "minutes": "分", "fraction": "分数", "floor": "階", "ordinal": "序数", "sign": "符号",
    "decimal": "小数", "Roman numeral": "ローマ数字", "ratio": "比", "colon": "コロン",
    "English": "英語", "tech word": "技術用語", "&": "アンド", "markdown": "マークダウン",
    "HTML tag": "HTMLタグ", "link": "リンク", "emoji": "絵文字", "keycap": "囲み数字",
    "mark": "記号", "NFKC": "全角・半角", "user dictionary": "ユーザー辞書", "24/7": "24/7",
    "rewritten": "書き換え",
}  # fmt: skip
_RULE_DETAILS = {
    "OpenJTalk's dictionary": "OpenJTalkの辞書", "loanword table": "外来語表",
    "kanalizer model": "kanalizerモデル", "spelled": "一文字ずつ", "word by word": "単語ごと",
    "bold": "太字", "emphasis": "強調", "strikethrough": "取り消し線", "heading": "見出し",
    "list": "箇条書き", "numbered list": "番号付きリスト", "quote": "引用", "code": "コード",
    "code block": "コードブロック", "table": "表", "rule": "区切り線",
}  # fmt: skip


def _key(name: str) -> str:
    """As reading.js's ruleLabel looks the name up."""
    return re.sub("[^A-Za-z0-9]+", "_", name)


RULE_WORDS: dict[str, dict[str, str]] = {
    **{f"rule_{_key(en)}": {"ja": ja, "en": en} for en, ja in _RULES.items()},
    **{f"rule_detail_{_key(en)}": {"ja": ja, "en": en} for en, ja in _RULE_DETAILS.items()},
    "rule_line": {"ja": "{kind} {line}行目", "en": "{kind} line {line}"},
}
"""Names of the rules the reading tab shows (reading.js: ruleLabel)."""

STRINGS: dict[str, dict[str, str]] = {
    "title": {"ja": "HayaKoe 音声", "en": "HayaKoe voices"},
    "nav_voices": {"ja": "音声", "en": "Voices"},
    "nav_try": {"ja": "試聴", "en": "Try"},
    "nav_reading": {"ja": "読み", "en": "Reading"},
    "nav_dictionary": {"ja": "辞書", "en": "Dictionary"},
    "voices_intro": {
        "ja": "カタログの音声とインストール済みの音声です。インストール済みの音声には、この機械で"
        "使っているデコーダーとその速さ（話す速さの何倍で作れるか。1 倍未満では返事の前に待ちます）"
        "を示します。",
        "en": "Voices of the catalog and voices installed on this server. An installed voice says "
        "which decoder serves it here and how fast it is made (as a multiple of how fast it "
        "speaks: below 1 a listener waits before a reply).",
    },
    "installed": {"ja": "インストール済み", "en": "Installed"},
    "not_installed": {"ja": "未インストール", "en": "Not installed"},
    "default_voice": {"ja": "既定の音声", "en": "Default voice"},
    "styles": {"ja": "スタイル", "en": "Styles"},
    "speakers": {"ja": "話者", "en": "Speakers"},
    "sample_rate": {"ja": "サンプリング周波数", "en": "Sample rate"},
    "license": {"ja": "ライセンス", "en": "Licence"},
    "attribution": {"ja": "クレジット", "en": "Attribution"},
    "size": {"ja": "サイズ", "en": "Size on disk"},
    "self_check": {"ja": "自己チェック", "en": "Self-check"},
    "self_check_passed": {
        "ja": "合格（高速化したモデルを使用）",
        "en": "passed (compiled models in use)",
    },
    "self_check_failed": {
        "ja": "不一致（元のモデルで再生）",
        "en": "differs (served as published)",
    },
    "self_check_difference": {
        "ja": "公開モデルとの差はピークの {value}",
        "en": "{value} of the peak from the published model",
    },
    "unavailable": {"ja": "今は使えません", "en": "Cannot be served now"},
    "download_failed": {"ja": "ダウンロードできませんでした", "en": "Download failed"},
    "download_next_step": {
        "ja": "。ネットワークを確かめてもう一度試すか、音声をデータフォルダにコピーしてください"
        "（手順: docs/voices.md の「インターネットなしで」）。",
        "en": ": check the network and try again, or copy the voice into the data folder (the "
        'steps: docs/voices.md, "Without internet").',
    },
    "no_voice_installed": {
        "ja": "音声がまだインストールされていないので、再生できません。"
        "音声ページでダウンロードするか、データフォルダに音声をコピーしてください。",
        "en": "Nothing can play yet: no voice is installed. Download one on the Voices page, or "
        "copy one into the data folder.",
    },
    "open_voices": {"ja": "音声ページを開く", "en": "Open the Voices page"},
    "default_voice_state": {"ja": "既定の音声 {name}", "en": "The default voice {name}"},
    "decode_speed": {"ja": "この機械での速さ", "en": "Speed on this machine"},
    "speed_value": {"ja": "話す速さの {value} 倍", "en": "{value} × as fast as it speaks"},
    "details": {"ja": "詳細", "en": "Details"},
    "decoder": {"ja": "デコーダー", "en": "Decoder"},
    "decoder_fast": {"ja": "高速（int8 混合精度）", "en": "Fast (mixed int8)"},
    "decoder_reference": {
        "ja": "標準（FP32、HayaKoe と同じ音）",
        "en": "Reference (FP32, as HayaKoe)",
    },
    "decoder_fast_short": {"ja": "高速", "en": "fast"},
    "decoder_reference_short": {"ja": "標準", "en": "reference"},
    "decoder_speeds": {"ja": "この機械での速さ", "en": "speed here"},
    "decoder_gate": {
        "ja": "品質チェック（標準との差、log-mel 距離の平均 / 最大）",
        "en": "quality gate (distance from the reference, log-mel, mean / worst)",
    },
    "decoder_gate_passed": {"ja": "合格", "en": "passed"},
    "decoder_gate_failed": {"ja": "不合格", "en": "failed"},
    "decoder_why_asked": {"ja": "設定で指定", "en": "as set"},
    "decoder_why_fast_enough": {
        "ja": "標準でも十分に速い",
        "en": "the reference is fast enough here",
    },
    "decoder_why_not_faster": {
        "ja": "高速版がこの機械では速くならない",
        "en": "the fast one is not faster here",
    },
    "decoder_why_gate_failed": {
        "ja": "高速版が品質チェックに不合格",
        "en": "the fast one failed its quality gate",
    },
    "decoder_why_needed": {
        "ja": "標準ではこの機械で間に合わないため高速版を使用",
        "en": "the reference is too slow here: the fast one is used",
    },
    "decoder_why_not_made": {"ja": "int8 にできる層がない", "en": "no layer can be int8"},
    "decoder_why_failed": {
        "ja": "高速版を作れなかった（ログを参照）",
        "en": "the fast one could not be made (see the log)",
    },
    "download": {"ja": "ダウンロード", "en": "Download"},
    "delete": {"ja": "削除", "en": "Delete"},
    "confirm_delete": {"ja": "この音声を削除しますか？", "en": "Delete this voice?"},
    "upload_title": {"ja": "音声を追加", "en": "Add a voice"},
    "upload_hint": {
        "ja": ".aivmx ファイル、または HayaKoe 音声フォルダの zip",
        "en": "An .aivmx file, or a zip of a HayaKoe voice folder",
    },
    "upload_name": {"ja": "音声名（省略可）", "en": "Voice name (optional)"},
    "upload": {"ja": "アップロード", "en": "Upload"},
    "uploaded": {"ja": "追加しました", "en": "Added"},
    "text": {"ja": "テキスト", "en": "Text"},
    "voice": {"ja": "音声", "en": "Voice"},
    "style": {"ja": "スタイル", "en": "Style"},
    "speed_scale": {"ja": "話速", "en": "Speed"},
    "speed_scale_hint": {"ja": "大きいほど速い", "en": "larger is faster"},
    "intonation_scale": {"ja": "スタイルの強さ", "en": "Style strength"},
    "intonation_scale_hint": {
        "ja": "0 で Neutral、2 で最大",
        "en": "0 is Neutral, 2 the strongest",
    },
    "tempo_dynamics_scale": {"ja": "テンポの緩急", "en": "Tempo dynamics"},
    "tempo_dynamics_scale_hint": {"ja": "大きいほど緩急がつく", "en": "larger is livelier"},
    "pitch_scale": {"ja": "音高", "en": "Pitch"},
    "pitch_scale_hint": {"ja": "大きいほど高い", "en": "larger is higher"},
    "volume_scale": {"ja": "音量", "en": "Volume"},
    "volume_scale_hint": {"ja": "1 でそのまま", "en": "1 is unchanged"},
    "noise_scale": {"ja": "声のゆらぎ", "en": "Voice variation"},
    "noise_scale_hint": {"ja": "大きいほどゆらぐ", "en": "larger varies more"},
    "noise_scale_w": {"ja": "音素の長さのゆらぎ", "en": "Phoneme length variation"},
    "noise_scale_w_hint": {"ja": "大きいほどゆらぐ", "en": "larger varies more"},
    "style_id": {
        "ja": "スタイル ID（VOICEVOX 互換 API の speaker）",
        "en": "Style id (speaker of the VOICEVOX-compatible API)",
    },
    "more_params": {"ja": "詳細設定", "en": "More settings"},
    "play": {"ja": "再生", "en": "Play"},
    "stop": {"ja": "停止", "en": "Stop"},
    "download_wav": {"ja": "WAV を保存", "en": "Save WAV"},
    "first_sound": {"ja": "最初の音まで", "en": "First sound"},
    "total_time": {"ja": "合計", "en": "Total"},
    "audio_length": {"ja": "音声の長さ", "en": "Audio length"},
    "sample_text": {
        "ja": "おはようございます。今日の東京は晴れ、最高気温は25℃です。",
        "en": "おはようございます。今日の東京は晴れ、最高気温は25℃です。",
    },
    "show_reading": {"ja": "読みを表示", "en": "Show reading"},
    "rewritten": {"ja": "書き換え", "en": "Rewritten"},
    "no_rewrites": {"ja": "書き換えはありません", "en": "Nothing was rewritten"},
    "normalized": {"ja": "正規化", "en": "Normalized"},
    "kana": {"ja": "読み（カナ）", "en": "Reading (kana)"},
    "accent": {"ja": "アクセント", "en": "Accent"},
    "accent_legend": {
        "ja": "● 高い　○ 低い　▼ アクセント核（ここで下がる）",
        "en": "● high  ○ low  ▼ accent nucleus (the pitch falls after it)",
    },
    "dictionary_intro": {
        "ja": "ユーザー辞書の単語はサーバーがすぐに読み込みます。",
        "en": "The server picks up the words of the user dictionary at once.",
    },
    "dictionary_off": {
        "ja": "ユーザー辞書は使用できません（データフォルダを確認してください）。",
        "en": "The user dictionary is not available (check the data folder).",
    },
    "surface": {"ja": "表記", "en": "Surface"},
    "reading": {"ja": "読み", "en": "Reading"},
    "accent_type": {"ja": "アクセント型", "en": "Accent type"},
    "priority": {"ja": "優先度", "en": "Priority"},
    "priority_value": {"ja": "最優先", "en": "Highest"},
    "actions": {"ja": "操作", "en": "Actions"},
    "edit": {"ja": "編集", "en": "Edit"},
    "add_word": {"ja": "単語を追加・編集", "en": "Add or edit a word"},
    "example": {"ja": "例文", "en": "Example sentence"},
    "preview": {"ja": "プレビュー", "en": "Preview"},
    "save": {"ja": "保存", "en": "Save"},
    "before": {"ja": "変更前", "en": "Before"},
    "after": {"ja": "変更後", "en": "After"},
    "saved": {
        "ja": "保存しました。Home Assistant は一度話したメッセージの音声を保存しています。"
        "前に話したメッセージを新しい読みで聞くには、開発者ツールの「アクション」で "
        "tts.clear_cache を実行してください。",
        "en": "Saved. Home Assistant keeps the audio of messages it has spoken: to hear a "
        "message it spoke before with the new reading, run the action tts.clear_cache "
        "(Developer tools, Actions).",
    },
    "word_refused": {
        "ja": "この単語は登録できません。読みはカタカナで、アクセント型は 0 から読みの"
        "モーラ数までの数で入力してください。",
        "en": "This word cannot be added: write the reading in katakana, and an accent type "
        "from 0 to the number of morae of the reading.",
    },
    "saved_clear": {
        "ja": "保存しました。Home Assistant は一度話したメッセージの音声を保存しています。"
        "前に話したメッセージも新しい読みで話すには、その音声キャッシュを消してください。",
        "en": "Saved. Home Assistant keeps the audio of messages it has spoken: to hear a "
        "message it spoke before with the new reading, clear that cache.",
    },
    "clear_tts_cache": {
        "ja": "Home Assistant の音声キャッシュを消す",
        "en": "Clear Home Assistant's TTS cache",
    },
    "tts_cache_cleared": {
        "ja": "Home Assistant の音声キャッシュを消しました。"
        "どのメッセージも次から新しい読みで話します。",
        "en": "Home Assistant's TTS cache is cleared: every message is spoken with the new "
        "reading from now on.",
    },
    "tts_cache_unreachable": {
        "ja": "Home Assistant に接続できませんでした。Home Assistant の開発者ツールの"
        "「アクション」で tts.clear_cache を実行してください。",
        "en": "Home Assistant could not be reached: run the action tts.clear_cache there "
        "(Developer tools, Actions).",
    },
    "tts_cache_refused": {
        "ja": "Home Assistant がこのアプリに API の利用を認めませんでした。開発者ツールの"
        "「アクション」で tts.clear_cache を実行してください。",
        "en": "Home Assistant did not let this app use its API: run the action "
        "tts.clear_cache there (Developer tools, Actions).",
    },
    "tts_cache_failed": {
        "ja": "Home Assistant が音声キャッシュを消せませんでした。開発者ツールの「アクション」で "
        "tts.clear_cache を実行してください。",
        "en": "Home Assistant did not clear its TTS cache: run the action tts.clear_cache "
        "there (Developer tools, Actions).",
    },
    "no_words": {"ja": "単語はまだありません", "en": "No words yet"},
    "error": {"ja": "エラー", "en": "Error"},
    "loading": {"ja": "読み込み中…", "en": "Loading…"},
    "work_download": {"ja": "ダウンロード中", "en": "Downloading"},
    "work_compile": {"ja": "この機械向けに最適化中", "en": "Compiling for this machine"},
    "work_step": {"ja": "ステップ {number}/{steps}", "en": "step {number} of {steps}"},
    "work_file": {"ja": "ファイル {number}/{steps}", "en": "file {number} of {steps}"},
    "work_step_only": {"ja": "ステップ {number}", "en": "step {number}"},
    "work_left": {"ja": "残り約 {time}", "en": "about {time} left"},
    "work_elapsed": {"ja": "{time} 経過", "en": "{time} so far"},
    **RULE_WORDS,
}


def choose_language(accept_language: str | None) -> str:
    """The first supported language the browser asks for (by q-value), else Japanese."""
    choices: list[tuple[float, int, str]] = []
    for index, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary in LANGUAGES and quality > 0:
            choices.append((-quality, index, primary))
    return min(choices)[2] if choices else LANGUAGES[0]


def strings(language: str) -> dict[str, str]:
    return {key: texts[language] for key, texts in STRINGS.items()}
