"""Build ``tests/fixtures/schemastore/``: real version histories of SchemaStore schemas.

    python benchmarks/schemastore_fixtures.py WHEEL_DIR [WHEEL_DIR ...]

Each WHEEL_DIR holds one ``check_jsonschema-<version>-py3-none-any.whl``, as
``pip download --no-deps -d /tmp/cj/VER check-jsonschema==VER`` leaves it.
check-jsonschema vendors SchemaStore schemas (Apache-2.0) under
``check_jsonschema/builtin_schemas/vendor/``; read in release order, each schema's
distinct contents (by SHA-256 of the bytes) are its versions, and consecutive versions
are the pairs ``schema diff`` is held against (``benchmarks/bench_schema_diff_real.py``).

Each version is written byte for byte, gzip-compressed (``mtime=0``, so a rebuild is
identical), as ``<schema>/<NN>-<sha256[:12]>.json.gz``; ``provenance.json`` says where
each came from (the first release that shipped it, the path in the wheel, the SHA-256
of the bytes, every release read that shipped it). Why gzip: the 26 histories are
~21 MB as JSON, ~2 MB compressed, and the fixtures are read by code only.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "tests" / "fixtures" / "schemastore"
VENDOR = "check_jsonschema/builtin_schemas/vendor/"
_WHEEL = re.compile(r"check_jsonschema-(\d+)\.(\d+)\.(\d+)-py3-none-any\.whl")


def _release(wheel: Path) -> tuple[int, int, int]:
    found = _WHEEL.fullmatch(wheel.name)
    if found is None:
        raise SystemExit(f"{wheel}: not a check-jsonschema wheel")
    major, minor, patch = (int(part) for part in found.groups())
    return major, minor, patch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("wheel_dirs", nargs="+", type=Path)
    args = parser.parse_args()
    wheels = sorted(
        (w for d in args.wheel_dirs for w in d.glob("check_jsonschema-*.whl")), key=_release
    )
    histories: dict[str, list[dict[str, Any]]] = {}
    by_hash: dict[str, dict[str, Any]] = {}
    for wheel in wheels:
        release = ".".join(map(str, _release(wheel)))
        with zipfile.ZipFile(wheel) as archive:
            for member in sorted(archive.namelist()):
                if not (member.startswith(VENDOR) and member.endswith(".json")):
                    continue
                data = archive.read(member)
                digest = hashlib.sha256(data).hexdigest()
                if digest in by_hash:
                    by_hash[digest]["releases"].append(release)
                    continue
                name = member[len(VENDOR) : -len(".json")]
                history = histories.setdefault(name, [])
                entry: dict[str, Any] = {
                    "file": f"{name}/{len(history) + 1:02d}-{digest[:12]}.json.gz",
                    "sha256": digest,
                    "package": f"check-jsonschema=={release}",
                    "wheel_path": member,
                    "releases": [release],
                }
                history.append(entry)
                by_hash[digest] = entry
                target = TARGET / entry["file"]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(gzip.compress(data, 9, mtime=0))
    manifest = {
        "source": "check-jsonschema wheels from PyPI (vendored SchemaStore schemas)",
        "license": "Apache-2.0 (SchemaStore, https://github.com/SchemaStore/schemastore)",
        "releases_read": [".".join(map(str, _release(w))) for w in wheels],
        "schemas": dict(sorted(histories.items())),
    }
    (TARGET / "provenance.json").write_text(json.dumps(manifest, indent=1) + "\n", "utf-8")
    pairs = sum(len(h) - 1 for h in histories.values())
    print(f"{len(histories)} schemas, {len(by_hash)} versions, {pairs} consecutive pairs")


if __name__ == "__main__":
    main()
