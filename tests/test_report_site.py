"""``kernelindex report PATH --out DIR``: the static HTML site.

The library (:class:`kernelindex_sdk.site.Site`) on records built here, with hostile
text in every open field (a property: nothing drawn appears unescaped, no link but
relative and http(s) ones); the command as a real process on the examples: its pages,
its refusals (a non-empty folder, a folder it did not write, an input's place), its
exit statuses, a before/after page, and a run killed while writing.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from beforeafter_records import RunSpec, index_of, write_jsonl
from hypothesis import given
from hypothesis import strategies as st
from report_records import BAD_URLS, HOSTILE, hostile_records
from strategies import law_settings

from kernelindex_sdk.base.escaping import html_href, html_lines, html_text
from kernelindex_sdk.compare.beforeafter import before_after
from kernelindex_sdk.compare.runs import resolve_runs
from kernelindex_sdk.site import Site, media_type
from kernelindex_sdk.site.writing import MANIFEST

KERNELINDEX = [sys.executable, "-m", "kernelindex_sdk.cli.main"]
ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "tests" / "examples"
SOURCES = [
    EXAMPLES / "compare" / "sweep",
    EXAMPLES / "compare" / "two-implementations",
    EXAMPLES / "compare" / "oom",
    EXAMPLES / "compare" / "memory",
    EXAMPLES / "valid",
]
HREF = re.compile(r'href="([^"]*)"')


def ki(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``kernelindex ARGS...`` as a real process."""
    return subprocess.run(
        [*KERNELINDEX, *map(str, args)], capture_output=True, text=True, check=False
    )


def pages_of(site: Site) -> dict[str, str]:
    found = {}
    for path in site.paths():
        data = site.page(path)
        assert data is not None, path
        found[path] = data.decode("utf-8")
    return found


def assert_safe(pages: dict[str, str], *inputs: str) -> None:
    """No page holds an input as written, nor a script, nor a link that is neither
    relative nor http(s)."""
    for path, text in pages.items():
        if not path.endswith(".html"):
            continue
        assert "<script" not in text.lower(), path
        for value in inputs:
            assert value not in text, (path, value)
        for href in HREF.findall(text):
            assert (
                href == "data:,"
                or not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", href)
                or (href.startswith(("http://", "https://")))
            ), (path, href)


# --- escapers -----------------------------------------------------------------------------


def test_html_escapers_write_every_special_character_as_a_reference() -> None:
    assert html_text("<a href=\"x\">'&'</a>") == (
        "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;&#x27;&lt;/a&gt;"
    )
    assert html_text("one\ntwo\u202e") == "one\\ntwo\\u202e"
    assert html_lines('<a>\n  "b"') == "&lt;a&gt;\n  &quot;b&quot;"


@given(st.text())
@law_settings(300)
def test_html_text_leaves_nothing_markup_can_read(text: str) -> None:
    """Law: no ``< > " '`` and no ``&`` but a reference's, one line, and
    :func:`html_lines` is :func:`html_text` line by line."""
    escaped = html_text(text)
    assert not set(escaped) & set("<>\"'\n\r")
    assert re.sub(r"&(amp|lt|gt|quot|#x27);", "", escaped).count("&") == 0
    expected = "\n".join(html_text(line) for line in text.split("\n"))
    assert html_lines(text) == expected


@pytest.mark.parametrize(
    "url",
    [
        *BAD_URLS,
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "vbscript:x",
        "https://ok.example/\nx",
        "http:// spaced",
        "file:///etc/passwd",
        "//evil.example/x",
        "",
    ],
)
def test_no_link_but_http_from_a_record(url: str) -> None:
    assert html_href(url) is None


def test_http_links_are_kept_escaped() -> None:
    assert html_href('https://github.com/a/b?x=1&y="2"') == (
        "https://github.com/a/b?x=1&amp;y=&quot;2&quot;"
    )
    assert html_href("HTTP://EXAMPLE.COM/") == "HTTP://EXAMPLE.COM/"


# --- the library: hostile input -------------------------------------------------------------


@given(
    texts=st.lists(st.text(max_size=30), min_size=1, max_size=3),
    url=st.sampled_from(BAD_URLS),
    status=st.sampled_from(["passed", "oom"]),
)
@law_settings(40)
def test_no_drawn_text_appears_unescaped(texts: list[str], url: str, status: str) -> None:
    """Law: every field a record leaves open, drawn text made hostile, shows escaped on
    every page (overview, kernel, records, before/after); no ``javascript:`` link."""
    sets = [
        hostile_records(text, RunSpec(seq=1024 * (i + 1), at=i, status=status), url=url)
        for i, text in enumerate(texts)
    ]
    sets.append(hostile_records(texts[0], RunSpec(implementation="huggingface", at=9), url=url))
    sets.append(hostile_records(texts[0], RunSpec(at=10), kernel=HOSTILE + texts[0], url=url))
    index = index_of(sets)
    runs, _ = resolve_runs(index)
    result = before_after(runs[:1], runs[1:], lookup=index.lookup)
    site = Site(index, runs, reference=runs[:1], against=result, title=HOSTILE + texts[0])
    pages = pages_of(site)
    assert_safe(pages, *(HOSTILE + text for text in texts))
    assert any(html_text(HOSTILE + texts[0]) in text for text in pages.values())


