"""``compare --across gpu``: runs that differ only in their GPU, paired and judged as
``--against`` pairs and judges them.

On nvbench's two-GPU sample (``shared/``, skipped where absent), through the real
command: one pair per measured state, in every format, and ``--summary`` over them. On
generated records: the pairing (each other GPU against the reference GPU; with
``--against``, the two sides on any GPU), the usage errors, and escaping of what the
records name.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import shared_data
from beforeafter_records import GPUS, RunSpec, records_for, resolved, write_jsonl

from kernelindex_sdk.canonical import digest
from kernelindex_sdk.cli.compare_cmd import run_compare
from kernelindex_sdk.cli.compare_options import CompareOptions
from kernelindex_sdk.compare.beforeafter import FASTER, SLOWER, before_after, pair_gpu
from kernelindex_sdk.compare.summary import summarize_pairs

KERNELINDEX = (sys.executable, "-m", "kernelindex_sdk.cli.main")
GP100, GV100 = "NVIDIA Quadro GP100", "NVIDIA Quadro GV100"


def one(**fields: Any) -> list[dict[str, Any]]:
    return records_for(RunSpec(**fields))


def command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*KERNELINDEX, "compare", *args], capture_output=True, text=True, encoding="utf-8"
    )


# --------------------------------------------------------------------------- nvbench


@pytest.fixture(scope="module")
def nvbench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """nvbench's two-GPU sample (Quadro GV100 and GP100, 63 states each) imported."""
    sample = shared_data.require("nvbench", "test_ref.json")
    out = tmp_path_factory.mktemp("nvbench")
    subprocess.run(
        [*KERNELINDEX, "import", "nvbench", str(sample), "--out", str(out), "--layout", "jsonl"],
        check=True,
        capture_output=True,
    )
    return out


def test_nvbench_one_pair_per_measured_state(nvbench: Path) -> None:
    done = command("--across", "gpu", str(nvbench), "--format", "json")
    assert done.returncode == 1, done.stderr  # one state slower on the GV100
    report = json.loads(done.stdout)
    pairs = report["pairs"]
    assert len(pairs) == 63 and report["unpaired"] == {"reference": [], "candidate": []}
    assert len({p["workloadDigest"] for p in pairs}) == 63
    for pair in pairs:
        assert (pair["reference"]["gpu"], pair["candidate"]["gpu"]) == (GP100, GV100)
    summary = report["summary"]
    assert summary["across"] == "gpu" and summary["ratioDirection"] == "candidate / reference"
    assert summary["verdicts"] == {"slower": 1, "unsure": 0, "faster": 27, "same": 35}
    assert f"note: reference GPU {GP100} (the first by name" in done.stderr
    assert "paired by lineage across GPUs" in done.stderr.splitlines()[-1]


