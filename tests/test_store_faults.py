"""The store under faults, with real processes (#30): kill -9 during ``add``, adds at
once, a full disk, a read-only store, a store held by another process."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

duckdb = pytest.importorskip("duckdb")

from tests.store_helpers import STREAM, count_records, kernelindex, write_corpus  # noqa: E402

DROP_DAC = (
    "setpriv",
    "--bounding-set=-dac_override,-dac_read_search",
    "--inh-caps=-dac_override,-dac_read_search",
    "--",
)


def _add_process(corpus: Path, store: Path, **kwargs: object) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "kernelindex_sdk.cli.main", "store", "add"]
    return subprocess.Popen(
        [*command, str(corpus), "--store", str(store), "--jobs", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kwargs,  # type: ignore[call-overload]
    )


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("corpora")
    return [write_corpus(folder / f"c{seed}.jsonl", 400, seed) for seed in range(3)]


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory, corpora: list[Path]) -> dict[str, int]:
    """Records each corpus stores into a store holding STREAM, and all three together."""
    folder = tmp_path_factory.mktemp("expected")
    counts = {}
    for corpus in corpora:
        store = folder / f"{corpus.stem}.kistore"
        assert kernelindex("store", "add", STREAM, "--store", store).returncode == 0
        assert kernelindex("store", "add", corpus, "--store", store).returncode == 0
        counts[corpus.stem] = count_records(store)
    store = folder / "all.kistore"
    assert kernelindex("store", "add", STREAM, *corpora, "--store", store).returncode == 0
    counts["all"] = count_records(store)
    return counts


@pytest.mark.slow
def test_kill_9_during_add_leaves_all_or_none(
    tmp_path: Path, corpora: list[Path], expected: dict[str, int]
) -> None:
    """Killed at many moments (checking, staging, committing), the store opens with
    the records it had before, or with all of the add's: never a part."""
    corpus = corpora[0]
    store = tmp_path / "s.kistore"
    assert kernelindex("store", "add", STREAM, "--store", store).returncode == 0
    before = count_records(store)
    started = time.monotonic()
    whole = _add_process(corpus, tmp_path / "timing.kistore")
    whole.communicate(timeout=120)
    duration = time.monotonic() - started
    outcomes = []
    for step in range(12):
        shutil.copyfile(store, tmp_path / "k.kistore")
        wal = Path(f"{store}.wal")
        if wal.exists():
            shutil.copyfile(wal, tmp_path / "k.kistore.wal")
        victim = _add_process(corpus, tmp_path / "k.kistore")
        time.sleep(duration * (0.35 + 0.06 * step))
        os.killpg(victim.pid, signal.SIGKILL)
        victim.communicate(timeout=30)
        after = count_records(tmp_path / "k.kistore")
        assert after in (before, expected[corpus.stem]), (step, after)
        outcomes.append(after)
        validate = kernelindex("validate", "--strict-refs", tmp_path / "k.kistore")
        assert validate.returncode == 0, validate.stdout[-500:]
        for leftover in tmp_path.glob("k.kistore*"):
            leftover.unlink()
    assert before in outcomes  # some kills landed before the commit ...


def _adds_at_once(store: Path, corpora: list[Path]) -> None:
    """``store`` holding STREAM, then one ``store add`` process per corpus, all at once:
    each exits 0, without a traceback."""
    assert kernelindex("store", "add", STREAM, "--store", store).returncode == 0
    running = [_add_process(corpus, store) for corpus in corpora]
    results = [process.communicate(timeout=180) for process in running]
    for process, (out, err) in zip(running, results, strict=True):
        assert process.returncode == 0, out + err
        assert "Traceback" not in err


def test_two_adds_at_once_lose_nothing(tmp_path: Path, corpora: list[Path]) -> None:
    """The store holds what one add of both corpora stores."""
    store = tmp_path / "s.kistore"
    _adds_at_once(store, corpora[:2])
    together = tmp_path / "ref.kistore"
    assert kernelindex("store", "add", STREAM, *corpora[:2], "--store", together).returncode == 0
    assert count_records(store) == count_records(together)


