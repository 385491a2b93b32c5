"""Timing plain Python with the kernel_bench fixture (docs/recording.md): no GPU needed."""

import json

TEXTS = {rows: json.dumps([{"id": i, "name": f"row {i}"} for i in range(rows)]) for rows in (50,)}


def checksum(data: bytes) -> int:
    total = 0
    for byte in data:
        total = (total * 31 + byte) & 0xFFFFFFFF
    return total


def parse(rows: int) -> list:
    return json.loads(TEXTS[rows])


def test_checksum(kernel_bench):
    assert kernel_bench(checksum, b"kernelindex" * 20) == checksum(b"kernelindex" * 20)


def test_parse(kernel_bench):
    kernel_bench.measure(parse, 50, timer="cpu", reference=lambda rows: json.loads(TEXTS[rows]))
