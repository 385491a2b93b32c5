"""Helpers of the server's tests: ``kernelindex serve`` in a real process on loopback,
and plain HTTP to it (the standard library's client: no other stack in between)."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "test-token-0123456789"


class Server:
    """``kernelindex serve STORE --port 0 ...`` started, its address read off its
    first line; stopped (SIGTERM, then SIGKILL) by :meth:`stop` or :meth:`kill`."""

    def __init__(self, store: Path, *options: str, token_file: Path | None = None) -> None:
        command = [sys.executable, "-m", "kernelindex_sdk.cli.main", "serve", str(store)]
        command += ["--port", "0", *options]
        if token_file is not None:
            command += ["--token-file", str(token_file)]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.log: list[str] = []
        self._ready = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()
        if not self._ready.wait(60):
            self.kill()
            raise AssertionError(f"the server did not start: {self.log}")
        first = self.log[0]
        if " on http://" not in first:
            self.process.wait(10)
            raise AssertionError(f"the server did not start: {self.log}")
        self.url = first.rsplit(" on ", 1)[1].strip()
        self.host, port = self.url.removeprefix("http://").rsplit(":", 1)
        self.port = int(port)

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self.log.append(raw.decode("utf-8", "replace"))
            self._ready.set()
        self._ready.set()

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 60,
    ) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            answer = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, answer
        finally:
            connection.close()

    def post(self, path: str, body: bytes, jsonl: bool = False, **headers: str) -> Any:
        sent = {"Authorization": f"Bearer {TOKEN}"}
        if jsonl:
            sent["Content-Type"] = "application/x-ndjson"
        sent.update({k.replace("_", "-"): v for k, v in headers.items()})
        return self.request("POST", path, body, sent)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(15)


def token_file(folder: Path) -> Path:
    path = folder / "token"
    path.write_text(TOKEN + "\n", "utf-8")
    return path


def wait_until(predicate: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)
