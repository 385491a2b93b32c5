"""The layers of the SDK, enforced: each folder imports only from the folders below it.

Lowest first (``docs/design.md`` draws the same picture):

0. ``base/`` and ``errors`` — problems and errors, printable lines, JSON pointers, files
   written whole, progress, wire facts, metric names, workers
1. ``reading/`` — strict JSON intake, JSON Lines and the tail memo, then where documents
   come from (sources, stores)
2. ``canonical`` — the canonical form and digests (``_canonical_scan``: its walk in C)
3. ``schema/`` — the schema registry, dialects, inlined and bundled forms
4. ``models/`` and ``checks/`` — the attrs models, the semantic rules of each version
5. ``validating/`` — the engines, the validation session, the document pipeline
6. ``compare/``, ``store/``, ``schemadiff/`` — what the commands answer
7. ``cli/``

A module may import its own layer and those below, never one above. On top of that:
nothing in the SDK imports ``bench_adapters``; nothing in the SDK outside ``cli``
imports ``cli``; adapters use the SDK's public modules only (no ``cli``, nothing
private). Every import counts — at module level, inside functions, or for typing only —
because a layer rule broken "only lazily" is still broken.

And no module of the SDK or of the adapters takes another module's ``_private`` names
(``from x import _name``, or ``x._name`` on a module it imported): a private name is
its module's own, and a private module (``_name.py``) its package folder's own. Only the
modules of one folder share internals, through that folder's private modules.

Nor does any module of the SDK need another that needs it: no import circles, every
import counted as above, but for ``from package import module``, which names the
module and only passes through the package's ``__init__``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "kernelindex_sdk"

#: Each entry at the top of ``kernelindex_sdk`` (a folder or a module) → its layer.
LAYERS: dict[str, int] = {
    "base": 0,
    "errors": 0,
    "reading": 1,
    "canonical": 2,
    "_canonical_scan": 2,
    "schema": 3,
    "models": 4,
    "checks": 4,
    "validating": 5,
    "compare": 6,
    "store": 6,
    "schemadiff": 6,
    "site": 6,
    "cli": 7,
    "serve": 7,
}
#: Within ``reading/``, sources reads files through intake, never the reverse; the tail
#: memo reads lines with intake's fast path (and intake takes a memo only as an argument).
ORDER_WITHIN = {
    ("reading.intake", "reading.sources"),
    ("reading.intake", "reading.sharedtails"),
    ("reading.sharedtails", "reading.sources"),
}


def _modules(package: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _imports(name: str, path: Path, packages: bool = True) -> Iterator[tuple[str, int]]:
    """Every module an import statement names, with its line. Without ``packages``, the
    package of ``from package import module`` is left out where only its modules are
    named: the statement runs the package's ``__init__`` but uses nothing of it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            module = _from_module(node, package)
            # ``from kernelindex_sdk import checks`` names a module
            named = [m for a in node.names if _is_module(m := f"{module}.{a.name}")]
            if packages or len(named) < len(node.names):
                yield module, node.lineno
            for candidate in named:
                yield candidate, node.lineno


def _from_module(node: ast.ImportFrom, package: str) -> str:
    """The module ``from … import`` takes from, its dots read from ``package``."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module of ours: Python source, a package, or a
    compiled module (its ``.pyi`` stub beside its C source)."""
    path = ROOT.joinpath(*dotted.split("."))
    return (
        path.with_suffix(".py").is_file()
        or path.with_suffix(".pyi").is_file()
        or (path / "__init__.py").is_file()
    )


def _layer(module: str) -> tuple[int, str] | None:
    """The layer of ``module`` and its place: the top entry, and the module under it."""
    parts = module.split(".")
    if parts[0] != "kernelindex_sdk" or len(parts) < 2:
        return None  # the facade (``import kernelindex_sdk``) or another package
    top = parts[1]
    assert top in LAYERS, f"kernelindex_sdk.{top} has no layer: add it to LAYERS"
    return LAYERS[top], ".".join(parts[1:3])


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
                yield (
                    f"{where}: layer {target[0]} ({target[1].split('.')[0]}) above layer"
                    f" {own[0]} ({own[1].split('.')[0]})"
                )
            elif target[0] == own[0] and (own[1], target[1]) in ORDER_WITHIN:
                yield f"{where}: {own[1]} sits below {target[1]}"


def test_every_module_has_a_layer() -> None:
    for name, _ in _modules(SDK):
        _layer(name)


