"""``kernelindex env`` and the environment probe, on a CPU, against recorded GPU answers.

The answers are the fixtures in tests/fixtures/gpu/ (README there): NVML call by call
and ``nvidia-smi -q -x``, captured on an H200 and hand-written for a two-GPU H100 SXM
node, and a machine whose driver is not loaded. The command itself runs as a real
process, with a PATH holding a real ``nvidia-smi`` script (printing the fixture) or none
at all.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from acceptance.support import run_subprocess
from nvml_fake import FIXTURES, FakeNvml

import kernelindex_sdk as ki
from bench_adapters.recording import environment as env

XML = FIXTURES / "h100-sxm-nvidia-smi-q-x.xml"
NAME = "NVIDIA H100 80GB HBM3"


def _no_nvml() -> Any:
    raise ModuleNotFoundError("No module named 'pynvml'")


def _no_smi(argv: Any) -> str:
    raise FileNotFoundError("nvidia-smi is not on PATH")


def _no_torch(index: int) -> dict[str, Any]:
    raise ImportError("No module named 'torch'")


def _versions(name: str) -> str:
    known = {"torch": "2.5.1", "triton": "3.1.0"}
    if name not in known:
        import importlib.metadata

        raise importlib.metadata.PackageNotFoundError(name)
    return known[name]


def sources(**overrides: Any) -> env.Sources:
    base: dict[str, Any] = dict(
        nvml=_no_nvml,
        nvidia_smi=_no_smi,
        torch=_no_torch,
        version=_versions,
        python=lambda: "3.12.3",
        os=lambda: "Linux 6.8.0-45-generic",
        cpu=lambda: "AMD EPYC 9654 96-Core Processor",
    )
    base.update(overrides)
    return env.Sources(**base)


def provenance(record: dict[str, Any]) -> dict[str, dict[str, str]]:
    result: dict[str, dict[str, str]] = record["spec"]["provenance"]
    return result


def assert_valid(record: dict[str, Any]) -> None:
    assert ki.validate(record) == []


def test_nvml_answers_become_every_gpu_field_with_its_call() -> None:
    nvml = FakeNvml.from_file("h100-sxm-nvml.json")
    found = env.probe(0, sources(nvml=lambda: nvml))
    record = env.environment_record(found)
    assert_valid(record)
    hardware, software = record["spec"]["hardware"], record["spec"]["software"]
    assert hardware == {
        "vendor": "nvidia",
        "product": "NVIDIA H100",
        "formFactor": "80GB HBM3",
        "architecture": "sm_90",
        "deviceName": NAME,
        "memoryBytes": 81559 * 2**20,
        "count": 2,
        "computeCapability": "9.0",
        "memoryClockHz": 2_619_000_000,
        "maxClockHz": 1_980_000_000,
        "applicationClockHz": 1_980_000_000,
        "applicationMemoryClockHz": 2_619_000_000,
        "powerLimitMilliwatts": 700_000,
        "eccEnabled": True,
        "hostCpu": "AMD EPYC 9654 96-Core Processor",
    }
    assert software == {
        "cuda-driver": "12.4",
        "driver": "550.90.07",
        "os": "Linux 6.8.0-45-generic",
        "python": "3.12.3",
        "torch": "2.5.1",
        "triton": "3.1.0",
    }
    origins = provenance(record)
    assert origins["/hardware/powerLimitMilliwatts"] == {
        "origin": env.PROBED,
        "detail": "probed: NVML nvmlDeviceGetEnforcedPowerLimit",
    }
    assert origins["/software/driver"]["detail"] == "probed: NVML nvmlSystemGetDriverVersion"
    # SM count and CUDA runtime need torch: unknown, with why, never guessed.
    assert origins["/hardware/multiprocessors"]["origin"] == "unknown"
    assert "SM count" in origins["/hardware/multiprocessors"]["detail"]
    assert origins["/software/cuda"]["origin"] == "unknown"
    assert "multiprocessors" not in hardware and "cuda" not in software
    # Every field present has a provenance entry, and every probed one says so.
    for section in ("hardware", "software"):
        for key in record["spec"][section]:
            entry = origins[f"/{section}/{key}"]
            assert entry["origin"] in (env.PROBED, "catalog")
            if entry["origin"] == env.PROBED:
                assert entry["detail"].startswith("probed: ")
    assert nvml.initialized == nvml.shut_down == 1


def test_a_refused_nvml_call_leaves_that_field_unknown_with_nvmls_reason() -> None:
    nvml = FakeNvml.from_file("h100-sxm-nvml.json")
    record = env.environment_record(env.probe(1, sources(nvml=lambda: nvml)))
    assert_valid(record)
    assert "powerLimitMilliwatts" not in record["spec"]["hardware"]
    entry = provenance(record)["/hardware/powerLimitMilliwatts"]
    assert entry["origin"] == "unknown"
    assert "NVMLError" in entry["detail"] and "NoPermission" in entry["detail"]
    assert record["spec"]["hardware"]["maxClockHz"] == 1_980_000_000


def test_without_nvml_nvidia_smi_xml_answers_with_the_element_it_came_from() -> None:
    text = XML.read_text()
    asked: list[list[str]] = []

    def smi(argv: Any) -> str:
        asked.append(list(argv))
        return text

    record = env.environment_record(env.probe(0, sources(nvidia_smi=smi)))
    assert_valid(record)
    assert asked == [["nvidia-smi", "-q", "-x"]]
    hardware = record["spec"]["hardware"]
    assert hardware["deviceName"] == NAME and hardware["count"] == 2
    assert hardware["memoryBytes"] == 81559 * 2**20
    assert hardware["maxClockHz"] == 1_980_000_000
    assert hardware["memoryClockHz"] == 2_619_000_000
    assert hardware["applicationClockHz"] == 1_980_000_000
    assert hardware["powerLimitMilliwatts"] == 700_000
    assert hardware["eccEnabled"] is True
    assert record["spec"]["software"]["driver"] == "550.90.07"
    assert record["spec"]["software"]["cuda-driver"] == "12.4"
    origins = provenance(record)
    assert origins["/hardware/powerLimitMilliwatts"]["detail"] == (
        "probed: nvidia-smi -q -x /nvidia_smi_log/gpu/gpu_power_readings/current_power_limit"
    )
    # -q -x has no compute capability: unknown, and so is the architecture it gives...
    assert origins["/hardware/computeCapability"]["origin"] == "unknown"
    # ...except what the GPU catalog knows of the product, which says so.
    assert origins["/hardware/architecture"]["origin"] == "catalog"


def test_torch_fills_the_sm_count_and_cuda_runtime() -> None:
    def torch(index: int) -> dict[str, Any]:
        return {
            "cuda": "12.4",
            "name": NAME,
            "major": 9,
            "minor": 0,
            "total_memory": 85_029_158_912,
            "multi_processor_count": 132,
            "count": 2,
        }

    nvml = FakeNvml.from_file("h100-sxm-nvml.json")
    record = env.environment_record(env.probe(0, sources(nvml=lambda: nvml, torch=torch)))
    assert_valid(record)
    assert record["spec"]["hardware"]["multiprocessors"] == 132
    assert record["spec"]["software"]["cuda"] == "12.4"
    # NVML's memory answer stands: torch only fills what NVML and nvidia-smi did not.
    assert record["spec"]["hardware"]["memoryBytes"] == 81559 * 2**20
    assert provenance(record)["/hardware/multiprocessors"]["detail"] == (
        "probed: torch.cuda.get_device_properties(0)"
    )


def test_no_gpu_is_a_valid_environment_that_says_so() -> None:
    record = env.environment_record(env.probe(0, sources()))
    assert_valid(record)
    hardware = record["spec"]["hardware"]
    assert hardware["vendor"] == hardware["product"] == "none"
    origins = provenance(record)
    assert "no GPU on this machine" in origins["/hardware/product"]["detail"]
    for field in env.GPU_FIELDS:
        assert origins[f"/hardware/{field}"]["origin"] == "unknown"
        assert field not in hardware
    assert "nvidia-smi" in origins["/software/driver"]["detail"]


def test_no_gpu_records_what_cpu_timings_depend_on() -> None:
    cpu = sources(
        cores=lambda: 16,
        frequency_policy=lambda: "governor performance, driver intel_pstate, turbo on",
        numpy=lambda: {"numpy": "2.1.0", "numpy-blas": "scipy-openblas 0.3.27"},
    )
    record = env.environment_record(env.probe(0, cpu))
    assert_valid(record)
    hardware, software = record["spec"]["hardware"], record["spec"]["software"]
    assert hardware["hostCpuCores"] == 16
    assert hardware["hostCpuFrequencyPolicy"].startswith("governor performance")
    assert software["numpy"] == "2.1.0" and software["numpy-blas"] == "scipy-openblas 0.3.27"
    origins = provenance(record)
    assert origins["/hardware/hostCpuCores"]["detail"] == "probed: os.sched_getaffinity(0)"
    assert origins["/software/numpy-blas"]["origin"] == "record"

    # Nothing readable: said so, never guessed; no numpy: nothing said of it.
    def no_numpy() -> dict[str, str]:
        raise ImportError("numpy")

    bare = sources(cores=lambda: None, frequency_policy=lambda: None, numpy=no_numpy)
    record = env.environment_record(env.probe(0, bare))
    assert_valid(record)
    assert "hostCpuCores" not in record["spec"]["hardware"]
    origins = provenance(record)
    assert origins["/hardware/hostCpuFrequencyPolicy"]["origin"] == "unknown"
    assert "numpy" not in record["spec"]["software"] and "/software/numpy" not in origins


def test_on_a_gpu_machine_the_host_cpu_facts_stay_out_of_the_hardware() -> None:
    """The GPU is the device there: its environments' hardware (what runs pair on)
    stays what it was."""
    nvml = FakeNvml.from_file("h100-sxm-nvml.json")
    record = env.environment_record(env.probe(0, sources(nvml=lambda: nvml, cores=lambda: 8)))
    assert "hostCpuCores" not in record["spec"]["hardware"]
    assert "/hardware/hostCpuCores" not in provenance(record)


def test_the_frequency_policy_is_read_off_sys(tmp_path: Path) -> None:
    (tmp_path / "cpu0" / "cpufreq").mkdir(parents=True)
    (tmp_path / "cpu0" / "cpufreq" / "scaling_governor").write_text("powersave\n")
    (tmp_path / "cpu0" / "cpufreq" / "scaling_driver").write_text("amd-pstate-epp\n")
    (tmp_path / "cpufreq").mkdir()
    (tmp_path / "cpufreq" / "boost").write_text("1\n")
    policy = env.frequency_policy(tmp_path)
    assert policy == "governor powersave, driver amd-pstate-epp, boost on"
    assert env.frequency_policy(tmp_path / "absent") is None


def test_declared_values_fill_unknowns_only() -> None:
    nvml = FakeNvml.from_file("h100-sxm-nvml.json")
    found = env.probe(0, sources(nvml=lambda: nvml))
    declared = env.parse_settings(["multiprocessors=132", "driver=999.0", "cuda=12.4"])
    record = env.environment_record(found, declared)
    assert_valid(record)
    origins = provenance(record)
    assert record["spec"]["hardware"]["multiprocessors"] == 132
    assert origins["/hardware/multiprocessors"] == {
        "origin": "caller",
        "detail": "--set multiprocessors=132",
    }
    assert record["spec"]["software"]["driver"] == "550.90.07"
    assert env.ignored_declarations(found, declared) == [
        "--set driver=999.0 ignored: the machine reports 550.90.07"
    ]


@pytest.mark.parametrize(
    ("item", "fragment"),
    [
        ("gpu=H100", "unknown key; known keys: vendor, product,"),
        ("memoryBytes=lots", "expected a positive whole number"),
        ("eccEnabled=yes", "expected true or false"),
        ("torch", "expected KEY=VALUE"),
        ("torch=", "an empty value"),
    ],
)
def test_a_bad_declaration_is_one_line(item: str, fragment: str) -> None:
    with pytest.raises(env.DeclarationError, match=fragment.replace("(", r"\(")):
        env.parse_settings([item])


def test_every_known_key_is_a_field_of_the_schema() -> None:
    """One definition of the keys: each names a hardware field or a software component."""
    schema = json.loads(
        (
            Path(__file__).resolve().parent.parent
            / "schemas/kernelindex.dev/v1alpha1/execution-environment.schema.json"
        ).read_text()
    )
    fields = set(schema["$defs"]["hardware"]["properties"])
    for key, known in env.KNOWN_KEYS.items():
        section, name = known.path
        assert name == key
        assert section == "software" or name in fields


# --------------------------------------------------------------------------- the command


def _path_with(tmp_path: Path, script: str | None) -> dict[str, str]:
    """An environment whose PATH has python's folder and, if given, a fake nvidia-smi."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if script is not None:
        smi = bin_dir / "nvidia-smi"
        smi.write_text(script)
        smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    environ = dict(os.environ)
    environ["PATH"] = f"{bin_dir}:{Path(sys.executable).parent}"
    return environ