def test_every_run_and_record_has_a_page_and_every_local_link_resolves() -> None:
    sets = [hostile_records("x", RunSpec(seq=s, at=s)) for s in (1024, 2048, 4096)]
    index = index_of(sets)
    runs, _ = resolve_runs(index)
    pages = pages_of(Site(index, runs))
    for found in (*index.runs, *index.records):
        assert f"records/{found.removeprefix('sha256:')}.html" in pages
    for path, text in pages.items():
        for href in HREF.findall(text):
            if href.startswith(("http", "data:")):
                continue
            file, _, fragment = href.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(path), file))
            assert target in pages, (path, href)
            assert not fragment or f'id="{fragment}"' in pages[target], (path, href)
    assert "<svg" in pages["kernels/geglu.html"]


def test_one_page_is_rendered_on_demand_and_others_are_none() -> None:
    index = index_of([hostile_records("x")])
    runs, _ = resolve_runs(index)
    site = Site(index, runs)
    assert site.page("index.html") is not None
    assert site.page("records/" + "0" * 64 + ".html") is None
    assert site.page("../etc/passwd") is None
    assert site.page("compare.html") is None  # no reference set
    kinds = {media_type(path) for path in site.paths()}
    assert kinds == {"text/html; charset=utf-8", "text/css; charset=utf-8", "application/json"}


# --- the command ------------------------------------------------------------------------------


def test_report_writes_a_site_of_the_examples(tmp_path: Path) -> None:
    out = tmp_path / "site"
    done = ki("report", *SOURCES, "--out", out)
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stderr
    overview = (out / "index.html").read_text()
    assert "GeGLU MLP" in overview
    assert (out / "kernels" / "geglu.html").read_text().count("<svg") >= 2
    assert (out / "schemas" / "index.html").exists()
    assert list((out / "schemas" / "kernelindex.dev" / "v1alpha1").glob("*.schema.json"))
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["writer"] == "kernelindex report"
    assert set(manifest["files"]) == {
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()
    } - {MANIFEST}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no work folder left


def test_hostile_records_through_the_command(tmp_path: Path) -> None:
    data = tmp_path / "in"
    data.mkdir()
    write_jsonl(
        data / "runs.jsonl",
        [hostile_records("x"), hostile_records("y", RunSpec(at=5, status="oom"))],
    )
    out = tmp_path / "site"
    done = ki("report", data, "--out", out)
    assert done.returncode == 0, done.stderr  # the records are valid
    pages = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*.html")}
    assert_safe(pages, HOSTILE + "x", HOSTILE + "y")
    assert "javascript:alert(1) (not linked)" in "".join(pages.values())


