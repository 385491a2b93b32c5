"""Issue #15 on a CPU: what makes a short GPU window safe to spend on ``bench liger``.

* missing dependencies are said up front, in one line, with exit 2, before anything
  runs or is written; a missing driver version is warned about; the device is
  described once;
* the seeds' workload digests are not ours, so the seeds are put beside our runs by
  kernel, pass and shape (``scripts/seed-table``), tested with synthetic H200 records;
* the first (correctness-check) call is timed apart and recorded, also for a run that
  fails after it;
* ``scripts/device-gpu-check`` packs its log and records into one archive whatever
  happens: a missing CUDA, a stall stopped by its timeout.

Device, timer and kernels are the stand-ins of ``test_liger_bench``; no torch needed.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
import types
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest
from test_liger_bench import (
    H200,
    REPO,
    SEED_SLUGS,
    FakeBackend,
    FakeDevice,
    FakeTimer,
    make_tools,
    seed_item,
)

import kernelindex_sdk as ki
from bench_adapters.bench_cli import BenchLigerOptions, run_bench_liger
from bench_adapters.liger.catalog import load_catalog
from bench_adapters.liger_bench import seed_table
from bench_adapters.liger_bench.assemble import Assembler, protocol_record
from bench_adapters.liger_bench.bench import (
    BenchSettings,
    device_warnings,
    missing_dependencies,
    run_bench,
)
from bench_adapters.liger_bench.catalog import load_bench_catalog
from bench_adapters.liger_bench.plan import seed_request
from bench_adapters.liger_bench.probes import CudaDevice, DeviceInfo, TimerSettings
from bench_adapters.liger_bench.runner import Runner
from bench_adapters.recording import environment

SEEDS = REPO / "tests" / "examples" / "valid" / "seeds"
#: An hour after the stand-in clock's FIXED_NOW: a re-run (never in the future: that is invalid).
LATER = datetime(2026, 11, 29, 13, 0, tzinfo=timezone.utc)
NO_LIGER = "module 'liger_kernel' is not installed"
NO_TRANSFORMERS = "module 'transformers' is not installed"


def _cli(tmp_path: Path, backend: FakeBackend, **changes: Any) -> tuple[int, str, str]:
    options = attrs.evolve(
        BenchLigerOptions(kernels=("relu_squared",), x_values=(512,), passes=("backward",)),
        out=str(tmp_path / "out"),
        **changes,
    )
    out, err = io.StringIO(), io.StringIO()
    status = run_bench_liger(
        options, tools_factory=lambda settings: make_tools(backend), out=out, err=err
    )
    return status, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- dependencies


def test_a_missing_liger_is_exit_2_before_anything_runs(tmp_path: Path) -> None:
    backend = FakeBackend(missing={"liger": NO_LIGER})
    status, _, err = _cli(tmp_path, backend)
    assert status == 2
    assert err == (
        f"kernelindex bench liger: missing dependencies: {NO_LIGER}, needed by liger "
        "(relu_squared) (pip install liger-kernel triton torch); or leave a provider out "
        "with --provider\n"
    )
    assert backend.prepared == [] and not (tmp_path / "out").exists()


def test_a_missing_transformers_is_exit_2_unless_its_providers_are_left_out(
    tmp_path: Path,
) -> None:
    backend = FakeBackend(missing={"huggingface": NO_TRANSFORMERS})
    status, _, err = _cli(tmp_path, backend, kernels=("geglu", "llama4_rope"), x_values=())
    assert status == 2
    assert f"{NO_TRANSFORMERS}, needed by huggingface (geglu), huggingface (llama4_rope)" in err
    assert "(pip install transformers)" in err and len(err.splitlines()) == 1
    status, out, err = _cli(
        tmp_path, backend, kernels=("geglu",), x_values=(1024,), providers=("liger", "torch")
    )
    assert status == 0, err
    assert "2 runs written" in out and "2 passed" in out


def test_a_checked_provider_without_any_reference_is_exit_2(tmp_path: Path) -> None:
    backend = FakeBackend(missing={"torch": "module 'torch' is not installed"})
    status, _, err = _cli(tmp_path, backend, providers=("liger",))
    assert status == 2
    assert "no reference to check against (torch: module 'torch' is not installed)" in err


def test_missing_dependencies_is_none_when_everything_imports() -> None:
    items = seed_request(load_bench_catalog())
    assert missing_dependencies(items, FakeBackend()) is None


def test_gpu_check_says_what_is_missing_and_writes_nothing(tmp_path: Path) -> None:
    from bench_adapters.liger_bench.gpu_check import check

    err = io.StringIO()
    backend = FakeBackend(missing={"liger": NO_LIGER, "huggingface": NO_TRANSFORMERS})
    out_dir = tmp_path / "o"
    status = check(["--out", str(out_dir)], tools=make_tools(backend), out=io.StringIO(), err=err)
    assert status == 2
    (line,) = err.getvalue().splitlines()
    assert line.startswith(f"gpu-check: missing dependencies: {NO_LIGER}, needed by liger (")
    assert "pip install liger-kernel triton torch; pip install transformers" in line
    assert not out_dir.exists() and backend.prepared == []


# --------------------------------------------------------------------------- the device


NO_DRIVER = DeviceInfo(
    name=H200.name,
    capability=H200.capability,
    memory_bytes=H200.memory_bytes,
    software={k: v for k, v in H200.software.items() if k != "driver"},
    notes=(
        "the NVIDIA driver version could not be read (NVML: ImportError: pynvml; "
        "nvidia-smi: TimeoutExpired: timed out); the environment record is written without it",
    ),
)


def test_a_record_without_a_driver_version_is_warned_about(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    options = BenchLigerOptions(
        kernels=("relu_squared",), x_values=(512,), passes=("backward",), out=str(tmp_path)
    )
    device = FakeDevice(NO_DRIVER)
    status = run_bench_liger(
        options, tools_factory=lambda s: make_tools(device=device), out=out, err=err
    )
    assert status == 0
    assert err.getvalue() == f"kernelindex bench liger: warning: {NO_DRIVER.notes[0]}\n"
    assert device.described == 1
    for path in tmp_path.iterdir():
        bundle = ki.load_file(path)
        assert ki.validate(bundle) == []
        assert "driver" not in bundle["environment"]["spec"]["software"]
        # bench liger writes provenance: what it lacks is listed as unknown, with why.
        origins = bundle["environment"]["spec"]["provenance"]
        assert origins["/software/driver"]["origin"] == "unknown"
        assert origins["/hardware/deviceName"]["detail"].startswith("probed: ")
    bare = attrs.evolve(NO_DRIVER, notes=())
    assert device_warnings(bare) == [
        "the NVIDIA driver version could not be read; the environment record is written without it"
    ]
    assert device_warnings(H200) == []


def test_gpu_check_warns_about_a_missing_driver_version(tmp_path: Path) -> None:
    from bench_adapters.liger_bench.gpu_check import check

    err = io.StringIO()
    status = check(
        ["--out", str(tmp_path), "--seeds", str(SEEDS)],
        tools=make_tools(device=FakeDevice(NO_DRIVER)),
        out=io.StringIO(),
        err=err,
    )
    assert status == 0
    assert err.getvalue().startswith(f"gpu-check: warning: {NO_DRIVER.notes[0]}\n")


def _no_nvml() -> Any:
    raise ImportError("no pynvml")


def _hung(argv: Any) -> str:
    raise subprocess.TimeoutExpired(argv, environment.NVIDIA_SMI_TIMEOUT_S)


def _fake_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    props = types.SimpleNamespace(name="NVIDIA H200", major=9, minor=0, total_memory=42)
    fake_torch = types.SimpleNamespace(
        cuda=types.SimpleNamespace(get_device_properties=lambda index: props),
        version=types.SimpleNamespace(cuda="13.0"),
    )
    monkeypatch.setattr(CudaDevice, "_torch", lambda self: fake_torch)


def test_cuda_device_is_described_once_and_says_why_the_driver_is_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[int] = []

    def smi(argv: Any) -> str:
        asked.append(1)
        return _hung(argv)

    _fake_torch(monkeypatch)
    sources = environment.Sources(
        nvml=_no_nvml, nvidia_smi=smi, torch=lambda index: {"cuda": "13.0"}
    )
    device = CudaDevice(sources=sources)
    first, second = device.describe(), device.describe()
    assert first is second and asked == [1]
    assert first.architecture == "sm_90" and first.software["cuda"] == "13.0"
    assert "driver" not in first.software
    assert first.notes[-1].startswith(
        "the NVIDIA driver version could not be read (no NVIDIA driver answered: "
        "NVML: ImportError: no pynvml; nvidia-smi: TimeoutExpired: "
    )
    assert first.notes[-1].endswith("the environment record is written without it")
    assert environment.NVIDIA_SMI_TIMEOUT_S <= 10


def test_cuda_device_goes_through_the_environment_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """One path: `bench liger`'s environment is `kernelindex env`'s, with provenance."""
    from nvml_fake import FakeNvml

    from bench_adapters.liger.catalog import load_catalog
    from bench_adapters.liger_bench.assemble import environment_record

    _fake_torch(monkeypatch)
    nvml = FakeNvml.from_file("h100-sxm-nvml.json")
    device = CudaDevice(sources=environment.Sources(nvml=lambda: nvml, nvidia_smi=_hung))
    info = device.describe()
    assert info.software["driver"] == "550.90.07" and info.notes == ()
    record = environment_record(info, load_catalog())
    assert ki.validate(record) == []
    assert record["spec"]["hardware"]["powerLimitMilliwatts"] == 700_000
    assert record["spec"]["provenance"]["/software/driver"]["detail"] == (
        "probed: NVML nvmlSystemGetDriverVersion"
    )


# --------------------------------------------------------------------------- first call


def test_a_run_that_fails_after_its_first_call_still_records_that_call() -> None:
    timer = FakeTimer()
    timer.raise_for["liger"] = RuntimeError("do_bench broke")
    outcome = Runner(make_tools(timer=timer)).run_one(seed_item("distill_cosine_loss"), "liger")
    gate = {"gate_atol": 0.05, "gate_rtol": 0.05, "gate_max_abs_error": 0.0}
    native = {"first_call_ms": 1500.0, **gate, "gate_max_error_ratio": 0.0}
    assert outcome.status == "failed" and outcome.native == native
    bundle = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0").bundle(outcome)
    assert ki.validate(bundle) == []
    assert bundle["run"]["spec"]["sourceNative"]["metrics"] == native
    notes = protocol_record("speed", "full", TimerSettings(), 10, "0.1.0")["spec"]
    assert "sourceNative.metrics.first_call_ms" in notes["comparability"]["notes"]


def test_the_compiling_kernel_is_marked_and_planned_last() -> None:
    catalog = load_bench_catalog()
    assert [k.name for k in catalog.kernels.values() if k.compiles_on_first_call] == [
        "distill_cosine_loss"
    ]
    assert catalog.kernels["distill_cosine_loss"].providers["liger"].compiles_on_first_call
    names = [item.workload.kernel.name for item in seed_request(catalog)]
    assert names[-1] == "distill_cosine_loss" and len(names) == 4


# --------------------------------------------------------------------------- beside the seeds


def _seed_runs() -> dict[str, dict[str, Any]]:
    runs = {}
    for path in sorted(SEEDS.glob("*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))["run"]
        runs[run["spec"]["sourceNative"]["benchmark"].split("/")[0]] = run
    return runs


def test_the_seeds_workload_digests_are_not_ours() -> None:
    """The seeds' Workload records were never published: same shape, another digest,
    so ``compare`` cannot group the seeds with our runs (docs/bench-liger.md says so)."""
    seeds = _seed_runs()
    assembler = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0")
    for kernel, seed in seeds.items():
        ours = assembler.bundle(Runner(make_tools()).run_one(seed_item(kernel), "liger"))
        assert ours["run"]["spec"]["workloadDigest"] != seed["spec"]["workloadDigest"]
        assert (
            f"/{ours['workload']['metadata']['title'].split(' · ')[-1]}/"
            in (seed["spec"]["sourceNative"]["externalId"])
        )  # ... but the same kernel, pass and shape


def _h200_records(out: Path, liger_ms: float = 0.5) -> None:
    catalog = load_bench_catalog()
    tools = make_tools(timer=FakeTimer({"liger": (liger_ms, liger_ms * 0.9, liger_ms * 1.1)}))
    run_bench(seed_request(catalog), catalog, out, tools, BenchSettings())


def test_seed_table_puts_synthetic_h200_runs_beside_the_seeds(tmp_path: Path) -> None:
    _h200_records(tmp_path)
    loaded = seed_table.collect([str(SEEDS), str(tmp_path)])
    assert (loaded.invalid, loaded.unreadable, loaded.unplaced) == (0, 0, 0)
    table = [seed_table.cells(row) for row in loaded.rows]
    assert [(c[0], c[4], c[5]) for c in table] == [
        ("distill_cosine_loss", "NVIDIA A100 SXM4-80GB", "Liger CSV"),
        ("distill_cosine_loss", "NVIDIA H200", "kernelindex bench liger · upstream call"),
        ("geglu", "NVIDIA A100 SXM4-80GB", "Liger CSV"),
        ("geglu", "NVIDIA H200", "kernelindex bench liger · upstream call"),
        ("llama4_rope", "NVIDIA H100 80GB HBM3", "Liger CSV"),
        ("llama4_rope", "NVIDIA H200", "kernelindex bench liger · upstream call"),
        ("relu_squared", "NVIDIA H100 80GB HBM3", "Liger CSV"),
        ("relu_squared", "NVIDIA H200", "kernelindex bench liger · upstream call"),
    ]
    by_kernel = {(c[0], c[5]): c for c in table}
    assert by_kernel[("relu_squared", "Liger CSV")] == [
        "relu_squared", "backward", SEED_SLUGS["relu_squared"], "latency",
        "NVIDIA H100 80GB HBM3", "Liger CSV", "0.7.0", "0.01056 ms", "–", "–", "–",
    ]  # fmt: skip
    assert by_kernel[("distill_cosine_loss", "kernelindex bench liger · upstream call")] == [
        "distill_cosine_loss", "full", SEED_SLUGS["distill_cosine_loss"], "latency",
        "NVIDIA H200", "kernelindex bench liger · upstream call", "0.8.5", "0.5 ms", "torch",
        "2 ms", "4.00×",
    ]  # fmt: skip
    assert {c[2] for c in table} == set(SEED_SLUGS.values())  # one shape per kernel


def test_seed_table_takes_the_newest_run_and_shows_a_failure_as_its_status(
    tmp_path: Path,
) -> None:
    older, newer = tmp_path / "older", tmp_path / "newer"
    _h200_records(older, liger_ms=1.0)
    catalog = load_bench_catalog()
    later = make_tools(backend=FakeBackend(outputs={"liger": [9.0, 9.0, 9.0]}))
    later.clock = lambda: LATER
    item = next(i for i in seed_request(catalog) if i.workload.kernel.name == "geglu")
    run_bench([item], catalog, newer, later, BenchSettings())
    rows = seed_table.collect([str(older), str(newer)]).rows
    cells = {row.kernel: seed_table.cells(row) for row in rows}
    assert cells["geglu"][7:] == ["failed", "huggingface", "2 ms", "–"]
    assert cells["relu_squared"][7:] == ["1 ms", "torch", "2 ms", "2.00×"]


def test_seed_table_cli_formats_reports_and_exit_status(tmp_path: Path) -> None:
    _h200_records(tmp_path / "runs")
    out, err = io.StringIO(), io.StringIO()
    status = seed_table.main(
        [str(SEEDS), str(tmp_path / "runs"), "--format", "markdown"], out=out, err=err
    )
    assert status == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    assert lines[0] == "| " + " | ".join(seed_table.HEADER) + " |"
    assert len(lines) == 2 + 8
    # An invalid record is reported as validate reports it, left out, and exit 1.
    bad = json.loads(next((tmp_path / "runs").glob("*.json")).read_text(encoding="utf-8"))
    bad["run"]["spec"]["status"] = "maybe"
    (tmp_path / "bad.json").write_text(json.dumps(bad), encoding="utf-8")
    err = io.StringIO()
    assert seed_table.main([str(tmp_path / "bad.json")], out=io.StringIO(), err=err) == 1
    assert err.getvalue().startswith(str(tmp_path / "bad.json") + ": /run/spec/status: ")
    # A run that is no Liger run is counted, not placed; a missing path is exit 2.
    alien = json.loads(json.dumps(bad))
    alien["run"]["spec"]["status"] = "passed"
    alien["run"]["spec"]["sourceNative"] = {"source": "elsewhere"}
    (tmp_path / "alien.json").write_text(json.dumps(alien), encoding="utf-8")
    err = io.StringIO()
    assert seed_table.main([str(tmp_path / "alien.json")], out=io.StringIO(), err=err) == 0
    assert "1 run with no Liger benchmark id left out" in err.getvalue()
    assert seed_table.main([str(tmp_path / "nowhere")], out=io.StringIO(), err=err) == 2


def test_seed_table_usage_errors_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as caught:
        seed_table.main(["--format", "xml", str(SEEDS)])
    assert caught.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("seed-table: argument --format: invalid choice: 'xml'")


def test_seed_table_script_runs_from_a_checkout() -> None:
    result = subprocess.run(
        [str(REPO / "scripts" / "seed-table"), str(SEEDS), "--format", "markdown"],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "| geglu | backward | batch8-hidden4096-intermediate11008-seq4096-bf16 |" in (
        result.stdout
    )


def test_gpu_check_never_writes_an_invalid_record_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bundle that would not validate is refused before it is written (one line per
    problem), the sweep goes on with the next run, and the check fails (exit 1)."""
    from bench_adapters.liger_bench import assemble
    from bench_adapters.liger_bench.gpu_check import check

    made = assemble.Assembler.run_record

    def broken(self: Any, outcome: Any, refs: tuple[str, str, str, str]) -> dict[str, Any]:
        run = made(self, outcome, refs)
        if outcome.provider == "torch":
            run["spec"]["status"] = "maybe"
        return run

    monkeypatch.setattr(assemble.Assembler, "run_record", broken)
    out, err = io.StringIO(), io.StringIO()
    status = check(
        ["--out", str(tmp_path), "--seeds", str(SEEDS)], tools=make_tools(), out=out, err=err
    )
    assert status == 1
    problems = err.getvalue().splitlines()
    assert len(problems) == 2 and all(
        line.startswith("gpu-check: invalid record, not written: ") and "/run/spec/status" in line
        for line in problems
    )
    assert len(list(tmp_path.glob("*.json"))) == 6
    assert (
        out.getvalue()
        .rstrip()
        .endswith(
            "6 runs written under " + str(tmp_path) + ", 2 not written (invalid), "
            "6 files valid; 0 runs did not pass"
        )
    )


