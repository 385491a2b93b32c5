"""``kernelindex serve`` under load: prints figures; not a timed test.

Starts ``kernelindex serve`` on a fresh store on 127.0.0.1 (a free port), seeds it,
then runs N concurrent clients for S seconds, each looping over a mix of requests::

    python benchmarks/bench_serve.py --clients 64 --seconds 30

* reads: ``GET /records/<digest>`` of a seeded record, or a schema by its ``$id``;
* queries: ``GET /runs`` filtered by kernel, one page;
* posts: ``POST /records`` of one new bundle (and, one time in four, a bundle already
  posted: answered "present", stored once).

Every answer must be the expected one (200/201/304; anything else is an error and
printed). At the end, with the server stopped, the store is opened directly: every
posted run is stored, exactly once, and no record is stored twice. Prints requests/s
and p50/p99 latency per kind, and the machine's load average before and after.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from store_corpus import complete_bundles

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-token"


def _start(store: Path, token: Path) -> tuple[subprocess.Popen[bytes], str, int]:
    command = [sys.executable, "-m", "kernelindex_sdk.cli.main", "serve", str(store)]
    command += ["--port", "0", "--token-file", str(token)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, start_new_session=True)
    assert process.stderr is not None
    first = process.stderr.readline().decode()
    if " on http://" not in first:
        raise SystemExit(f"the server did not start: {first}")
    host, port = first.rsplit("http://", 1)[1].strip().rsplit(":", 1)
    threading.Thread(
        target=lambda: [print(x.decode(), end="", file=sys.stderr) for x in process.stderr],
        daemon=True,
    ).start()  # type: ignore[union-attr]
    return process, host, int(port)


def _echo(stream: Any) -> None:
    for line in stream:
        sys.stderr.write(line.decode("utf-8", "replace"))


def _digest(record: dict[str, Any]) -> str:
    from kernelindex_sdk.canonical import digest

    return digest(record)


class Client(threading.Thread):
    """One client: its own connection (kept alive), its own timings."""

    def __init__(self, host: str, port: int, until: float, work: Any, seed: int) -> None:
        super().__init__(daemon=True)
        self.host, self.port, self.until, self.work = host, port, until, work
        self.random = random.Random(seed)
        self.timings: dict[str, list[float]] = {"read": [], "query": [], "post": []}
        self.errors: list[str] = []

    def run(self) -> None:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
        while time.monotonic() < self.until:
            kind, method, path, body, headers, expected = self.work(self.random)
            started = time.perf_counter()
            try:
                connection.request(method, path, body=body, headers=headers)
                response = connection.getresponse()
                answer = response.read()
            except (OSError, http.client.HTTPException) as error:
                self.errors.append(f"{method} {path}: {error}")
                connection.close()
                connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
                continue
            self.timings[kind].append(time.perf_counter() - started)
            if response.status not in expected:
                self.errors.append(f"{method} {path}: {response.status} {answer[:200]!r}")
        connection.close()


class Mix:
    """The requests: reads of seeded records and schemas, queries, posts."""

    def __init__(self, seeded: list[str], fresh: list[bytes], kernels: list[str]) -> None:
        self.seeded, self.fresh, self.kernels = seeded, fresh, kernels
        self.lock = threading.Lock()
        self.posted: list[bytes] = []

    def __call__(self, rng: random.Random) -> tuple[Any, ...]:
        roll = rng.random()
        if roll < 0.6:
            if rng.random() < 0.9:
                path = f"/records/{rng.choice(self.seeded)}"
            else:
                path = "/schemas/v1alpha1/benchmark-run.schema.json"
            return "read", "GET", path, None, {}, (200,)
        if roll < 0.85:
            path = f"/runs?kernel={rng.choice(self.kernels)}&limit=20"
            return "query", "GET", path, None, {}, (200,)
        with self.lock:
            if self.posted and rng.random() < 0.25:
                body = rng.choice(self.posted)
            elif self.fresh:
                body = self.fresh.pop()
                self.posted.append(body)
            else:
                body = rng.choice(self.posted)
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        return "post", "POST", "/records", body, headers, (200, 201)


def _percentiles(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"


def _check_store(store: Path, posted: list[bytes]) -> list[str]:
    import duckdb

    wrong = []
    runs = {_digest(json.loads(body)["run"]) for body in posted}
    with duckdb.connect(str(store), read_only=True) as con:
        twice = con.execute(
            "SELECT count(*) FROM (SELECT digest FROM records GROUP BY digest HAVING count(*) > 1)"
        ).fetchone()
        facts_twice = con.execute(
            "SELECT count(*) FROM"
            " (SELECT digest FROM run_facts GROUP BY digest HAVING count(*) > 1)"
        ).fetchone()
        stored = {
            r[0]
            for r in con.execute(
                "SELECT digest FROM records WHERE kind = 'BenchmarkRun'"
            ).fetchall()
        }
    if twice and twice[0]:
        wrong.append(f"{twice[0]} digests stored twice")
    if facts_twice and facts_twice[0]:
        wrong.append(f"{facts_twice[0]} runs with two rows of facts")
    if lost := runs - stored:
        wrong.append(f"{len(lost)} posted runs not stored")
    return wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--seed-bundles", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as folder:
        store, token = Path(folder) / "index.kistore", Path(folder) / "token"
        token.write_text(TOKEN)
        bundles = list(complete_bundles(args.seed_bundles + 20_000, 7))
        seeding, fresh = bundles[: args.seed_bundles], bundles[args.seed_bundles :]
        process, host, port = _start(store, token)
        try:
            seeded_body = b"".join(json.dumps(b).encode() + b"\n" for b in seeding)
            connection = http.client.HTTPConnection(host, port, timeout=300)
            connection.request(
                "POST",
                "/records",
                seeded_body,
                {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-ndjson"},
            )
            assert connection.getresponse().status == 201
            connection.close()
            seeded = [_digest(b[m]) for b in seeding for m in ("run", "workload")]
            kernels = sorted({b["workload"]["spec"]["kernel"] for b in seeding})
            mix = Mix(seeded, [json.dumps(b).encode() for b in reversed(fresh)], kernels)
            load_before = os.getloadavg()
            until = time.monotonic() + args.seconds
            clients = [Client(host, port, until, mix, i) for i in range(args.clients)]
            started = time.monotonic()
            for client in clients:
                client.start()
            for client in clients:
                client.join()
            elapsed = time.monotonic() - started
            load_after = os.getloadavg()
        finally:
            process.terminate()
            process.wait(30)
        errors = [e for c in clients for e in c.errors]
        timings: dict[str, list[float]] = {"read": [], "query": [], "post": []}
        for client in clients:
            for kind, values in client.timings.items():
                timings[kind] += values
        total = sum(len(v) for v in timings.values())
        rate = total / elapsed
        print(f"{args.clients} clients, {elapsed:.1f} s, {total} requests, {rate:.0f} req/s")
        for kind, values in timings.items():
            print(f"  {kind:6} {len(values):6} requests  {_percentiles(values)}")
        everything = [v for values in timings.values() for v in values]
        print(f"  all    {total:6} requests  {_percentiles(everything)}")
        print(f"  posted {len(set(mix.posted))} distinct bundles")
        cores = os.cpu_count()
        print(
            f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} ({cores} cores)"
        )
        wrong = _check_store(store, mix.posted)
        for line in errors[:20] + wrong:
            print("ERROR:", line)
        print(f"errors: {len(errors)}; store check: {'ok' if not wrong else 'FAILED'}")
        raise SystemExit(1 if errors or wrong else 0)


if __name__ == "__main__":
    main()