def _env_command(tmp_path: Path, *args: str, script: str | None = None) -> Any:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk.cli.main", "env", *args],
        capture_output=True,
        text=True,
        env=_path_with(tmp_path, script),
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr
    return done


def test_env_with_nvidia_smi_on_path_prints_a_record_validate_accepts(tmp_path: Path) -> None:
    done = _env_command(tmp_path, "--set", "torch=2.5.1", script=f"#!/bin/sh\n/bin/cat '{XML}'\n")
    assert done.returncode == 0, done.stderr
    (tmp_path / "env.json").write_text(done.stdout)
    assert run_subprocess(["validate", tmp_path / "env.json"]).exit_code == 0
    record = json.loads(done.stdout)
    assert record["spec"]["hardware"]["deviceName"] == NAME
    assert record["spec"]["hardware"]["powerLimitMilliwatts"] == 700_000
    torch_origin = record["spec"]["provenance"]["/software/torch"]["origin"]
    # torch is not installed here: the declaration fills it; if it were, the probe would.
    assert torch_origin in ("caller", env.PROBED)


def test_env_without_nvidia_smi_exits_0_and_says_no_gpu(tmp_path: Path) -> None:
    done = _env_command(tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["spec"]["hardware"]["vendor"] == "none"
    assert "nvidia-smi" in record["spec"]["provenance"]["/hardware/deviceName"]["detail"]
    assert record["spec"]["hardware"]["hostCpuCores"] >= 1  # the CPU is the device
    (tmp_path / "env.json").write_text(done.stdout)
    assert run_subprocess(["validate", tmp_path / "env.json"]).exit_code == 0


def test_env_when_nvidia_smi_fails_names_its_exit_and_message(tmp_path: Path) -> None:
    message = FIXTURES / "no-gpu-nvidia-smi-stdout.txt"
    done = _env_command(tmp_path, script=f"#!/bin/sh\n/bin/cat '{message}'\nexit 9\n")
    assert done.returncode == 0, done.stderr
    detail = json.loads(done.stdout)["spec"]["provenance"]["/hardware/deviceName"]["detail"]
    assert "nvidia-smi: exit 9: NVIDIA-SMI has failed" in detail


def test_env_unknown_key_is_a_usage_error_naming_the_known_ones(tmp_path: Path) -> None:
    done = _env_command(tmp_path, "--set", "gpu=H100")
    assert done.returncode == 2
    assert done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if line.startswith("Error")]
    assert len(lines) == 1 and "known keys:" in lines[0] and "multiprocessors" in lines[0]