def test_gpu_check_usage_errors_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench_adapters.liger_bench.gpu_check import check

    with pytest.raises(SystemExit) as caught:
        check(["--bogus"], tools=make_tools())
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        "gpu-check: unrecognized arguments: --bogus (--help for usage)\n"
    )
    (tmp_path / "file").write_text("x")
    err = io.StringIO()
    status = check(["--out", str(tmp_path / "file")], tools=make_tools(), err=err)
    assert status == 2
    assert (
        err.getvalue() == f"gpu-check: --out {tmp_path / 'file'}: exists and is not a directory\n"
    )


# --------------------------------------------------------------------------- the device script


def _has_cuda() -> bool:
    probe = "import importlib.util as u, sys\n" + (
        "if u.find_spec('torch') is None: sys.exit(0)\n"
        "import torch\nsys.exit(3 if torch.cuda.is_available() else 0)\n"
    )
    return subprocess.run([sys.executable, "-c", probe], check=False).returncode == 3


def _device_check(out: Path, python: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REPO / "scripts" / "device-gpu-check")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"PYTHON": python, "PATH": "/usr/bin:/bin", "OUT": str(out), **env},
    )


def _archive(out: Path) -> dict[str, str]:
    with tarfile.open(out / "bench-liger.tgz") as archive:
        return {
            member.name: archive.extractfile(member).read().decode()  # type: ignore[union-attr]
            for member in archive.getmembers()
            if member.isfile()
        }