def test_the_sdk_imports_only_downwards() -> None:
    assert list(_violations()) == []


def _circles(package: Path) -> list[frozenset[str]]:
    """The import circles among the modules of ``package``: each strongly connected set
    of two or more modules (Tarjan's algorithm), every import counted as the layer check
    counts it, but for the package a ``from package import module`` only passes through."""
    graph: dict[str, set[str]] = {}
    for name, path in _modules(package):
        graph[name] = {m for m, _ in _imports(name, path, packages=False)}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in sorted(graph[module] & graph.keys()):
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            circle = {stack.pop()}
            while module not in circle:
                circle.add(stack.pop())
            if len(circle) > 1:
                found.append(frozenset(circle))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return found


def test_no_import_circles() -> None:
    """No two modules of the SDK need each other, however lazily: a circle means neither
    can be read, tested or loaded without the other, and its order of imports decides
    what works."""
    assert [sorted(circle) for circle in _circles(SDK)] == []


@pytest.mark.parametrize(
    ("source", "circle"),
    [
        ("from kernelindex_sdk.schema.registry import x\n", True),
        ("def f():\n    from kernelindex_sdk.schema import registry\n", True),
        ("import typing\nif typing.TYPE_CHECKING:\n    from .schema import registry\n", True),
        # Only the package's __init__ runs, and it imports nothing.
        ("from kernelindex_sdk import schema\n", False),
    ],
)
def test_the_circle_check_can_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, circle: bool
) -> None:
    """A planted circle, ``canonical`` and ``schema.registry`` importing each other, is
    found however ``canonical`` imports; a package named on the way is no edge."""
    fake = tmp_path / "kernelindex_sdk"
    (fake / "schema").mkdir(parents=True)
    for name in ("__init__.py", "schema/__init__.py"):
        (fake / name).write_text("", encoding="utf-8")
    (fake / "schema" / "registry.py").write_text(
        "from kernelindex_sdk import canonical\n", encoding="utf-8"
    )
    (fake / "canonical.py").write_text(source, encoding="utf-8")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    expected = {"kernelindex_sdk.canonical", "kernelindex_sdk.schema.registry"}
    assert _circles(fake) == ([frozenset(expected)] if circle else [])


def public_modules() -> set[str]:
    """The public line: the modules docs/library.md lists between its markers."""
    text = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    listed = text.split("<!-- public-modules -->")[1].split("<!-- /public-modules -->")[0]
    return set(re.findall(r"`(kernelindex_sdk(?:\.[a-z_0-9]+)*)`", listed))


def test_the_public_line_names_modules_that_exist() -> None:
    found = public_modules()
    assert "kernelindex_sdk.errors" in found and len(found) > 10
    assert [m for m in sorted(found) if m != "kernelindex_sdk" and not _is_module(m)] == []


def test_adapters_use_the_public_sdk() -> None:
    assert list(_adapter_violations()) == []


