"""One set of inputs with every kind of document, for tests that compare job counts.

Whole files (valid, invalid, malformed), a JSON Lines file with bad, blank, duplicate-key,
over-long and multi-item lines and no final newline, an all-blank JSON Lines file, a
UTF-16 one, a missing path, and the seeds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "examples" / "valid" / "seeds"
#: Lines longer than this are among the JSON Lines; pass it as the document limit.
LIMIT = 6000


def seed() -> dict[str, Any]:
    value: dict[str, Any] = json.loads(sorted(SEEDS.glob("*.json"))[0].read_text("utf-8"))
    return value


def write_mixed(root: Path, lines: int = 400) -> list[str]:
    """Write the inputs under ``root``; return the PATH arguments naming them."""
    good = seed()
    bad = json.loads(json.dumps(good))
    bad["run"]["spec"]["unexpected"] = 1
    dangling = json.loads(json.dumps(good))
    dangling["run"]["spec"]["protocolDigest"] = "sha256:" + "0" * 64
    text = []
    for index in range(lines):
        if index % 37 == 5:
            text.append(json.dumps(bad))
        elif index % 53 == 7:
            text.append('{"broken": ')
        elif index % 41 == 3:
            text.append("   ")
        elif index % 97 == 11:
            text.append('{"a": 1, "a": 2}')
        elif index % 89 == 13:
            text.append(json.dumps(good["protocol"]) + " " * LIMIT)  # over the limit
        elif index % 83 == 17:
            text.append(json.dumps([good, dangling]))
        else:
            text.append(json.dumps(good))
    (root / "many.jsonl").write_text("\n".join(text), encoding="utf-8")  # no final \n
    (root / "blank.jsonl").write_text("\n" * 5000, encoding="utf-8")
    (root / "bom.jsonl").write_bytes(b"\xff\xfe" + b"x" * 5000 + b"\n{}\n")
    files = root / "files"
    files.mkdir()
    for index in range(40):
        value = bad if index % 9 == 4 else good
        (files / f"{index:03d}.json").write_text(json.dumps(value), encoding="utf-8")
    (files / "020-broken.json").write_text("{", encoding="utf-8")
    return [
        str(files),
        str(root / "many.jsonl"),
        str(root / "blank.jsonl"),
        str(root / "bom.jsonl"),
        str(root / "missing.json"),
        str(SEEDS),
    ]