@pytest.mark.skipif(shutil.which("timeout") is None, reason="needs coreutils' timeout")
def test_device_script_packs_the_log_into_one_archive_even_without_cuda(tmp_path: Path) -> None:
    if _has_cuda():
        pytest.skip("this machine has CUDA")
    result = _device_check(tmp_path, sys.executable)
    assert result.returncode == 2, result.stdout + result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench-liger.tgz", "gpu-check.log"]
    files = _archive(tmp_path)
    assert sorted(files) == ["bench-liger/env.json", "bench-liger/gpu-check.log"]
    # kernelindex env's record of this machine comes back, valid; the kernel_bench
    # fixture's Triton check skips with its reason (no torch or no CUDA here).
    assert ki.validate(json.loads(files["bench-liger/env.json"])) == []
    log = files["bench-liger/gpu-check.log"]
    assert "gpu-check: " in log and ("torch is not installed" in log or "no CUDA" in log)
    assert "SKIPPED" in log and ("needs torch" in log or "no CUDA device" in log)
    # What could not be captured without a GPU (nvidia-smi, NVML, the launch probe)
    # leaves no file beside the records, empty or not: only the log says so.
    assert "nvidia-smi -q -x failed or timed out" in log
    assert "capturing NVML's answers failed or timed out" in log
    assert (tmp_path / "gpu-check.log").read_text(encoding="utf-8") == log


