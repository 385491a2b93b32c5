"""The layers of the SDK, enforced: each module imports only from the layers below it.

Lowest first (``docs/design.md`` says why):

0. shared base — problems and errors, printable lines, JSON pointers, files, progress,
   wire facts, metric names
1. strict JSON intake, then where documents come from (sources)
2. canonical form and digests
3. schema registry
4. models
5. validation engine and the document pipeline (checks, sessions, executor)
6. compare
7. CLI

A module may import its own layer and those below, never one above. On top of that:
nothing in the SDK imports ``bench_adapters``; nothing in the SDK outside ``cli``
imports ``cli``; adapters use the SDK's public modules only (no ``cli``, nothing
private). Every import counts — at module level, inside functions, or for typing only —
because a layer rule broken "only lazily" is still broken.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "kernelindex_sdk"

#: First dotted part under ``kernelindex_sdk`` → layer.
LAYERS: dict[str, int] = {
    "errors": 0,
    "printable": 0,
    "suggest": 0,
    "pointers": 0,
    "fileio": 0,
    "wholewrite": 0,
    "progress": 0,
    "wire": 0,
    "frozenvalue": 0,
    "lightimport": 0,
    "metrics": 0,
    "jsontext": 0,
    "timebox": 0,
    "intake": 1,
    "sharedtails": 1,
    "positions": 1,
    "storefile": 1,
    "sources": 1,
    "canonical": 2,
    "registry": 3,
    "versionstatus": 3,
    "bundled": 3,
    "dialects": 3,
    "inlining": 3,
    "schemafiles": 3,
    "models": 4,
    "engine": 5,
    "fastengine": 5,
    "checks": 5,
    "validation": 5,
    "digesting": 5,
    "parallel": 5,
    "pipeline": 5,
    "strategies": 5,
    "lifecycle": 5,
    "schemadiff": 5,
    "daskvalidate": 5,
    "fingerprint": 5,
    "compare": 6,
    "store": 6,
    "cli": 7,
}
#: Within layer 1, sources reads files through intake, never the reverse; the tail memo
#: reads lines with intake's fast path (and intake takes a memo only as an argument).
ORDER_WITHIN = {("intake", "sources"), ("intake", "sharedtails"), ("sharedtails", "sources")}


def _modules(package: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _imports(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """Every module an import statement names, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            yield module, node.lineno
            for alias in node.names:  # ``from kernelindex_sdk import checks`` names a module
                candidate = f"{module}.{alias.name}"
                if _is_module(candidate):
                    yield candidate, node.lineno


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _layer(module: str) -> tuple[int, str] | None:
    parts = module.split(".")
    if parts[0] != "kernelindex_sdk" or len(parts) < 2:
        return None  # the facade (``import kernelindex_sdk``) or another package
    top = parts[1]
    assert top in LAYERS, f"kernelindex_sdk.{top} has no layer: add it to LAYERS"
    return LAYERS[top], top


def _violations() -> Iterator[str]:
    for name, path in _modules(SDK):
        own = _layer(name)
        for imported, line in _imports(name, path):
            where = f"{path.relative_to(ROOT)}:{line}: {name} imports {imported}"
            if imported.split(".")[0] == "bench_adapters":
                yield f"{where}: the SDK never imports an adapter"
                continue
            if own is None:  # the facade re-exports everything, lazily
                continue
            target = _layer(imported)
            if target is None:
                continue
            if target[0] > own[0]:
                yield f"{where}: layer {target[0]} ({target[1]}) above layer {own[0]} ({own[1]})"
            elif target[0] == own[0] and (own[1], target[1]) in ORDER_WITHIN:
                yield f"{where}: {own[1]} sits below {target[1]}"


def test_every_module_has_a_layer() -> None:
    for name, _ in _modules(SDK):
        _layer(name)


def test_the_sdk_imports_only_downwards() -> None:
    assert list(_violations()) == []


def test_adapters_use_the_public_sdk() -> None:
    found = []
    for name, path in _modules(ROOT / "bench_adapters"):
        for imported, line in _imports(name, path):
            parts = imported.split(".")
            if parts[0] != "kernelindex_sdk":
                continue
            if "cli" in parts[1:2] or any(part.startswith("_") for part in parts[1:]):
                found.append(f"{path.relative_to(ROOT)}:{line}: {name} imports {imported}")
    assert found == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from kernelindex_sdk.cli import main\n", "layer 7 (cli) above layer 2 (canonical)"),
        ("import bench_adapters.liger\n", "the SDK never imports an adapter"),
        ("def f():\n    from kernelindex_sdk import registry\n", "layer 3 (registry)"),
    ],
)
def test_the_check_catches_what_it_claims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, expected: str
) -> None:
    """A check that cannot fail is no check: plant violations and see each one found."""
    fake = tmp_path / "kernelindex_sdk"
    fake.mkdir()
    (fake / "__init__.py").write_text("", encoding="utf-8")
    (fake / "canonical.py").write_text(source, encoding="utf-8")
    (fake / "cli").mkdir()
    (fake / "cli" / "__init__.py").write_text("", encoding="utf-8")
    (fake / "cli" / "main.py").write_text("", encoding="utf-8")
    (fake / "registry.py").write_text("", encoding="utf-8")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "SDK", fake)
    found = list(_violations())
    assert found and all(expected in line for line in found), found
