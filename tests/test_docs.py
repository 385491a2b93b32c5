"""The documentation's examples run as written (the blocks marked ``<!-- tested -->``)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import kernelindex_sdk as ki

ROOT = Path(__file__).resolve().parent.parent
_TESTED = re.compile(r"<!-- tested -->\n```python\n(.*?)```", re.DOTALL)


def _tested_blocks(page: str) -> list[str]:
    return _TESTED.findall((ROOT / "docs" / page).read_text("utf-8"))


def test_the_library_guide_builds_links_validates_and_writes_a_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (block,) = _tested_blocks("library.md")
    assert len(block.splitlines()) < 72  # what a tool author wrote by hand before
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/library.md", "exec"), {})
    written = tmp_path / "geglu-forward-h200.json"
    bundle = ki.load_file(written)
    assert ki.validate(bundle) == []
    printed = capsys.readouterr().out.strip()
    assert printed == ki.digest(bundle["run"])
    assert json.loads(written.read_text("utf-8")) == bundle
    assert os.listdir(tmp_path) == ["geglu-forward-h200.json"]


def test_the_recording_guide_times_plain_python_with_the_cpu_clock() -> None:
    (block,) = _tested_blocks("recording.md")
    namespace: dict[str, object] = {"__name__": "recording_guide"}
    exec(compile(block, "docs/recording.md", "exec"), namespace)
    recording = namespace["recording"]
    assert ki.validate(recording.bundle) == []  # type: ignore[attr-defined]


_TESTED_SH = re.compile(
    r"<!-- not-run: needs a live kernelindex serve; tests/test_docs.py starts one and runs"
    r" this block -->\n```sh\n(.*?)```",
    re.DOTALL,
)


def test_the_serve_guides_curl_session_runs_against_a_real_server(tmp_path: Path) -> None:
    import shutil
    import subprocess

    pytest.importorskip("duckdb")
    pytest.importorskip("uvicorn")
    if shutil.which("curl") is None:
        pytest.skip("needs curl")
    from tests.serve_helpers import TOKEN, Server, token_file

    (block,) = _TESTED_SH.findall((ROOT / "docs" / "serve.md").read_text("utf-8"))
    shutil.copyfile(ROOT / "tests/examples/valid/refs/stream.jsonl", tmp_path / "stream.jsonl")
    (tmp_path / "token.txt").write_text(TOKEN + "\n", "utf-8")
    server = Server(tmp_path / "runs.kistore", token_file=token_file(tmp_path))
    try:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block],
            cwd=tmp_path,
            env={**os.environ, "KI": server.url},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        server.stop()
    assert done.returncode == 0, (done.stdout, done.stderr)


def test_the_report_guide_writes_a_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    (block,) = _tested_blocks("report.md")
    shutil.copytree(ROOT / "examples" / "liger", tmp_path / "examples" / "liger")
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/report.md", "exec"), {})
    assert (tmp_path / "seeds-report" / "index.html").is_file()
    pages = len(list((tmp_path / "seeds-report" / "records").glob("*.html")))
    assert capsys.readouterr().out.strip() == f"{pages} record pages"
