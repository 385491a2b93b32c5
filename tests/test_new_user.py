"""What a new user runs, run as they run it: the CLI in its own process, on real files.

Install hints that work from a checkout, store counts and export permissions, and
``export liger`` of runs Liger's CSV cannot hold.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import kernelindex

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PATH = os.environ.get("PATH", "")
KERNELBENCH = ROOT / "tests" / "examples" / "kernelbench" / "A100_Modal"


def _blocked(tmp_path: Path, module: str) -> dict[str, str]:
    """An environment whose interpreter cannot import ``module``."""
    blocker = tmp_path / f"no-{module}"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(f"import sys\nsys.modules[{module!r}] = None\n")
    return {"PYTHONPATH": os.pathsep.join([str(blocker), str(ROOT)])}


# --------------------------------------------------------------------- install hints


def test_a_missing_extra_says_how_to_install_it_from_an_index_and_a_checkout(
    tmp_path: Path,
) -> None:
    no_duckdb = _blocked(tmp_path, "duckdb")
    done = kernelindex(
        "store", "query", "SELECT 1", "--store", tmp_path / "x.kistore", env=no_duckdb
    )
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "pip install 'kernelindex-sdk[store]'" in line and "pip install '.[store]'" in line
    no_plot = _blocked(tmp_path, "matplotlib")
    done = kernelindex("compare", EXAMPLES, "--plot", tmp_path / "p.png", env=no_plot)
    assert done.returncode == 2
    assert "pip install matplotlib" in done.stderr and "pip install '.[plot]'" in done.stderr


def test_plot_without_matplotlib_is_one_line_and_no_table(tmp_path: Path) -> None:
    """docs/compare.md: without matplotlib ``--plot`` says so in one line, exit 2,
    and prints nothing else (a CI step asking for a figure fails)."""
    done = kernelindex(
        "compare", EXAMPLES, "--plot", tmp_path / "p.png", env=_blocked(tmp_path, "matplotlib")
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "p.png").exists()


def test_the_docs_install_this_project_by_its_names() -> None:
    """No doc installs a package named ``kernelindex`` (not this project's name), and
    every ``pip install 'kernelindex-sdk[X]'`` beside it says the checkout's way."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        text = page.read_text("utf-8")
        assert "pip install kernelindex\n" not in text and "pip install kernelindex " not in text
        for paragraph in text.split("\n\n"):
            for extra in ("store", "plot", "dask", "liger", "env", "strategies"):
                if f"kernelindex-sdk[{extra}]" in paragraph:
                    assert f"'.[{extra}]'" in paragraph, (page.name, paragraph)


def test_nvml_bindings_are_an_extra() -> None:
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    assert 'env = ["nvidia-ml-py' in text


# --------------------------------------------------------------------------- the store


def test_a_fresh_store_counts_copies_in_the_input_as_repeated(tmp_path: Path) -> None:
    """Four bundles embed two protocols and two environments: 20 records, 16 distinct.
    The store held none of them, so none is "already present"."""
    store = tmp_path / "s.kistore"
    first = kernelindex("store", "add", EXAMPLES, "--store", store)
    assert first.returncode == 0, first.stderr
    assert first.stdout == (
        f"{store}: 16 stored, 0 already present, 4 repeated in the input, 0 refused in 4 files\n"
    )
    again = kernelindex("store", "add", EXAMPLES / "liger", "--store", store)
    assert again.stdout.endswith(
        ": 0 stored, 16 already present, 4 repeated in the input, 0 refused in 4 files\n"
    )
    one = kernelindex("store", "add", sorted(EXAMPLES.rglob("*.json"))[0], "--store", store)
    assert one.stdout.endswith(": 0 stored, 5 already present, 0 refused in 1 file\n")


def _export_under(umask: int, store: Path, out: Path, form: str) -> None:
    done = subprocess.run(
        [
            *("bash", "-c", f'umask {umask:03o} && exec "$@"', "-", *_cli()),
            *("store", "export", "--format", form, "--out", str(out), "--store", str(store)),
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr


def _cli() -> list[str]:
    return [sys.executable, "-m", "kernelindex_sdk.cli.main"]


@pytest.mark.parametrize("umask", [pytest.param(0o022, marks=pytest.mark.slow), 0o002])
def test_store_export_folders_and_files_follow_the_umask(tmp_path: Path, umask: int) -> None:
    store = tmp_path / "s.kistore"
    assert kernelindex("store", "add", EXAMPLES, "--store", store).returncode == 0
    for form in ("parquet", "jsonl"):
        out = tmp_path / form
        _export_under(umask, store, out, form)
        modes = {
            path.relative_to(tmp_path).as_posix(): stat.S_IMODE(path.lstat().st_mode)
            for path in [out, *out.rglob("*")]
        }
        folders = {name for name, _ in modes.items() if (tmp_path / name).is_dir()}
        assert len(folders) > (5 if form == "parquet" else 0)
        for name, mode in modes.items():
            assert mode == (0o777 if name in folders else 0o666) & ~umask, (name, oct(mode))


# ----------------------------------------------------------------------- export liger


@pytest.fixture(scope="module")
def kernelbench_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kb") / "kb"
    done = kernelindex("import", "kernelbench", KERNELBENCH, "--out", out)
    assert done.returncode == 0, done.stderr
    return out


def test_export_of_nothing_expressible_is_one_line_and_no_file(
    tmp_path: Path, kernelbench_records: Path
) -> None:
    target = tmp_path / "kb.csv"
    done = kernelindex("export", "liger", kernelbench_records, "--out", target)
    assert (done.returncode, done.stdout) == (1, "")
    (line,) = done.stderr.splitlines()
    assert line.startswith("kernelindex export liger: nothing written: 2 runs not exported: ")
    assert "no sweep" in line and "(the first: " in line
    assert not target.exists()
    to_stdout = kernelindex("export", "liger", kernelbench_records, "--out", "-")
    assert (to_stdout.returncode, to_stdout.stdout) == (1, "")


def test_export_counts_many_runs_left_out_for_one_reason_on_one_line(
    tmp_path: Path, kernelbench_records: Path
) -> None:
    target = tmp_path / "mixed.csv"
    done = kernelindex("export", "liger", kernelbench_records, EXAMPLES, "--out", target)
    assert done.returncode == 1
    left_out = [line for line in done.stderr.splitlines() if "not exported" in line]
    assert len(left_out) == 1 and ": 2 runs not exported: " in left_out[0]
    assert "nothing written" not in done.stderr
    assert len(target.read_text("utf-8").splitlines()) == 1 + 4  # header and the examples


# ----------------------------------------------------------------------- README


def _readme_command(start: str) -> str:
    (line,) = [
        line
        for line in (ROOT / "README.md").read_text("utf-8").splitlines()
        if line.startswith(start)
    ]
    return line


def test_the_readme_store_query_keeps_to_one_metric_and_passed_runs(tmp_path: Path) -> None:
    """The README's query over a store holding speed and memory runs (Liger's CSV rows of
    both): one unit in its value column, nanoseconds."""
    records = tmp_path / "records"
    source = ROOT / "tests" / "examples" / "liger" / "good.csv"
    assert kernelindex("import", "liger", source, "--out", records).returncode == 0
    added = kernelindex("store", "add", records, "--store", tmp_path / "runs.kistore")
    assert added.returncode == 0, added.stderr
    command = _readme_command("kernelindex store query ")
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        },
    )
    assert done.returncode == 0, done.stderr
    header, *rows, count = done.stdout.splitlines()
    assert header.split()[-1] == "ns" and count == f"({len(rows)} rows)" and rows
    # The memory rows (peak bytes, 1610612736.0 among them) are not in it.
    assert "1610612736.0" not in done.stdout


def test_the_readme_hashes_what_a_digest_covers() -> None:
    """The README's ``canonicalize | sha256sum`` line gives a record's digest (the
    protocol's, as ``kernelindex digest`` prints it), not the hash of a whole bundle."""
    command = _readme_command("$ python3 -c ")[2:].split("   # ")[0]
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), PATH])},
    )
    assert done.returncode == 0, done.stderr
    digests = kernelindex("digest", EXAMPLES / "liger" / "geglu-backward-a100.json").stdout
    protocol = next(line for line in digests.splitlines() if "BenchmarkProtocol" in line)
    assert done.stdout == f"{protocol.split()[0].removeprefix('sha256:')}  -\n"