def test_the_public_line_check_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "library.md").write_text(
        (ROOT / "docs" / "library.md").read_text(encoding="utf-8"), encoding="utf-8"
    )
    for folder in ("kernelindex_sdk", "kernelindex_sdk/validating", "bench_adapters"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("", encoding="utf-8")
    for module in ("fastengine", "pipeline"):
        (tmp_path / "kernelindex_sdk" / "validating" / f"{module}.py").write_text("")
    (tmp_path / "bench_adapters" / "x.py").write_text(
        "from kernelindex_sdk.validating import pipeline\n"
        "from kernelindex_sdk.validating.fastengine import FastEngine\n",
        encoding="utf-8",
    )
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    found = list(_adapter_violations())
    assert len(found) == 1 and "imports kernelindex_sdk.validating.fastengine" in found[0]


def _adapter_violations() -> Iterator[str]:
    public = public_modules()
    for name, path in _modules(ROOT / "bench_adapters"):
        imports = list(_imports(name, path))
        for imported, line in imports:
            if imported.split(".")[0] != "kernelindex_sdk" or not _is_module(imported):
                continue  # (a name imported from a module is judged with its module)
            if any(i.startswith(imported + ".") and n == line for i, n in imports):
                continue  # a folder named on the way to the module imported from it
            if imported not in public:
                yield f"{path.relative_to(ROOT)}:{line}: {name} imports {imported}"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _reaches_in(target: str, folder: str, name_is_private: bool) -> bool:
    """Whether importing from module ``target`` (a private name of it when
    ``name_is_private``) from a module of package ``folder`` takes what is not its own:
    a private module of another folder, or a private name of any module but a private
    module of ``folder`` itself."""
    parts = target.split(".")
    for at, part in enumerate(parts):
        if _private(part):
            return ".".join(parts[:at]) != folder
    return name_is_private


def _private_imports(name: str, path: Path) -> Iterator[str]:
    """Where module ``name`` takes another module's private names (module docstring)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    folder = name if path.name == "__init__.py" else name.rpartition(".")[0]
    modules: dict[str, str] = {}  # a local name bound to a module of ours → the module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in _OURS:
                    bound = alias.asname or alias.name.split(".")[0]
                    modules[bound] = alias.name if alias.asname else bound
                    if _reaches_in(alias.name, folder, False):
                        yield f"{node.lineno}: import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            module = _from_module(node, folder)
            if module.split(".")[0] not in _OURS:
                continue
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                if _is_module(candidate):
                    modules[alias.asname or alias.name] = candidate
                    private = _reaches_in(candidate, folder, False)
                else:
                    private = _reaches_in(module, folder, _private(alias.name))
                if private:
                    yield f"{node.lineno}: from {module} import {alias.name}"
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        chain, value = [], node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in modules:
            target = ".".join([modules[value.id], *reversed(chain)])
            if _is_module(target) and _reaches_in(target, folder, True):
                yield f"{node.lineno}: {target}.{node.attr}"


#: The packages whose modules keep to each other's public names.
_OURS = ("kernelindex_sdk", "bench_adapters")


def _private_violations() -> Iterator[str]:
    for package in _OURS:
        for name, path in _modules(ROOT / package):
            for found in _private_imports(name, path):
                yield f"{path.relative_to(ROOT)}:{found}"


def test_no_module_takes_another_modules_private_names() -> None:
    assert list(_private_violations()) == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("canonical.py", "from kernelindex_sdk.schema.registry import _kind_of\n", "_kind_of"),
        (
            "canonical.py",
            "from kernelindex_sdk.schema import registry\nregistry._kind_of\n",
            "registry._kind_of",
        ),
        (
            "canonical.py",
            "import kernelindex_sdk.schema.registry as r\nr._kind_of()\n",
            "registry._kind_of",
        ),
        ("canonical.py", "from kernelindex_sdk.schema._inner import x\n", "schema._inner import x"),
        ("canonical.py", "from kernelindex_sdk.schema import _inner\n", "import _inner"),
        # A sibling's private names, unless the sibling is a private module of the folder.
        ("schema/other.py", "from kernelindex_sdk.schema.registry import _kind_of\n", "_kind_of"),
        ("schema/other.py", "from ._inner import _y\nfrom . import _inner\n", None),
        ("schema/__init__.py", "from kernelindex_sdk.schema._inner import _y\n", None),
        ("schema/_inner.py", "def _y(): ...\n", None),
    ],
)
def test_the_private_names_check_catches_what_it_claims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, source: str, expected: str | None
) -> None:
    """Planted imports of private names: each one across a folder, or of a public
    module's private name, is found; one within a folder through its private module is
    not."""
    fake = tmp_path / "kernelindex_sdk"
    for folder in (fake, fake / "schema", tmp_path / "bench_adapters"):
        folder.mkdir()
        (folder / "__init__.py").write_text("", encoding="utf-8")
    for name in ("canonical.py", "schema/registry.py", "schema/_inner.py", "schema/other.py"):
        (fake / name).write_text("def _kind_of(): ...\ndef _y(): ...\nx = 1\n", encoding="utf-8")
    (fake / module).write_text(source, encoding="utf-8")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    found = list(_private_violations())
    if expected is None:
        assert found == []
    else:
        assert len(found) == 1 and expected in found[0], found


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from kernelindex_sdk.cli import main\n", "layer 7 (cli) above layer 2 (canonical)"),
        ("import bench_adapters.liger\n", "the SDK never imports an adapter"),
        ("def f():\n    from kernelindex_sdk.schema import registry\n", "layer 3 (schema)"),
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
    (fake / "schema").mkdir()
    (fake / "schema" / "__init__.py").write_text("", encoding="utf-8")
    (fake / "schema" / "registry.py").write_text("", encoding="utf-8")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "SDK", fake)
    found = list(_violations())
    assert found and all(expected in line for line in found), found
