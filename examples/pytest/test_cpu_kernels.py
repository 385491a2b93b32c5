"""Timing plain Python with the kernel_bench fixture (docs/recording.md): no GPU needed."""

import json

TEXT = json.dumps({"rows": [{"id": i, "name": f"row {i}"} for i in range(50)]})


def checksum(data: bytes) -> int:
    total = 0
    for byte in data:
        total = (total * 31 + byte) & 0xFFFFFFFF
    return total


def test_checksum(kernel_bench):
    assert kernel_bench(checksum, b"kernelindex" * 20) == checksum(b"kernelindex" * 20)


def test_parse(kernel_bench):
    kernel_bench.measure(json.loads, TEXT, timer="cpu", reference=lambda text: json.loads(text))