def test_env_a_declared_value_the_format_refuses_is_a_usage_error(tmp_path: Path) -> None:
    done = _env_command(tmp_path, "--set", "computeCapability=nine")
    assert done.returncode == 2
    assert "would not validate" in done.stderr and "computeCapability" in done.stderr


# ------------------------------------------------- answers captured on a real H200

#: What the probe wrote on the H200 itself (scripts/device-gpu-check, 2026-12-04), from
#: NVML and torch there; h200-nvml.json and h200-nvidia-smi-q-x.xml are that machine's
#: answers, captured in the same run.
H200_RECORD = Path(__file__).resolve().parent.parent / "docs/examples/bench-liger/env.json"


def _h200_sources(recorded: dict[str, Any], **overrides: Any) -> env.Sources:
    software = recorded["spec"]["software"]
    return sources(
        version=lambda name: software[name],
        python=lambda: software["python"],
        os=lambda: software["os"],
        cpu=lambda: recorded["spec"]["hardware"]["hostCpu"],
        **overrides,
    )


def test_replaying_the_h200s_nvml_answers_gives_the_record_written_there() -> None:
    recorded = json.loads(H200_RECORD.read_text())
    hardware = recorded["spec"]["hardware"]

    def torch(index: int) -> dict[str, Any]:
        # torch's answers were not captured; these are the record's own (its provenance
        # says multiprocessors and the CUDA runtime came from torch).
        return {
            "cuda": recorded["spec"]["software"]["cuda"],
            "name": hardware["deviceName"],
            "major": 9,
            "minor": 0,
            "total_memory": 150_109_880_320,
            "multi_processor_count": hardware["multiprocessors"],
            "count": 1,
        }

    nvml = FakeNvml.from_file("h200-nvml.json")
    found = env.probe(0, _h200_sources(recorded, nvml=lambda: nvml, torch=torch))
    record = env.environment_record(found)
    assert_valid(record)
    assert record["spec"] == recorded["spec"]
    assert record["metadata"] == recorded["metadata"]