# It waits out a stalled check: slow; the quick run packs an archive without CUDA.
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("timeout") is None, reason="needs coreutils' timeout")
def test_device_script_stops_a_stalled_check_and_still_packs(tmp_path: Path) -> None:
    stalled = tmp_path / "python"
    stalled.write_text("#!/bin/sh\necho stalled run 1 of 8\nsleep 30\n", encoding="utf-8")
    stalled.chmod(0o755)
    out = tmp_path / "out"
    stalls = ("GPU_CHECK", "ENV", "RECORD", "NVML", "OVERHEAD")
    result = _device_check(
        out, str(stalled), **{f"{name}_TIMEOUT": "0.5" for name in stalls}
    )  # timeout(1) takes fractions: five stalls of half a second, not of one
    assert result.returncode == 124, result.stdout + result.stderr
    files = _archive(out)
    log = files["bench-liger/gpu-check.log"]
    assert "stalled run 1 of 8" in log and "gpu-check ran past 0.5s and was stopped" in log
    assert "capturing NVML's answers failed or timed out" in log
    assert "the launch-overhead probe failed or timed out" in log
    # A capture stopped half-way leaves nothing, not a truncated file.
    assert not [name for name in files if name.startswith("captured/")]
    assert "packed into" in result.stdout


def test_device_script_refuses_to_run_without_out() -> None:
    result = subprocess.run(
        [str(REPO / "scripts" / "device-gpu-check")],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 3
    assert result.stderr == "device-gpu-check: OUT is not set (the folder whose files come back)\n"


def test_gpu_check_without_the_sdks_dependencies_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Run outside the project's environment: a clear line, not a traceback."""
    import venv

    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)
    result = subprocess.run(
        [str(REPO / "scripts" / "gpu-check")],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHON": str(bare / "bin" / "python")},
    )
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert (
        line.startswith("scripts/gpu-check: ")
        and "cannot import kernelindex's dependencies" in line
    )
    assert "Traceback" not in result.stderr
