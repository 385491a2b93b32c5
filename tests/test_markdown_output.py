"""Markdown, GitHub annotations and JUnit XML show what records hold as text, never as
markup: ``printable.markdown_cell`` (a law, checked by a small Markdown reader) and the
real commands run on records whose every free-text field is hostile."""

from __future__ import annotations

import json
import os
import re
import string
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from acceptance.support import assert_no_traceback, run_subprocess
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples, variants

from kernelindex_sdk.base.escaping import markdown_cell, one_line, xml_text
from kernelindex_sdk.canonical import digest

ROOT = Path(__file__).resolve().parent.parent
COMPARE = ROOT / "tests" / "examples" / "compare"
SEEDS = ROOT / "tests" / "examples" / "valid" / "seeds"

#: A GPU name, title, version, reason or parameter that tries every Markdown and HTML
#: construct a PR comment or a step summary would act on.
HOSTILE = (
    "H100 </details></table><!-- [link](http://evil) **x** _y_ `z` | \\ # ! ~ $a$ "
    "www.evil.com &amp; <img src=x>"
)
#: Pieces of HOSTILE that must never reach a Markdown page as they are.
RAW = (
    "</details></table>",
    "<!--",
    "[link](http://evil)",
    "http://",
    "**x**",
    "_y_",
    "`z`",
    "$a$",
    "www.evil.com",
    "<img",
    "| \\ #",
    " &amp; ",
)
#: How HOSTILE's start reads once escaped: it made it into the page, as text.
ESCAPED = "H100 &lt;/details&gt;&lt;/table&gt;&lt;\\!-- \\[link\\](http\\://evil)"


# ------------------------------------------------------------------ the law


def _shown(escaped: str) -> str:
    """What GitHub shows for ``escaped``, read by the rules ``markdown_cell`` relies on
    (backslash escapes, three entities) — failing on anything Markdown or HTML would
    act on instead: a raw ``<`` or ``>``, a bare ``&``, an unescaped ``[ ] * _ | ` ~ $
    # !``, a bare ``scheme://`` or ``www.`` (autolinks), a start that makes a list,
    quote or heading underline, a line break."""
    assert "\n" not in escaped and "\r" not in escaped
    assert not re.match(r"[-+=]|[0-9]+[.)](\s|$)", escaped), escaped
    shown: list[str] = []
    at = 0
    while at < len(escaped):
        char = escaped[at]
        if char == "\\":
            following = escaped[at + 1]  # a trailing lone backslash fails here
            assert following in string.punctuation, escaped
            shown.append(following)
            at += 2
            continue
        if char == "&":
            entity = next(e for e in ("&amp;", "&lt;", "&gt;") if escaped.startswith(e, at))
            shown.append({"&amp;": "&", "&lt;": "<", "&gt;": ">"}[entity])
            at += len(entity)
            continue
        assert char not in "<>[]*_|`~$#!", (char, escaped)
        assert not (char == ":" and escaped.startswith("//", at + 1)), escaped  # autolink
        assert not (char == "." and escaped[max(0, at - 3) : at].lower() == "www"), escaped
        shown.append(char)
        at += 1
    return "".join(shown)


_TEXT = st.lists(
    st.characters(codec="utf-8")
    | st.sampled_from(list("<>&[]()*_`|\\#!~$:/.-+=0123456789 \n\r\t\x1b\u202e\udcff"))
    | st.sampled_from(["<!--", "-->", "http://", "www.", "&amp;", "&#60;", "1. ", "- "]),
    max_size=30,
).map("".join)


@settings(max_examples=examples(500), deadline=None)
@given(_TEXT)
def test_markdown_cell_is_shown_as_the_one_line_text(text: str) -> None:
    assert _shown(markdown_cell(text)) == one_line(text)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"),
        ("a|b", "a\\|b"),
        ("<!-- x -->", "&lt;\\!-- x --&gt;"),
        ("[l](http://e)", "\\[l\\](http\\://e)"),
        ("**b** _i_ `c` ~~s~~ $m$", "\\*\\*b\\*\\* \\_i\\_ \\`c\\` \\~\\~s\\~\\~ \\$m\\$"),
        ("- item", "\\- item"),
        ("12. x", "12\\. x"),
        ("1.03×", "1.03×"),
        ("a\nb\\c", "a\\\\nb\\\\c"),
        ("www.x.org & co", "www\\.x.org &amp; co"),
    ],
)
def test_markdown_cell_examples(text: str, written: str) -> None:
    assert markdown_cell(text) == written