def test_the_h200s_nvidia_smi_xml_agrees_with_its_nvml_answers() -> None:
    """nvsmi_device_v13.dtd, as driver 580 writes it: the fallback reads the same facts."""
    recorded = json.loads(H200_RECORD.read_text())
    text = (FIXTURES / "h200-nvidia-smi-q-x.xml").read_text()
    record = env.environment_record(
        env.probe(0, _h200_sources(recorded, nvidia_smi=lambda argv: text))
    )
    assert_valid(record)
    hardware, via_nvml = record["spec"]["hardware"], recorded["spec"]["hardware"]
    # Every field the XML gave is NVML's value, and it lacks only what -q -x cannot say
    # (the compute capability) and what came from torch there (the SM count).
    assert hardware == {field: via_nvml[field] for field in hardware}
    assert set(via_nvml) - set(hardware) == {"computeCapability", "multiprocessors"}
    for component in ("driver", "cuda-driver"):
        assert record["spec"]["software"][component] == recorded["spec"]["software"][component]
    origins = provenance(record)
    assert origins["/hardware/maxClockHz"]["detail"].startswith("probed: nvidia-smi -q -x ")
    # Without the compute capability, the architecture is the GPU catalog's.
    assert origins["/hardware/architecture"]["origin"] == "catalog"
