"""Counts in words: ``1 file``, ``2 files``, in every summary a person reads."""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and the noun, singular for exactly one (``plural``: when not noun + s)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