def test_refuses_a_non_empty_folder_and_force_only_over_its_own(tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    mine = out / "notes.txt"
    mine.write_text("mine")
    done = ki("report", SOURCES[0], "--out", out)
    assert done.returncode == 2
    assert "not empty; use --force" in done.stderr
    done = ki("report", SOURCES[0], "--out", out, "--force")
    assert done.returncode == 2
    assert "not replaced, even with --force" in done.stderr
    assert mine.read_text() == "mine" and sorted(os.listdir(out)) == ["notes.txt"]
    mine.unlink()
    assert ki("report", SOURCES[0], "--out", out).returncode == 0
    assert ki("report", SOURCES[0], "--out", out).returncode == 2  # its own: still --force
    assert ki("report", *SOURCES[:2], "--out", out, "--force").returncode == 0
    assert (out / "kernels" / "geglu.html").exists()
    (out / "kernels" / "added.html").write_text("someone else's")
    done = ki("report", SOURCES[0], "--out", out, "--force")
    assert done.returncode == 2 and "kernels/added.html is not what" in done.stderr
    assert (out / "kernels" / "added.html").read_text() == "someone else's"


def test_refuses_an_output_over_or_inside_an_input(tmp_path: Path) -> None:
    data = tmp_path / "in"
    data.mkdir()
    write_jsonl(data / "runs.jsonl", [hostile_records("x")])
    done = ki("report", data, "--out", data / "site")
    assert done.returncode == 2 and "inside the input folder" in done.stderr
    done = ki("report", data / "runs.jsonl", "--out", data, "--force")
    assert done.returncode == 2 and "holds the input" in done.stderr
    assert sorted(os.listdir(data)) == ["runs.jsonl"]


def test_exit_statuses(tmp_path: Path) -> None:
    out = tmp_path / "site"
    done = ki("report", tmp_path / "missing.json", "--out", out)
    assert done.returncode == 2 and "nothing written" in done.stderr
    assert not out.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    done = ki("report", empty, "--out", out)
    assert done.returncode == 2 and "no .json" in done.stderr
    done = ki("report", EXAMPLES / "compare" / "invalid", "--out", out)
    assert done.returncode == 1, done.stderr
    assert "invalid item" in done.stderr and (out / "index.html").exists()
    assert "invalid items were left out" in (out / "index.html").read_text()
    done = ki("report", SOURCES[0], "--out", tmp_path / "s2", "--kernel", "nope")
    assert done.returncode == 2 and "nope" in done.stderr


def test_against_adds_a_before_after_page(tmp_path: Path) -> None:
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    write_jsonl(before, [hostile_records("b", RunSpec(value=100_000, at=1))])
    write_jsonl(
        after, [hostile_records("b", RunSpec(value=150_000, at=2, implementation="liger-0.5.1"))]
    )
    out = tmp_path / "site"
    done = ki("report", after, "--against", before, "--out", out)
    assert done.returncode == 0, done.stderr
    page = (out / "compare.html").read_text()
    assert "slower" in page and "1.500×" in page
    assert 'href="compare.html"' in (out / "index.html").read_text()
    for href in HREF.findall(page):
        if not href.startswith(("http", "data:")):
            assert (out / href).exists(), href


@pytest.mark.skipif(sys.platform == "win32", reason="signals")
def test_a_killed_run_leaves_no_site_in_place(tmp_path: Path) -> None:
    """A run killed while writing leaves nothing at DIR (the work folder is hidden)."""
    data = tmp_path / "in.jsonl"
    write_jsonl(data, [hostile_records("x", RunSpec(seq=s, at=s)) for s in range(1, 400)])
    out = tmp_path / "site"
    process = subprocess.Popen(
        [*KERNELINDEX, "report", str(data), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        work = [p for p in tmp_path.iterdir() if p.name.startswith(".site.")]
        if work and any((w / "records").exists() for w in work):
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.005)
    process.wait()
    if process.returncode == 0:
        pytest.skip("the run finished before it could be killed")
    assert not out.exists()


def test_a_kernel_page_charts_its_history_with_the_change_marked(tmp_path: Path) -> None:
    from history_records import series_records

    data = tmp_path / "history.jsonl"
    write_jsonl(data, series_records([100_000] * 6 + [150_000] * 6, 1_000))
    out = tmp_path / "site"
    done = ki("report", data, "--out", out)
    assert done.returncode == 0, done.stderr
    page = (out / "kernels" / "geglu.html").read_text()
    history = page[page.index("<h2>History</h2>") :]
    assert history.count("<svg") == 1
    assert '<g class="marker worse">' in history and "slower 1.50×" in history
    assert "0.6.0" in history  # where the new level starts


def test_the_files_written_are_the_ones_counted(tmp_path: Path) -> None:
    """The progress bar's total is what is written: it ends at 100 %."""
    from kernelindex_sdk.site import write_site

    sets = [hostile_records("x", RunSpec(seq=s, at=s)) for s in (1024, 2048)]
    index = index_of(sets)
    runs, _ = resolve_runs(index)
    result = before_after(runs[:1], runs[1:], lookup=index.lookup)
    site = Site(index, runs[1:], reference=runs[:1], against=result)
    told: list[str] = []
    written = write_site(site, str(tmp_path / "site"), on_file=told.append)
    assert written == len(told) == site.count() == len(set(site.paths()))


def test_many_pairs_are_charted_thinned_and_listed_in_part() -> None:
    from kernelindex_sdk.site.pages import CHARTED_PAIRS, LISTED

    count = CHARTED_PAIRS + 50
    before = [hostile_records("x", RunSpec(seq=s, at=s)) for s in range(1, count + 1)]
    after = [
        hostile_records("x", RunSpec(seq=s, at=5000 + s, value=100_000 + s))
        for s in range(1, count + 1)
    ]
    reference, _ = resolve_runs(index_of(before))
    candidate, _ = resolve_runs(index_of(after))
    result = before_after(reference, candidate)
    assert len(result.pairs) == count
    page = Site(index_of([*before, *after]), candidate, reference=reference, against=result)
    text = (page.page("compare.html") or b"").decode()
    assert 0 < text.count("<circle") <= CHARTED_PAIRS
    assert text.count("<tr>") == LISTED + 1  # and the header
    assert f"and {count - LISTED} more pairs" in text


def test_a_store_reports_as_its_files_do(tmp_path: Path) -> None:
    """PATH may be a store: the same pages, each run's record with its JSON."""
    pytest.importorskip("duckdb")
    data = tmp_path / "runs.jsonl"
    write_jsonl(data, [hostile_records("x", RunSpec(seq=s, at=s)) for s in (1024, 2048)])
    store = tmp_path / "runs.kistore"
    added = ki("store", "add", data, "--store", store)
    assert added.returncode == 0, added.stderr
    from_files, from_store = tmp_path / "files", tmp_path / "store"
    assert ki("report", data, "--out", from_files).returncode == 0
    done = ki("report", store, "--out", from_store)
    assert done.returncode == 0, done.stderr
    pages = sorted(p.relative_to(from_files).as_posix() for p in from_files.rglob("*.html"))
    assert pages == sorted(p.relative_to(from_store).as_posix() for p in from_store.rglob("*.html"))
    records = [p for p in pages if p.startswith("records/")]
    assert all("<h2>JSON</h2>" in (from_store / p).read_text() for p in records)