# ------------------------------------------------------------------ compare's tables


def test_group_tables_show_the_recorded_sigma_of_mean_runs(tmp_path: Path) -> None:
    """KernelBench records a mean and its standard deviation over n trials: the table
    shows ``± σ`` and n where it had ``—`` (no p20–p80), in text and Markdown."""
    source = ROOT / "tests" / "examples" / "kernelbench" / "A10G_Modal"
    records = tmp_path / "kb"
    imported = kernelindex("import", "kernelbench", source, "--out", records)
    assert imported.returncode == 1 and "files written" in imported.stderr  # two entries refused
    for form in ("text", "markdown"):
        done = kernelindex("compare", records, "--by-shape", "--format", form)
        assert done.returncode == 0, done.stderr
        row = next(line for line in done.stdout.splitlines() if "500.0 µs" in line)
        assert "± 10.00 µs (σ, n=100)" in row and "—" not in row


# ------------------------------------------------------------- where a problem is


@pytest.fixture(scope="module")
def invalid_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pretty-printed bundle (as the importers write them) with one bad member."""
    import json

    bundle = json.loads((EXAMPLES / "liger" / "geglu-backward-a100.json").read_text("utf-8"))
    bundle["run"]["spec"]["status"] = "weird"
    folder = tmp_path_factory.mktemp("invalid")
    path = folder / "bad.json"
    path.write_text(json.dumps(bundle, indent=2), "utf-8")
    return path


def _github_position(path: Path) -> tuple[int, int]:
    done = kernelindex("validate", path, "--format", "github")
    line = next(line for line in done.stdout.splitlines() if line.startswith("::error"))
    fields = dict(part.split("=", 1) for part in line.split("::")[1].split(" ", 1)[1].split(","))
    return int(fields["line"]), int(fields["col"])


def test_every_validate_format_names_the_line_and_column(invalid_json: Path) -> None:
    import json

    line, column = _github_position(invalid_json)
    assert line > 1 and column > 1
    where = f"{invalid_json}:{line}:{column}: /run/spec/status: "
    text = kernelindex("validate", invalid_json)
    assert text.returncode == 1 and text.stdout.startswith(where)
    report = json.loads(kernelindex("validate", invalid_json, "--format", "json").stdout)
    (problem,) = report["problems"]
    assert (problem["line"], problem["column"]) == (line, column)
    junit = kernelindex("validate", invalid_json, "--format", "junit").stdout
    assert f'message="{where}' in junit


def test_every_command_reporting_input_problems_names_the_line_and_column(
    tmp_path: Path, invalid_json: Path
) -> None:
    line, column = _github_position(invalid_json)
    where = f"{invalid_json}:{line}:{column}: /run/spec/status: "
    runs = {
        "compare": kernelindex("compare", invalid_json, EXAMPLES, "--format", "markdown"),
        "ls": kernelindex("ls", invalid_json, EXAMPLES),
        "store add": kernelindex("store", "add", invalid_json, "--store", tmp_path / "s.kistore"),
        "export liger": kernelindex("export", "liger", invalid_json, EXAMPLES, "--out", "-"),
    }
    for command, done in runs.items():
        said = [x for x in (done.stdout + done.stderr).splitlines() if "/run/spec/status" in x]
        assert said and said[0].startswith(where), (command, done.stdout, done.stderr)


# ------------------------------------------------------------------- smaller ones


def test_compare_format_github_without_against_is_one_line() -> None:
    done = kernelindex("compare", EXAMPLES, "--format", "github")
    assert (done.returncode, done.stdout) == (2, "")
    (line,) = done.stderr.splitlines()
    assert "--format github needs --against REFERENCE" in line and "unknown" not in line


def test_ls_sums_up_a_long_section_and_lists_it_all_on_request(tmp_path: Path) -> None:
    """25 kernels: text lists 20 and one line for the other 5; --all and json list 25."""
    import json

    bundle = json.loads((EXAMPLES / "liger" / "relu-squared-backward-h100.json").read_text())
    stream = tmp_path / "many.jsonl"
    with stream.open("w", encoding="utf-8") as handle:
        for number in range(25):
            copy = json.loads(json.dumps(bundle))
            workload = copy["workload"]["spec"]
            workload["kernel"] = f"k{number:02d}"
            copy["run"]["spec"]["workloadDigest"] = _digest(copy["workload"])
            handle.write(json.dumps(copy) + "\n")
    done = kernelindex("ls", stream)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("kernels (25)")
    listed = [line for line in lines[start + 1 : start + 22] if line.startswith("  k")]
    assert len(listed) == 20
    assert " ".join(lines[start + 21].split()) == "… 5 more (ls --all lists every one) 5"
    every = kernelindex("ls", stream, "--all").stdout.splitlines()
    assert sum(line.startswith("  k") for line in every) == 25
    report = json.loads(kernelindex("ls", stream, "--format", "json").stdout)
    assert len(report["kernels"]) == 25


def _digest(record: dict[str, object]) -> str:
    from kernelindex_sdk.canonical import digest

    return digest(record)


def test_import_liger_given_json_says_it_is_not_a_csv(tmp_path: Path) -> None:
    source = EXAMPLES / "liger" / "geglu-backward-a100.json"
    done = kernelindex("import", "liger", source, "--out", tmp_path / "out")
    assert done.returncode == 1
    problems = [line for line in done.stderr.splitlines() if line.startswith(str(source))]
    assert problems == [f"{source}:1: is JSON, not a CSV: " + problems[0].split(": ", 2)[2]]
    assert "import liger reads Liger's benchmark CSV" in problems[0]
    said = (done.stdout + done.stderr).splitlines()
    counts = dict(line.rsplit(None, 1) for line in said if line.startswith("rows "))
    assert counts["rows read"] == "0" and counts["rows refused"] == "0"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# ------------------------------------------------------------------------ plots


def test_plots_scale_each_panel_name_skipped_ones_plainly_and_mark_no_noise(
    tmp_path: Path,
) -> None:
    """nvbench's sample: every panel on its own y scale (a panel of close values is not
    on a log axis), panels whose runs were all skipped named without a unit; the shipped
    examples: GeGLU's collapsed quantiles (``†``) are a hollow marker, said in the legend."""
    pytest.importorskip("matplotlib")
    import shared_data

    from kernelindex_sdk.compare import group_runs, load_records, panels, resolve_runs
    from kernelindex_sdk.compare.plot import LOG_SPAN, NO_NOISE, figure

    source = shared_data.require("nvbench", "test_ref.json")
    records = tmp_path / "nv"
    assert kernelindex("import", "nvbench", source, "--out", records).returncode == 0
    runs, _ = resolve_runs(load_records([str(records)]).index)
    found, _ = panels(group_runs(runs))
    axes = figure(found).axes
    spans = []
    for panel, ax in zip(found, axes, strict=False):
        values = [p.value for s in panel.series for p in s.points]
        if not values:
            assert ax.get_ylabel() == "latency", ax.get_ylabel()
            assert "all runs skipped" in [text.get_text() for text in ax.texts]
            continue
        spans.append(max(values) / min(values))
        assert ax.get_yscale() == ("log" if spans[-1] > LOG_SPAN else "linear"), panel.title
    assert min(spans) < LOG_SPAN < max(spans)  # both kinds of panel in one figure
    examples = kernelindex("compare", EXAMPLES, "--plot", tmp_path / "ex.svg")
    assert examples.returncode == 0
    assert NO_NOISE.replace(" ", "&#160;") in (tmp_path / "ex.svg").read_text() or (
        NO_NOISE in (tmp_path / "ex.svg").read_text()
    )