def test_xml_text_keeps_every_character_xml_can_hold() -> None:
    assert xml_text("a\uffffb\ufffe\x00\n") == "a\\uffffb\\ufffe\\x00\\n"
    assert xml_text("é & <ok> \ufffd") == "é & <ok> \ufffd"


# ------------------------------------------------------------------ hostile records


def _hostile(records: list[dict[str, Any]], text: str = HOSTILE) -> list[dict[str, Any]]:
    """The records, in order, with every free-text field the schema allows set to
    ``text`` (the kernel, a slug, gets ``_``s), digests recomputed and the runs'
    references moved."""
    moved: dict[str, str] = {}
    out = []
    for original in records:
        record = json.loads(json.dumps(original))
        kind, spec = record["kind"], record["spec"]
        record["metadata"]["title"] = text
        if kind == "ExecutionEnvironment":
            spec["hardware"].update(product=f"NVIDIA {text}", formFactor=text, deviceName=text)
        elif kind == "Workload":
            spec["kernel"] = f"x_{spec['kernel']}_"
            spec["parameters"]["mode"] = text
        elif kind == "Implementation":  # (the provider stays: it names the baseline)
            if "package" in spec:
                spec["package"]["version"] = text
        elif kind == "BenchmarkRun" and "reason" in spec:
            spec["reason"] = text
        if kind != "BenchmarkRun":
            moved[digest(original)] = digest(record)
        out.append(record)
    for record in out:
        if record["kind"] == "BenchmarkRun":
            spec = record["spec"]
            spec.update({k: moved[v] for k, v in spec.items() if isinstance(v, str) and v in moved})
    return out


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


