"""Workload and Implementation records for :func:`~bench_adapters.recording.recorder.record`.

A workload is what was computed: built here from the call's arguments — each tensor
(anything with ``shape`` and ``dtype``) as its shape (``4096x1024``), each plain number,
string or flag as itself — and the dtype of the first tensor, spelled as the format's
dtype slugs (``bf16``, through the Liger importer's dtype table: one definition). An
implementation is who computed it: a package name and version (the installed one,
read from package metadata, when not given) and the callable measured;
:func:`implementation_of` names a callable after itself: its module and qualified name,
the distribution that provides its module and that distribution's version, and the
git commit of the repository its source file lives in (``-dirty`` when the work tree
has changes).
"""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import json
import platform
import subprocess
import sys
import sysconfig
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench_adapters.common.names import record_name, slug
from bench_adapters.common.records import workload_record
from bench_adapters.liger.catalog import load_catalog
from kernelindex_sdk import models as m

#: The workload dtype of a call with no tensor in it.
NO_TENSOR_DTYPE = "none"


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def dtype_slug(dtype: Any) -> str:
    """``torch.bfloat16`` → ``bf16`` (the importer's table), else its name as a slug."""
    text = str(dtype)
    known = load_catalog().dtypes
    return known.get(text) or known.get(text.lower()) or slug(text.removeprefix("torch."))