def test_kernelbench_problems_of_one_name_are_two_tables(tmp_path: Path) -> None:
    """docs/importers/kernelbench.md: problems 50 and 63 of level 1 share a name and are
    two tables, never one sweep over ``problem``."""
    import json

    folder = tmp_path / "H100_Modal"
    folder.mkdir()
    entry = {"std": 0.03, "min": 2.1, "max": 2.5, "num_trials": 100,
             "hardware": "NVIDIA H100 80GB HBM3", "device": "cuda:0"}  # fmt: skip
    name = "conv_standard_2D__square_input__square_kernel.py"
    timings = {
        "level1": {f"50_{name}": {"mean": 2.2, **entry}, f"63_{name}": {"mean": 2.3, **entry}}
    }
    for implementation in ("torch", "torch_compile_inductor_default"):
        (folder / f"baseline_time_{implementation}.json").write_text(json.dumps(timings))
    records = tmp_path / "kb"
    assert kernelindex("import", "kernelbench", folder, "--out", records).returncode == 0
    done = kernelindex("compare", records)
    assert done.returncode == 0, done.stderr
    titles = [line for line in done.stdout.splitlines() if line.startswith("conv standard 2D")]
    assert len(titles) == 2 and done.stdout.rstrip().endswith("2 groups, 4 runs")
    page = (ROOT / "docs" / "importers" / "kernelbench.md").read_text("utf-8")
    assert "two problems, two tables" in page and "are one sweep" not in page
