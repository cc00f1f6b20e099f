"""The gold list of English words and their usual katakana, from JMdict:
``python -m tools.english_gold JAMDICT_DB > tests/data/english/loanwords.tsv``.

The words are ones a smart home and an assistant's replies use (chosen here, each with the
JMdict entry that transliterates it: not a translation such as メニュー for "schedule"); the
katakana are every kana form JMdict gives that entry, each a spelling people write, with the
middle dot removed. JAMDICT_DB is JMdict as the ``jamdict-data`` package ships it (an SQLite
file: ``xz -d jamdict.db.xz``). JMdict is the property of the Electronic Dictionary Research and
Development Group, used under its licence (CC BY-SA 4.0): the list it makes keeps that licence
(tests/data/english/README.md).
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Sequence

ENTRIES = {
    "network": 1093120, "firmware": 1107580, "update": 1016650, "router": 1143620,
    "speaker": 1072240, "timer": 1075990, "schedule": 1068870, "thermostat": 1055310,
    "sensor": 1074990, "camera": 1038350, "battery": 1099210, "charger": 2157140,
    "light": 1137950, "lamp": 1140360, "switch": 1067210, "plug": 1115580, "fan": 1108540,
    "heater": 1103540, "robot": 1147870, "cleaner": 1044430, "washer": 1026620,
    "oven": 1032930, "microwave": 1126610, "freezer": 1111710, "kettle": 1048110,
    "toaster": 1084530, "television": 1080550, "display": 1081990, "screen": 1068550,
    "controller": 1052820, "window": 1025220, "curtain": 1036290, "lock": 1147600,
    "alarm": 1018960, "siren": 1056150, "chime": 1077890, "bell": 1120010,
    "intercom": 2437730, "smartphone": 2304550, "tablet": 1076410, "computer": 1053350,
    "printer": 1116270, "server": 1054970, "cloud": 1920050, "application": 1018210,
    "account": 1014970, "password": 1101520, "login": 1147120, "message": 1133570,
    "reminder": 2462260, "calendar": 1039220, "event": 1021680, "meeting": 1130380,
    "memo": 1133830, "list": 1141500, "shopping": 1062760, "music": 1131680,
    "playlist": 2211530, "album": 1019450, "artist": 1013560, "song": 1075660,
    "podcast": 2159230, "radio": 1138860, "news": 1091500, "weather": 1026000,
    "pressure": 1116860, "energy": 1029350, "power": 1102990, "solar": 1629950,
    "panel": 1102090, "meter": 1132530, "mute": 1131720, "stop": 1071100, "start": 1069370,
    "scene": 1059720, "routine": 1143630, "automation": 1032180, "script": 1068630,
    "device": 1083510, "gateway": 1048360, "hub": 2273970, "bridge": 1114250,
    "cable": 1048000, "wireless": 1148810, "signal": 1060180, "connection": 1050490,
    "error": 1030040, "reset": 1141650, "restart": 1141480, "setting": 1074590,
    "option": 1035040, "menu": 1133790, "room": 1143830, "kitchen": 1041150,
    "bedroom": 1119690, "bathroom": 1098540, "toilet": 1084830, "garden": 1039680,
    "balcony": 1099900, "entrance": 1031160, "office": 1034660, "security": 1074440,
    "guest": 1048550, "family": 1108370, "member": 1134370, "user": 1136600,
    "voice": 1123690, "assistant": 1015740, "system": 1060300, "service": 1055000,
    "support": 1057630, "download": 1077010, "upload": 1016710, "backup": 1098770,
    "storage": 2304090, "memory": 1133860, "data": 1081190, "file": 1107800,
    "folder": 1110750, "link": 1143400, "online": 1036080, "offline": 1034840,
    "internet": 1022880, "version": 1097080, "level": 1145910, "point": 1124860,
    "morning": 1134640, "sleep": 1073870,
}  # fmt: skip
"""Each word and the JMdict entry (its ``ent_seq``) that transliterates it."""


def spellings(database: sqlite3.Connection, entry: int) -> list[str]:
    """Every kana form of ``entry``, the middle dot removed, in JMdict's order."""
    rows = database.execute("select text from Kana where idseq = ? order by ID", (entry,))
    return list(dict.fromkeys(text.replace("・", "") for (text,) in rows))


def main(argv: Sequence[str] | None = None) -> int:
    (path,) = argv if argv is not None else sys.argv[1:]
    database = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    print("# word\tkatakana (every spelling JMdict gives)\tJMdict entry")
    for word, entry in ENTRIES.items():
        found = spellings(database, entry)
        if not found:
            raise SystemExit(f"JMdict has no entry {entry} ({word})")
        print(f"{word}\t{'|'.join(found)}\t{entry}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