def test_nvbench_the_reference_gpu_is_chosen(nvbench: Path) -> None:
    """Against the GV100, nvbench's ``Duration=0`` state (3.92 µs ± 14.1 %, 127,488
    samples) is 22 % faster on the GP100; the verdicts mirror the other way round."""
    done = command("--across", "gpu", str(nvbench), "--reference-gpu", "gv100", "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["summary"]["verdicts"] == {"slower": 27, "unsure": 0, "faster": 1, "same": 35}
    [zero] = [p for p in report["pairs"] if p["workload"].startswith("duration=0.0,")]
    assert zero["verdict"] == FASTER and zero["ratio"] == pytest.approx(0.7794, abs=1e-4)
    assert zero["reference"]["gpu"] == GV100 and zero["reference"]["noise"]["samples"] == 127_488
    assert "note: reference GPU" not in done.stderr


def test_nvbench_every_format(nvbench: Path) -> None:
    base = ("--across", "gpu", str(nvbench))
    text = command(*base).stdout
    assert f"{GP100} → {GV100}" in text and text.count("\nSAME ") == 35
    assert text.splitlines()[-1].startswith("63 pairs: 1 slower, 0 unsure, 27 faster, 35 same")
    markdown = command(*base, "--format", "markdown").stdout
    assert "ratio (candidate ÷ reference)" in markdown and f"{GP100} → {GV100}" in markdown
    rows = list(csv.DictReader(io.StringIO(command(*base, "--format", "csv").stdout)))
    assert len(rows) == 63 and {(r["reference_gpu"], r["gpu"]) for r in rows} == {(GP100, GV100)}
    github = command(*base, "--format", "github").stdout.splitlines()
    assert len([line for line in github if line.startswith("::error ")]) == 1
    suite = ET.fromstring(command(*base, "--format", "junit").stdout)
    cases = suite.findall(".//testcase")
    assert len(cases) == 63 and len(suite.findall(".//failure")) == 1
    assert all(f"{GP100} → {GV100}" in case.get("classname", "") for case in cases)


def test_nvbench_summary_across_gpus(nvbench: Path) -> None:
    done = command("--across", "gpu", str(nvbench), "--summary", "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    [line] = report["summaries"]
    assert line["gpu"] == f"{GP100} → {GV100}" and line["candidateHardware"] != line["hardware"]
    assert line["pairs"] == 63 and line["workloads"] == line["universe"] == 44
    assert (line["faster"], line["slower"]) == (27, 1)
    assert line["geomeanRatio"] == report["overall"]["geomeanRatio"]
    assert f"geomean ratio {line['geomeanRatio']:.3f}×" in done.stderr.splitlines()[-1]
    for fmt in ("text", "markdown", "csv"):
        shown = command("--across", "gpu", str(nvbench), "--summary", "--format", fmt)
        assert shown.returncode == 1 and f"{GP100} → {GV100}" in shown.stdout


def test_nvbench_split_by_gpu_pairs_with_against_across(nvbench: Path, tmp_path: Path) -> None:
    """The issue's own attempt: nvbench's file split by device. ``--against`` alone
    pairs nothing; with ``--across gpu``, one pair per state."""
    [path] = nvbench.glob("*.jsonl")
    records = [json.loads(line) for line in path.open(encoding="utf-8")]
    envs = {r["metadata"]["name"]: r for r in records if r["kind"] == "ExecutionEnvironment"}
    assert len(envs) == 2
    for name in envs:
        others = {digest(e) for n, e in envs.items() if n != name}  # the other device's runs
        kept = [
            r
            for r in records
            if r["kind"] != "BenchmarkRun" or r["spec"]["environmentDigest"] not in others
        ]
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8"
        )
    first, second = sorted(tmp_path.glob("*.jsonl"))
    alone = command("--against", str(first), str(second), "--format", "json")
    assert alone.returncode == 1 and json.loads(alone.stdout)["pairs"] == []
    across = command("--against", str(first), str(second), "--across", "gpu", "--format", "json")
    assert len(json.loads(across.stdout)["pairs"]) == 63


# --------------------------------------------------------------------------- generated


def test_each_other_gpu_pairs_with_the_reference_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(GPUS, "l4", {"vendor": "nvidia", "product": "NVIDIA L4"})
    ref = resolved([one(seq=1, gpu="h100"), one(seq=2, gpu="h100")])
    cand = resolved(
        [
            one(seq=1, gpu="a100", value=200_000),
            one(seq=1, gpu="l4", value=50_000),
            one(seq=3, gpu="l4"),
        ]
    )
    result = before_after(ref, cand, across="gpu")
    assert sorted((pair_gpu(p), p.verdict) for p in result.pairs) == [
        ("NVIDIA H100 80GB HBM3 → NVIDIA A100 SXM4-80GB", SLOWER),
        ("NVIDIA H100 80GB HBM3 → NVIDIA L4", FASTER),
    ]
    assert [u.run.workload.parameters["seq"] for u in result.unpaired_reference] == [2]
    [lonely] = result.unpaired_candidate
    assert lonely.run.workload is not None and lonely.run.workload.parameters["seq"] == 3
    # Its near miss is another shape on the reference GPU, said as --explain says it.
    assert lonely.near is not None and lonely.near.gpu == "NVIDIA H100 80GB HBM3"
    assert [d.part for d in lonely.differences] == ["workload", "environment hardware"]
    assert before_after(ref, cand).pairs == ()  # without across: another GPU never pairs


def test_a_summary_across_gpus_has_a_line_per_gpu_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each candidate GPU is its own line; a reference run no GPU measured is missing
    from every line of its GPU."""
    monkeypatch.setitem(GPUS, "l4", {"vendor": "nvidia", "product": "NVIDIA L4"})
    ref = resolved([one(seq=1, gpu="h100"), one(seq=2, gpu="h100")])
    cand = resolved([one(seq=1, gpu="a100", value=200_000), one(seq=1, gpu="l4")])
    lines = summarize_pairs(before_after(ref, cand, across="gpu"))
    assert [(s.gpu, s.pairs, s.slower, s.universe, s.absent) for s in lines] == [
        ("NVIDIA H100 80GB HBM3 → NVIDIA A100 SXM4-80GB", 1, 1, 2, 1),
        ("NVIDIA H100 80GB HBM3 → NVIDIA L4", 1, 0, 2, 1),
    ]
    assert lines[0].geomean == pytest.approx(2.0) and lines[1].geomean == 1.0


@pytest.fixture
def two_gpus(tmp_path: Path) -> Path:
    write_jsonl(
        tmp_path / "runs.jsonl",
        [one(seq=1, gpu="h100"), one(seq=1, gpu="a100", value=150_000)],
    )
    return tmp_path / "runs.jsonl"


def across(path: Path, **options: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    given = {"across": "gpu", **options}
    status = run_compare(CompareOptions((str(path),), **given), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def test_the_first_gpu_by_name_is_the_reference_unless_chosen(two_gpus: Path) -> None:
    status, out, err = across(two_gpus, format="json")
    [pair] = json.loads(out)["pairs"]
    assert pair["reference"]["gpu"] == "NVIDIA A100 SXM4-80GB" and pair["verdict"] == FASTER
    assert status == 0 and "note: reference GPU NVIDIA A100 SXM4-80GB" in err
    status, out, err = across(two_gpus, format="json", reference_gpu="h100")
    [pair] = json.loads(out)["pairs"]
    assert pair["reference"]["gpu"] == "NVIDIA H100 80GB HBM3" and pair["verdict"] == SLOWER
    assert status == 1 and "note:" not in err


@pytest.mark.parametrize(
    ("options", "status", "message"),
    [
        (
            {"reference_gpu": "b200"},
            2,
            "--reference-gpu 'b200' matches nothing in the input; present: NVIDIA A100",
        ),
        ({"reference_gpu": "nvidia"}, 2, "--reference-gpu 'nvidia' names 2 GPUs"),
        ({"gpus": ("h100",)}, 1, "--across gpu needs runs on two GPUs or more"),
        ({"baseline": "liger"}, 2, "--baseline does not apply with --across"),
        ({"across": None, "reference_gpu": "h100"}, 2, "--reference-gpu applies with --across"),
        ({"against": ("x",), "reference_gpu": "h100"}, 2, "--reference-gpu applies with --across"),
    ],
)
def test_usage(two_gpus: Path, options: dict[str, Any], status: int, message: str) -> None:
    found, out, err = across(two_gpus, **options)
    assert (found, out) == (status, "")
    assert message in err and len(err.splitlines()) == 1, err


def test_the_command_line_spelling(two_gpus: Path) -> None:
    done = command("--across", "gpu", str(two_gpus), "--reference-gpu", "a100")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("FASTER    0.667×  geglu · forward · latency · NVIDIA A100")
    wrong = command("--across", "cpu", str(two_gpus))
    assert wrong.returncode == 2 and "'cpu' is not 'gpu'" in wrong.stderr


def test_gpu_names_are_escaped_in_every_format(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    evil = "H100 </details><!-- [x](http://evil) **y**\n::error ::z"
    monkeypatch.setitem(GPUS, "evil", {"vendor": "nvidia", "product": evil})
    write_jsonl(
        tmp_path / "runs.jsonl", [one(seq=1, gpu="h100"), one(seq=1, gpu="evil", value=300_000)]
    )
    path = tmp_path / "runs.jsonl"
    _, markdown, _ = across(path, format="markdown", reference_gpu="h100")
    assert "</details><!--" not in markdown and "[x](http://evil)" not in markdown
    _, github, _ = across(path, format="github", reference_gpu="h100")
    assert all(line.startswith(("::error ", "::warning ")) for line in github.splitlines()[:-1])
    assert "\n::error ::z" not in github
    _, summary, _ = across(path, format="markdown", summary=True, reference_gpu="h100")
    assert "</details><!--" not in summary
    _, text, _ = across(path, reference_gpu="h100")
    assert "\n::error ::z" not in text