@pytest.mark.slow  # the two adds above stay in the quick set; this one needs `expected`'s 4 adds
def test_three_adds_at_once_lose_nothing(
    tmp_path: Path, corpora: list[Path], expected: dict[str, int]
) -> None:
    store = tmp_path / "s.kistore"
    _adds_at_once(store, corpora)
    assert count_records(store) == expected["all"]


def test_a_held_store_is_waited_for_with_a_message(tmp_path: Path) -> None:
    """The store held by another process: the query says once that it waits, and
    answers when the holder lets go. The holder lets go only after that line came (no
    sleep to outlast: the query's start-up may take any time on a loaded machine)."""
    store = tmp_path / "s.kistore"
    assert kernelindex("store", "add", STREAM, "--store", store).returncode == 0
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('held', flush=True);"
            " sys.stdin.readline(); c.close()",
            str(store),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        command = [sys.executable, "-m", "kernelindex_sdk.cli.main", "store", "query"]
        query = subprocess.Popen(
            [*command, "SELECT count(*) AS n FROM records", "--store", str(store)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert query.stderr is not None
        waiting = query.stderr.readline()  # written after 1 s of waiting
    finally:
        holder.communicate("go\n", timeout=30)
    out, err = query.communicate(timeout=60)
    assert query.returncode == 0, waiting + err
    assert [waiting.rstrip("\n"), *err.splitlines()] == [
        f"kernelindex store query: waiting for {store}: another kernelindex process is using it"
    ]
    assert out.split()[:2] == ["n", "5"]


def _unshare_works() -> bool:
    try:
        done = subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="unshare -m (a private mount) not permitted")
@pytest.mark.parametrize("staging_on_full_disk", [False, True])
def test_a_disk_that_fills_during_add(
    tmp_path: Path, corpora: list[Path], staging_on_full_disk: bool
) -> None:
    """A 1.2 MB tmpfs (an empty store is about 1 MB) in a private mount namespace:
    the add that does not fit is one line, exit 2, and the store keeps exactly what it
    had — whether the store's disk or the staging folder's fills."""
    mount = tmp_path / "small"
    mount.mkdir()
    store = mount / "s.kistore"
    python = f"{sys.executable} -m kernelindex_sdk.cli.main"
    tmpdir = mount if staging_on_full_disk else tmp_path
    script = (
        f"mount -t tmpfs -o size=1200k tmpfs {mount} || exit 99\n"
        f"{python} store add {STREAM} --store {store} >/dev/null || exit 98\n"
        f"TMPDIR={tmpdir} {python} store add {corpora[0]} --store {store}"
        f" >{tmp_path}/out 2>{tmp_path}/err\n"
        f"echo $? >{tmp_path}/rc\n"
        f"{python} store query 'SELECT count(*) AS n FROM records' --format csv"
        f" --store {store} >{tmp_path}/count\n"
    )
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    err = (tmp_path / "err").read_text()
    assert (tmp_path / "rc").read_text().strip() == "2", err
    assert len(err.splitlines()) == 1, err
    assert "No space left on device" in err and "nothing added" in err
    assert (tmp_path / "count").read_text().splitlines() == ["n", "5"]


def test_a_read_only_store(tmp_path: Path) -> None:
    """Without the right to write it: add is one line, exit 2; reading still works."""
    folder = tmp_path / "ro"
    folder.mkdir()
    store = folder / "s.kistore"
    assert kernelindex("store", "add", STREAM, "--store", store).returncode == 0
    store.chmod(0o444)
    folder.chmod(0o555)
    try:
        split = Path(STREAM).parent / "split"
        add = kernelindex("store", "add", split, "--store", store, prefix=DROP_DAC)
        assert add.returncode == 2, add.stdout + add.stderr
        assert len(add.stderr.splitlines()) == 1 and str(store) in add.stderr, add.stderr
        assert "Traceback" not in add.stderr
        query = kernelindex(
            "store", "query", "SELECT count(*) AS n FROM records", "--store", store,
            prefix=DROP_DAC,
        )  # fmt: skip
        assert query.returncode == 0, query.stderr
        assert query.stdout.split()[:2] == ["n", "5"]
        validate = kernelindex("validate", store, prefix=DROP_DAC)
        assert validate.returncode == 0, validate.stdout
    finally:
        folder.chmod(0o755)
        store.chmod(0o644)