def _write(folder: Path, records: list[dict[str, Any]], name: str = "in[put]_*.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    checked = run_subprocess(["validate", "--strict-refs", path])
    assert checked.exit_code == 0, checked.output  # hostile, and still valid
    return path


def _slower(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same runs measured twice as slow (new run names, same everything else)."""
    out = json.loads(json.dumps(records))
    for record in out:
        if record["kind"] != "BenchmarkRun":
            continue
        record["metadata"]["name"] += "-again"
        timing = record["spec"].get("timing", {}).get("latencyNs")
        if timing:
            record["spec"]["timing"]["latencyNs"] = {k: v * 2 for k, v in timing.items()}
        for measurement in record["spec"].get("measurements", ()):
            measurement["value"] *= 2
    return out


#: Our own HTML: ``compare --against``'s folded sections, each at a line's start.
_OWN_TAGS = re.compile(r"^(?:<details><summary>[^<>]*</summary>|</details>)", re.MULTILINE)


def _assert_inert(page: str) -> None:
    """The hostile text is in the page, and only as text."""
    assert ESCAPED in page, page
    assert "&amp;amp; &lt;img src=x&gt;" in page
    for raw in RAW:
        assert raw not in _OWN_TAGS.sub("", page), (raw, page)
    assert "<" not in _OWN_TAGS.sub("", page), page


def _compare(*args: str | Path) -> str:
    done = run_subprocess(["compare", *args, "--format", "markdown"])
    assert done.exit_code in (0, 1), done.output
    return done.stdout


def test_compare_tables_show_hostile_names_as_text(tmp_path: Path) -> None:
    records = _write(tmp_path / "oom", _hostile(_read(COMPARE / "oom" / "records.jsonl")))
    _assert_inert(_compare(records))
    _assert_inert(_compare(records, "--all"))


def test_compare_sweep_tables_show_hostile_names_as_text(tmp_path: Path) -> None:
    records = _write(tmp_path / "sweep", _hostile(_read(COMPARE / "sweep" / "records.jsonl")))
    page = _compare(records)
    assert "fixed " in page and "| seq |" in page  # the sweep's own table
    _assert_inert(page)


def test_compare_summary_shows_hostile_names_as_text(tmp_path: Path) -> None:
    records = _write(tmp_path / "sweep", _hostile(_read(COMPARE / "sweep" / "records.jsonl")))
    page = _compare(records, "--summary")
    assert page.startswith("| gpu | metric | baseline |")
    _assert_inert(page)


def _before_after(
    tmp_path: Path, text: str = HOSTILE, name: str = "in[put]_*.jsonl"
) -> tuple[Path, Path]:
    """Reference and candidate files (``name``): the candidate twice as slow, and one of
    its runs has no reference (unpaired)."""
    reference = _hostile(_read(COMPARE / "sweep" / "records.jsonl"), text)
    runs = [r for r in reference if r["kind"] == "BenchmarkRun"]
    candidate = _slower(reference)
    kept = [r for r in reference if r is not runs[0]]
    return _write(tmp_path / "ref", kept, name), _write(tmp_path / "cand", candidate, name)


def test_compare_against_shows_hostile_names_as_text(tmp_path: Path) -> None:
    reference, candidate = _before_after(tmp_path)
    page = _compare("--against", reference, candidate)
    assert page.startswith("### ❌ Before/after: ")
    assert "unpaired candidate runs</summary>" in page
    _assert_inert(page)


#: Breaks a workflow command (``,`` ``:`` ``%`` end or encode properties, a newline ends
#: the command) or an XML document (U+FFFF).
_CI_HOSTILE = "x,y:z%25\n::warning::forged\uffff"


def test_compare_against_github_and_junit_escape_what_they_carry(tmp_path: Path) -> None:
    reference, candidate = _before_after(tmp_path, _CI_HOSTILE, name="c,d:e%.jsonl")
    github = run_subprocess(["compare", "--against", reference, candidate, "--format", "github"])
    lines = github.stdout.splitlines()
    annotations = [line for line in lines if line.startswith("::")]
    assert annotations and len(lines) == len(annotations) + 1  # and the summary line
    for line in annotations:
        command, _, message = line.partition("::")[2].partition("::")
        level, _, properties = command.partition(" ")
        assert level in ("error", "warning")
        fields = dict(field.split("=", 1) for field in properties.split(","))
        assert fields["file"].endswith("/cand/c%2Cd%3Ae%25.jsonl")
        assert "x,y:z%2525%0A::warning::forged" in message
    junit = run_subprocess(
        ["compare", "--against", reference, candidate, "--format", "junit", "--fail-on", "slower"]
    )
    suite = ET.fromstring(junit.stdout_bytes.split(b"\n", 1)[1])  # well-formed XML
    text = ET.tostring(suite, encoding="unicode")
    assert "forged\\uffff" in text and "\uffff" not in text


def test_validate_junit_stays_xml_whatever_a_record_holds(tmp_path: Path) -> None:
    record = json.loads((ROOT / "tests" / "examples" / "invalid" / "bad-name.json").read_text())
    record["metadata"]["name"] = "x\uffffy"
    path = tmp_path / "bad\uffff.json"
    path.write_text(json.dumps(record, ensure_ascii=False), "utf-8")
    done = run_subprocess(["validate", "--format", "junit", path])
    assert done.exit_code == 1
    root = ET.fromstring(done.stdout_bytes)
    (failure,) = root.iter("failure")
    assert "'x\\uffffy' does not match" in (failure.get("message") or "")
    (case,) = root.iter("testcase")
    assert "bad\\uffff.json" in (case.get("name") or "")


def test_seed_table_markdown_shows_hostile_names_as_text(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for path in sorted(SEEDS.glob("*.json")):
        bundle = json.loads(path.read_text("utf-8"))
        keys = [key for key in bundle if key != "run"] + ["run"]
        hostile = _hostile([bundle[key] for key in keys])
        (seeds / path.name).write_text(json.dumps(dict(zip(keys, hostile, strict=True))), "utf-8")
    assert run_subprocess(["validate", seeds]).exit_code == 0
    done = subprocess.run(
        [str(ROOT / "scripts" / "seed-table"), str(seeds), "--format", "markdown"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHON": sys.executable},
        timeout=120,
        check=False,
    )
    assert_no_traceback(done.stderr)
    assert done.returncode == 0, done.stderr
    assert "NVIDIA H100 &lt;/details&gt;" in done.stdout or "NVIDIA A100" in done.stdout
    assert "&lt;/details&gt;&lt;/table&gt;&lt;\\!--" in done.stdout
    for raw in RAW:
        assert raw not in done.stdout


@pytest.mark.parametrize(
    "view",
    variants(
        [[], ["--plot-ratios"], ["--plot-speedups"]], quick={0}, ids=["plain", "ratios", "speedups"]
    ),
)
def test_compare_plot_draws_a_hostile_title_as_text(tmp_path: Path, view: list[str]) -> None:
    """A ``$`` pair in a record's text is not mathtext: ``$\\frac`` unfinished or an
    unknown command would end the drawing with matplotlib's parse error."""
    pytest.importorskip("matplotlib")
    text = "H100 $\\undefinedcommand{x}$ $\\frac{1}"
    records = _write(tmp_path / "sweep", _hostile(_read(COMPARE / "sweep" / "records.jsonl"), text))
    plot = tmp_path / "plot.png"
    done = run_subprocess(["compare", records, "--plot", plot, *view])
    assert done.exit_code in (0, 1), done.output
    assert plot.stat().st_size > 0
