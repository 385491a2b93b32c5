"""The public surface of ``import kernelindex_sdk as ki``."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import kernelindex_sdk as ki
from kernelindex_sdk.base import fileio
from kernelindex_sdk.base.fileio import atomic_write_bytes, atomic_write_many


def test_every_exported_name_resolves() -> None:
    assert set(ki.__all__) == {*ki._EXPORTS, "models"}
    for name in ki.__all__:
        assert getattr(ki, name) is not None, name


def test_the_top_level_errors_are_those_a_caller_catches() -> None:
    """The base error and one class per kind of refusal a top-level function makes; the
    subclasses of IntakeError (which reason) are imported from ``kernelindex_sdk.errors``."""
    from kernelindex_sdk import errors

    top = {name for name in ki.__all__ if isinstance(getattr(ki, name), type)}
    assert {name for name in top if issubclass(getattr(ki, name), Exception)} == {
        "KernelIndexError",
        "IntakeError",
        "NotJSON",
        "NotARecord",
        "ModelError",
        "UnknownKind",
        "SchemaDirectoryError",
        "UnresolvableReference",
    }
    reasons = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, errors.IntakeError)
    } - {"IntakeError"}
    assert {"MalformedJSON", "DuplicateKey", "UnreadableFile", "NestingTooDeep"} <= reasons
    for name in reasons:
        assert not hasattr(ki, name), name
        assert issubclass(getattr(errors, name), ki.IntakeError)


def test_unknown_attribute() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = ki.nope  # type: ignore[attr-defined]


def test_importing_the_package_is_lazy() -> None:
    """A tool that only digests must not pay for jsonschema or cattrs."""
    code = (
        "import sys, kernelindex_sdk as ki;"
        "ki.digest({'apiVersion': 'a', 'kind': 'b', 'spec': {}});"
        "print(sorted(m for m in ('jsonschema', 'cattrs', 'click') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_atomic_write_modes_and_idempotence(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "a.json"
    assert atomic_write_bytes(target, b"{}") is True
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    target.chmod(0o640)
    assert atomic_write_bytes(target, b"{}") is False
    assert atomic_write_bytes(target, b"[]") is True
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # a replaced file keeps its mode
    assert [p.name for p in target.parent.iterdir()] == ["a.json"]  # no temp files left


def test_atomic_write_many_is_all_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [(tmp_path / f"{i}.json", b"%d" % i) for i in range(3)]
    real_mkstemp = fileio.tempfile.mkstemp
    calls = []

    def failing_mkstemp(*args: object, **kwargs: object) -> tuple[int, str]:
        calls.append(1)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real_mkstemp(*args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(fileio.tempfile, "mkstemp", failing_mkstemp)
    with pytest.raises(OSError):
        atomic_write_many(files)
    assert list(tmp_path.iterdir()) == []  # nothing renamed, temporaries removed
    monkeypatch.undo()
    assert atomic_write_many(files) == [True, True, True]
    assert atomic_write_many(files) == [False, False, False]
