"""Text from the command line, the environment or file names that a command writes into
records: bytes that are not UTF-8 are refused in one line (exit 2), never written into a
record that ``validate`` then refuses; and what ``env`` prints always validates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acceptance.support import cli_process, run_subprocess
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiles import examples, variants

import kernelindex_sdk as ki
from bench_adapters.common.provenance import DeclarationError, parse_declarations
from bench_adapters.liger_bench.plan import PlanError, parse_overrides
from bench_adapters.recording import environment as env
from bench_adapters.recording.bundles import record_problems
from kernelindex_sdk.base.escaping import not_utf8
from kernelindex_sdk.base.prettyjson import pretty
from kernelindex_sdk.reading.intake import loads

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
KERNELBENCH = SHARED / "kernelbench" / "H100_Modal" / "baseline_time_torch.json"
NVBENCH = SHARED / "nvbench" / "test_ref.json"
LIGER = SHARED / "liger" / "all_benchmark_data.csv"
#: ``--set`` items whose value is not UTF-8, as a shell passes them: raw bytes.
NOT_UTF8 = b"torch=\xff\xfe"


def _kernelindex(*args: str | bytes, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """The real CLI, its arguments given as the bytes a shell would pass."""
    return cli_process(*args, cwd=cwd)


def _one_error_line(done: subprocess.CompletedProcess[bytes], prefix: str) -> str:
    """The one line a refused command wrote (stderr, ASCII), after checking it is alone."""
    assert done.returncode == 2, done.stderr
    assert done.stdout == b""
    lines = done.stderr.decode("ascii").splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(prefix), lines
    return lines[0]


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        (["env"], "kernelindex env: error: --set torch=\\xff\\xfe: not UTF-8"),
        (
            ["import", "liger", "--out", "{out}", str(LIGER)],
            "kernelindex import liger: error: --set torch=\\xff\\xfe: not UTF-8",
        ),
        (
            ["import", "nvbench", "--out", "{out}", str(NVBENCH)],
            "kernelindex import nvbench: error: --set torch=\\xff\\xfe: not UTF-8",
        ),
        (
            ["import", "kernelbench", "--out", "{out}", str(KERNELBENCH)],
            "kernelindex import kernelbench: error: --set torch=\\xff\\xfe: not UTF-8",
        ),
        (
            ["bench", "liger", "--kernel", "geglu", "--dry-run"],
            "kernelindex bench liger: error: --set torch=\\xff\\xfe: not UTF-8",
        ),
    ],
    ids=["env", "import-liger", "import-nvbench", "import-kernelbench", "bench-liger"],
)
def test_a_set_value_that_is_not_utf8_is_refused_in_one_line(
    tmp_path: Path, command: list[str], prefix: str
) -> None:
    out = tmp_path / "out"
    args = [part.replace("{out}", str(out)) for part in command]
    done = _kernelindex(*args, "--set", NOT_UTF8)
    line = _one_error_line(done, prefix)
    assert "(bytes \\xff\\xfe)" in line
    assert not out.exists()  # nothing written


def test_a_bench_override_with_text_that_is_not_utf8_is_refused() -> None:
    # dtype is text in Liger's config: the bytes would reach the workload record.
    done = _kernelindex("bench", "liger", "--kernel", "geglu", "--dry-run", "--set", b"dtype=\xff")
    _one_error_line(done, "kernelindex bench liger: error: --set dtype=\\xff: not UTF-8")


@pytest.mark.skipif(not KERNELBENCH.is_file(), reason="needs ../shared/kernelbench")
@pytest.mark.parametrize("where", ["argument", "working directory"])
def test_a_kernelbench_folder_name_that_is_not_utf8_is_refused(tmp_path: Path, where: str) -> None:
    """The folder's name goes into every run (externalId, a label): named on the command
    line or only the working directory, bytes that are not UTF-8 are refused."""
    folder = os.fsencode(tmp_path) + b"/H100\xff_Modal"
    os.mkdir(folder)
    with open(folder + b"/baseline_time_torch.json", "wb") as copy:
        copy.write(KERNELBENCH.read_bytes())
    out = tmp_path / "out"
    if where == "argument":
        done = _kernelindex("import", "kernelbench", "--out", str(out), folder)
    else:
        done = _kernelindex(
            "import", "kernelbench", "--out", str(out), "baseline_time_torch.json",
            cwd=Path(os.fsdecode(folder)),
        )  # fmt: skip
    line = _one_error_line(done, "")
    assert "folder name H100\\xff_Modal: not UTF-8 text (bytes \\xff)" in line
    assert not out.exists()


def _env(*args: str) -> Any:
    """``kernelindex env ARGS`` as a process, on a PATH without nvidia-smi."""
    return cli_process("env", *args, env=dict(os.environ, PATH=str(Path(sys.executable).parent)))


@pytest.mark.parametrize(
    "settings_",
    variants(
        [
            [],
            ["--set", "torch=2.5.1"],
            ["--set", "torch=2.5.1+cu124", "--set", "cuda=12.4", "--set", "driver=550.54.15"],
            ["--set", "hostCpu=Ryzen™ 9 «7950X» <b>&amp;</b> | `x` [y](z)", "--set", "count=8"],
            ["--set", "deviceName=NVIDIA H100 80GB HBM3", "--set", "memoryBytes=85899345920"],
            ["--set", "os=Linux 6.1 ünïcode", "--set", "eccEnabled=true"],
        ],
        quick={0, 3, 5},
        ids=["none", "torch", "software", "hostile-cpu", "gpu", "unicode-os"],
    ),
)
def test_what_env_prints_validates(tmp_path: Path, settings_: list[str]) -> None:
    done = _env(*settings_)
    assert done.returncode == 0, done.stderr
    written = tmp_path / "env.json"
    written.write_bytes(done.stdout)
    checked = run_subprocess(["validate", written])
    assert checked.exit_code == 0, checked.output
    assert json.loads(done.stdout)["kind"] == "ExecutionEnvironment"


def test_the_library_parsers_refuse_text_that_is_not_utf8() -> None:
    item = os.fsdecode(NOT_UTF8)
    with pytest.raises(DeclarationError, match=r"--set torch=\\xff\\xfe: not UTF-8"):
        parse_declarations([item])
    with pytest.raises(DeclarationError, match=r"--set torch=\\xff\\xfe: not UTF-8"):
        env.parse_settings([item])
    with pytest.raises(PlanError, match=r"--set torch=\\xff\\xfe: not UTF-8"):
        parse_overrides([item])


def test_record_problems_finds_what_only_the_written_text_would_show() -> None:
    record = env.environment_record(env.Probed(), {"hostCpu": "AMD\udcff"})
    problems = record_problems(record)
    assert problems and "lone surrogate U+DCFF" in problems[0].message
    assert problems[0].pointer == "/spec/hardware/hostCpu"


def test_not_utf8_is_none_for_any_unicode_and_names_every_smuggled_byte() -> None:
    assert not_utf8("--set", "torch=2.5.1") is None
    assert not_utf8("--set", "ünïcode ™ 中") is None
    message = not_utf8("a path", os.fsdecode(b"a\x80b\nc\xff"))
    assert message == (
        "a path a\\x80b\\nc\\xff: not UTF-8 text (bytes \\x80\\xff); a record holds Unicode "
        "text only"
    )


_FREE_TEXT = ("hostCpu", "os", "torch", "deviceName", "architecture")


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=st.sampled_from(_FREE_TEXT),
    # (a list joined: st.text drops the surrogates of an alphabet it is given)
    value=st.lists(
        st.characters(codec="utf-8") | st.sampled_from("\udcff\udc80\ud800\n\x00\u202e"),
        max_size=40,
    ).map("".join),
)
def test_any_declared_text_is_refused_or_makes_a_record_validate_accepts(
    key: str, value: str
) -> None:
    """What ``env`` does with a declaration: parse it, build the record, check it
    (``record_problems``); whatever passes, once written, must pass ``validate``."""
    try:
        declared = env.parse_settings([f"{key}={value}"])
    except DeclarationError as error:
        assert "\n" not in str(error)
        return
    record = env.environment_record(env.Probed(), declared)
    if record_problems(record):
        return  # env refuses it: exit 2, nothing printed
    written = (pretty(record) + "\n").encode("utf-8")
    assert ki.validate(loads(written, source="env.json")) == []
