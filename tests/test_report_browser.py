"""The report's site in a real browser: headless Chromium (the system's package, driven
by Playwright; never a browser download).

One site (the examples, and the shared seeds where present) and one browser session
for the whole module, so the check stays a few seconds: every page loads with no
console error and no page error, every local link (HTML and SVG ``<a>``, the
stylesheet) resolves to a file of the site, the overview names every kernel, and a
kernel page has a chart. A run with hostile text in every open field is among them: a
script that escaped escaping would be refused by the pages' policy, and logged.

Without Chromium or Playwright these tests skip saying which is missing — except under
CI (``CI`` set), where that is a failure: ``.ci/run`` installs the browser first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
import shared_data
from beforeafter_records import RunSpec, write_jsonl
from profiles import variants
from report_records import hostile_records

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "tests" / "examples"
SOURCES = [
    EXAMPLES / "compare" / "sweep",
    EXAMPLES / "compare" / "two-implementations",
    EXAMPLES / "compare" / "oom",
    EXAMPLES / "compare" / "memory",
    EXAMPLES / "compare" / "reruns",
    EXAMPLES / "valid",
]
#: Chromium as a test drives it: headless, no sandbox (root), nothing fetched.
ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Every link of a page, as the browser resolves it (HTML and SVG ``<a>``, ``<link>``).
LINKS = """() => Array.from(document.querySelectorAll('a[href], link[href]'))
  .map(e => new URL(e.getAttribute('href'), document.baseURI).href)"""


def _missing() -> str | None:
    """What the browser tests lack, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if shutil.which("chromium") is None:
        return "no chromium on PATH (Debian: apt-get install -y chromium)"
    return None


@pytest.fixture(scope="module")
def browser_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any]]:
    """The site, written by the command, and one browser page to open it in."""
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests cannot run under CI: {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    base = tmp_path_factory.mktemp("report")
    out = base / "site"
    hostile = base / "hostile.jsonl"  # a page running any of it would log a CSP error
    write_jsonl(hostile, [hostile_records("x", RunSpec(kernel="swiglu", at=7))])
    sources = [*SOURCES, hostile]
    seeds = shared_data.find("seeds")
    if seeds is not None:
        sources.append(seeds)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernelindex_sdk.cli.main",
            "report",
            *map(str, sources),
            "--against",
            str(EXAMPLES / "compare" / "reruns"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
        try:
            yield out, browser.new_page()
        finally:
            browser.close()


def _local(url: str, site: Path) -> Path | None:
    """The file a ``file://`` link names (None for any other link)."""
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def _pages(site: Path, every: bool) -> list[Path]:
    """The pages to open: all of them, or (the quick run's share) every page outside
    ``records/``, every record page that carries the hostile text, and one record page
    in eight of the rest: each kind of page and each hostile field, in a third of the
    time."""
    pages = sorted(site.rglob("*.html"))
    if every:
        return pages
    records = [p for p in pages if p.parent.name == "records"]
    hostile = [p for p in records if "alert(1)" in p.read_text("utf-8")]
    assert hostile, "the hostile run has record pages"
    sample = set(hostile) | set(records[::8])
    return [p for p in pages if p.parent.name != "records" or p in sample]


@pytest.mark.parametrize("every", variants([False, True], quick={0}, ids=["sample", "every"]))
def test_every_page_loads_without_errors_and_every_link_resolves(
    browser_site: tuple[Path, Any], every: bool
) -> None:
    site, page = browser_site
    errors: list[str] = []
    page.on(
        "console",
        lambda m: (
            errors.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None
        ),
    )
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    assert len(sorted(site.rglob("*.html"))) > 20
    pages = _pages(site, every)
    broken = []
    for path in pages:
        before = len(errors)
        response = page.goto(path.as_uri())
        assert response is None or response.ok, path
        if len(errors) > before:
            errors[before:] = [f"{path.relative_to(site)}: {e}" for e in errors[before:]]
        for url in page.evaluate(LINKS):
            target = _local(url, site)
            if target is None:
                assert url.startswith(("http://", "https://", "data:")), (path, url)
                continue
            if not target.is_file() or site not in target.parents:
                broken.append(f"{path.relative_to(site)} → {url}")
    assert not errors, errors
    assert not broken, broken


def test_the_overview_names_every_kernel_and_a_kernel_page_has_a_chart(
    browser_site: tuple[Path, Any],
) -> None:
    site, page = browser_site
    page.goto((site / "index.html").as_uri())
    text = page.inner_text("main")
    kernels = sorted((site / "kernels").glob("*.html"))
    assert kernels
    for kernel in kernels:
        page.goto(kernel.as_uri())
        name = page.inner_text("h1")
        assert name in text, name
    page.goto((site / "kernels" / "geglu.html").as_uri())
    assert page.locator("svg.chart").count() >= 2
    box = page.locator("svg.chart").first.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    assert page.locator("svg.chart circle").count() > 3


# A pytest session inside the test: slow. CI runs it (its slow set), where it matters.
@pytest.mark.slow
def test_under_ci_a_missing_browser_fails_and_elsewhere_skips(tmp_path: Path) -> None:
    """The rule itself, in a real pytest with no chromium on PATH: CI set fails, unset
    skips naming what is missing."""
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = str(bare)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-rs",
        "-n",
        "0",
        "-p",
        "no:cacheprovider",
        str(Path(__file__)),
        "-k",
        "every_page",
    ]
    elsewhere = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
    assert elsewhere.returncode == 0 and "SKIPPED" in elsewhere.stdout, elsewhere.stdout
    assert "no chromium on PATH" in elsewhere.stdout
    under_ci = subprocess.run(
        command, env={**env, "CI": "true"}, capture_output=True, text=True, cwd=ROOT
    )
    assert under_ci.returncode != 0, under_ci.stdout
    assert "browser tests cannot run under CI" in under_ci.stdout
