"""Counts and sizes in words, for every summary, message and bar a person reads:
``1 file``, ``2 files``, ``1.5 MiB``."""

from __future__ import annotations

__all__ = ["byte_size", "counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and the noun, singular for exactly one (``plural``: when not noun + s)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def byte_size(size: int) -> str:
    """A byte count in binary units: ``256 MiB``, ``1.5 KiB``, ``12 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            value = size / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return counted(size, "byte")