def workload_for(
    kernel: str,
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    pass_: str = "forward",
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The Workload of ``kernel`` called with ``args`` and ``kwargs``."""
    parameters: dict[str, Any] = {}
    dtype: str | None = None
    named = [(f"arg{i}", value) for i, value in enumerate(args)]
    named += list((kwargs or {}).items())
    for name, value in named:
        key = slug(name)
        if _is_tensor(value):
            parameters[key] = "x".join(str(int(n)) for n in value.shape) or "scalar"
            this = dtype_slug(value.dtype)
            if dtype is None:
                dtype = this
            elif this != dtype:
                parameters[f"{key}_dtype"] = this
        elif isinstance(value, bool | str) or (
            isinstance(value, int | float) and abs(value) <= 2**53 - 1
        ):
            parameters[key] = value
    spec = m.WorkloadSpec(
        kernel=slug(kernel),
        pass_=pass_,  # type: ignore[arg-type]  # checked by validate, as every field
        parameters=dict(sorted(parameters.items())),
        dtype=dtype or NO_TENSOR_DTYPE,
        settings=dict(settings) if settings else None,
    )
    shape = "-".join(f"{k}{v}" for k, v in spec.parameters.items())
    return workload_record(
        record_name(f"{kernel}-{pass_}-{shape}-{spec.dtype}"),
        f"{kernel} · {pass_} · {shape or 'no parameters'} · {spec.dtype}",
        spec,
    )


def entry_point_of(fn: Callable[..., Any]) -> str:
    """``package.module.function`` of a callable (its qualified name where it has one)."""
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if name is None:
        name = type(fn).__qualname__
    return f"{module}.{name}" if module else str(name)


def implementation_for(
    package: str | None,
    version: str | None = None,
    *,
    provider: str | None = None,
    fn: Callable[..., Any] | None = None,
    backend: str | None = None,
    repository: str | None = None,
    revision: str | None = None,
    path: str | None = None,
) -> dict[str, Any]:
    """The Implementation of ``fn`` from ``package`` (its installed version if not given).

    A package that is not installed and has no version given is recorded without a
    version: never guessed.
    """
    if package and version is None:
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            version = None
    spec = m.ImplementationSpec(
        provider=slug(provider or package or "unknown"),
        backend=slug(backend) if backend else None,
        package=m.Package(package, version or None) if package else None,
        entry_point=entry_point_of(fn)[:4096] if fn is not None else None,
        source=m.SourceLocation(repository, revision, path) if repository else None,
    )
    title = spec.provider + (f" · {package} {version}" if package and version else "")
    name = f"impl-{spec.provider}" + (f"-{version}" if version else "")
    if fn is not None:
        name += f"-{getattr(fn, '__name__', 'fn')}"
    metadata = m.Metadata(name=record_name(name), title=title)
    return dict(m.unstructure(m.Implementation(metadata=metadata, spec=spec)))


#: How long a ``git`` question may take before the answer is given up as unknown.
GIT_TIMEOUT_S = 5


def implementation_of(fn: Callable[..., Any], *, backend: str | None = None) -> dict[str, Any]:
    """The Implementation of ``fn`` named after ``fn`` itself (the module doc): the
    distribution providing its module (its version from package metadata), else its
    top-level module (``python`` at this interpreter's version for the standard
    library); the git commit of its source file's repository where there is one."""
    module = getattr(fn, "__module__", None) or ""
    top = module.partition(".")[0]
    version = None
    file = _source_file(fn, module)
    source = None
    if top == "builtins" or top in sys.stdlib_module_names:
        package: str | None = "python"
        version = platform.python_version()
    else:
        package = (_distribution(top, file) if top else None) or top or None
        source = _git_source(file)
    repository, revision, path = source if source else (None, None, None)
    return implementation_for(
        package,
        version,
        provider=package,
        fn=fn,
        backend=backend,
        repository=repository,
        revision=revision,
        path=path,
    )


@functools.lru_cache(maxsize=1)
def _distributions() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()


@functools.lru_cache(maxsize=1)
def _editable() -> tuple[tuple[Path, str], ...]:
    """(project folder, distribution) of each editable install: their modules are
    found through an import hook, which ``packages_distributions`` does not see."""
    found = []
    for dist in importlib.metadata.distributions():
        text = dist.read_text("direct_url.json")
        if not text or '"editable": true' not in text.replace("'", '"'):
            continue
        url = json.loads(text).get("url", "")
        if isinstance(url, str) and url.startswith("file://"):
            folder = Path(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
            found.append((folder.resolve(), str(dist.metadata["Name"])))
    return tuple(found)


def _distribution(top: str, file: Path | None) -> str | None:
    """The installed distribution that provides the top-level module ``top`` (whose
    source is ``file``)."""
    try:
        found = _distributions().get(top) or []
        if not found and file is not None:
            found = [name for folder, name in _editable() if file.is_relative_to(folder)]
    except Exception:  # a broken installation: no name rather than a wrong one
        return None
    return sorted(found)[0] if found else None


def _source_file(fn: Callable[..., Any], module: str) -> Path | None:
    try:
        name = inspect.getsourcefile(fn)
    except TypeError:
        name = getattr(sys.modules.get(module), "__file__", None)
    return Path(name).resolve() if name else None


def _git_source(file: Path | None) -> tuple[str, str, str] | None:
    """(repository URI, commit with ``-dirty`` if changed, path in it) of ``file``."""
    if file is None or not file.exists() or _installed(file):
        return None
    return _git_answer(file.parent, file.name)


def _installed(file: Path) -> bool:
    """Whether ``file`` lies where installed packages live (a virtual environment inside
    a repository is not that repository's code)."""
    paths = sysconfig.get_paths()
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        where = paths.get(key)
        if where and file.is_relative_to(Path(where).resolve()):
            return True
    return False


@functools.lru_cache(maxsize=64)
def _git_answer(folder: Path, name: str) -> tuple[str, str, str] | None:
    root = _git(folder, "rev-parse", "--show-toplevel")
    commit = _git(folder, "rev-parse", "HEAD")
    if not root or not commit:
        return None
    dirty = _git(folder, "status", "--porcelain", "--untracked-files=no")
    remote = _remote_uri(_git(folder, "config", "--get", "remote.origin.url"))
    repository = remote or Path(root).as_uri()
    try:
        path = (folder / name).relative_to(Path(root).resolve()).as_posix()
    except ValueError:  # the root spelled through another link: the name alone
        path = name
    return repository, commit + ("-dirty" if dirty else ""), path


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _remote_uri(url: str | None) -> str | None:
    """A remote's URL as a URI without credentials; None where it is not one."""
    if not url:
        return None
    parts = urllib.parse.urlsplit(url)
    if not parts.scheme or not parts.netloc or len(parts.scheme) < 2:
        return None
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
