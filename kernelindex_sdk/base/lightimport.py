"""Third-party and standard imports made cheaper by standing in, briefly, for a
standard module each loads at import but barely uses (each a visible part of
``kernelindex validate one.json``'s start-up, benchmarks/README.md):

* jsonschema-rs's Rust module imports :mod:`email.utils` only to call
  ``parsedate_to_datetime`` once, on its own build date, for
  ``jsonschema_rs.jsonschema_rs.__build__["info-time"]``. The real module brings
  ``socket``, ``selectors``, ``random``, ``calendar``, ``base64`` and six ``email``
  modules. :func:`jsonschema_rs` imports it with a stand-in whose
  ``parsedate_to_datetime`` reads exactly the RFC 2822 form it is given
  (``Tue, 27 Oct 2026 10:17:51 +0000``) and defers to the real function for anything
  else.
* orjson imports :mod:`dataclasses` (to read one sentinel), and :mod:`dataclasses`
  imports :mod:`inspect` — with ``ast``, ``dis`` and ``tokenize`` — for one call,
  ``inspect.signature``, made only when a dataclass without a docstring is created.
* orjson imports :mod:`uuid`, which imports :mod:`platform` to call
  ``platform.system()`` once.
* :mod:`pathlib` imports ``quote_from_bytes`` from :mod:`urllib.parse` (with
  ``ipaddress``) for ``Path.as_uri``, which validation never calls.

:func:`standard_modules` imports the last three with those stand-ins; the package's
``__init__`` calls it. And a package whose names come from modules slow to import
gives them through :func:`names_on_first_use`, each module imported when one of its
names is first asked for.

Each stand-in is in ``sys.modules`` only while that one import runs, and only if the
real module was not loaded already (then the real one is used); afterwards
``sys.modules`` holds no stand-in, so a later import of it loads the real module. A stand-in
answers every other attribute from the real module (loading it, and putting it in the
stand-in's place in the modules that bound it), so even a thread that imported it
during the window gets the real functions. tests/test_lightimport.py checks all of this in fresh
processes.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

_DAYS = frozenset(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"))
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}


def jsonschema_rs() -> ModuleType:
    """The ``jsonschema_rs`` module, imported without the real :mod:`email.utils` when
    nothing has loaded it yet. Raises :class:`ImportError` as ``import jsonschema_rs``
    would. Every import of jsonschema-rs in the SDK goes through here."""
    module = sys.modules.get("jsonschema_rs")
    if module is not None:
        return module
    # Its initialisation imports decimal from Rust and panics if that import fails: a
    # Ctrl-C during that import would be a pyo3 PanicException (a traceback, exit 1),
    # not a KeyboardInterrupt. Imported here first, in Python, an interruption is one.
    import decimal  # noqa: F401

    standin = _standin("email.utils", parsedate_to_datetime=_parsedate_to_datetime)
    with _StandingIn("email.utils", standin):
        import jsonschema_rs
    return jsonschema_rs


def names_on_first_use(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package`` (``namespace``: its globals) for the
    names in ``exports``, each mapped to the module that defines it: that module is
    imported when one of its names is first asked for, and the name is kept in the
    package after that. Any other name is an :class:`AttributeError`, worded as for a
    module without ``__getattr__``."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__


def standard_modules() -> None:
    """Import, each unless already loaded, :mod:`dataclasses` without :mod:`inspect`,
    :mod:`uuid` without :mod:`platform` (orjson imports both) and :mod:`pathlib` without
    :mod:`urllib.parse` (the registry and most of the SDK use it), and :mod:`datetime`
    and :mod:`json`, which orjson imports too. The package's ``__init__`` calls this
    first, so it is the first import of each in an SDK process that has not loaded
    them."""
    _import_with("dataclasses", _standin("inspect"))
    _import_with("uuid", _standin("platform", system=_platform_system))
    quote = _forwarder("urllib.parse", "quote_from_bytes")
    _import_with("pathlib", _standin("urllib.parse", quote_from_bytes=quote))
    # orjson's initialisation imports datetime, uuid, dataclasses and json from native
    # code and crashes (SIGSEGV) when one of those imports fails: a Ctrl-C there killed
    # the process with no word. Imported here first, in Python, it is an interruption.
    import datetime  # noqa: F401
    import json  # noqa: F401


def _import_with(name: str, standin: ModuleType) -> None:
    """Import ``name`` (if not loaded) with ``standin`` standing in for its module."""
    if name not in sys.modules:
        with _StandingIn(standin.__name__, standin):
            __import__(name)


class _StandingIn:
    """``sys.modules[name]`` is ``standin`` inside the block, if ``name`` was not
    loaded; on leaving (also on failure) the stand-in is gone from ``sys.modules`` and
    from its parent package, and every module it was bound to as a global of that name
    gets the real module back when it next asks."""

    def __init__(self, name: str, standin: ModuleType) -> None:
        self.name = name
        self.standin = standin
        self.installed = False

    def __enter__(self) -> None:
        if self.name not in sys.modules:
            sys.modules[self.name] = self.standin
            self.installed = True

    def __exit__(self, *exc_info: object) -> None:
        if self.installed:
            _withdraw(self.name, self.standin)


def _withdraw(name: str, standin: ModuleType) -> None:
    """Remove ``standin`` from ``sys.modules`` and its package, where it still is."""
    if sys.modules.get(name) is standin:
        del sys.modules[name]
    parent, _, child = name.rpartition(".")
    package = sys.modules.get(parent) if parent else None
    if package is not None and package.__dict__.get(child) is standin:
        delattr(package, child)


#: In a stand-in's namespace: tells it from the real module.
_MARK = "__lightimport_standin__"
#: On a forwarding function: the module and attribute it stands for.
_FORWARDS = "__lightimport_forwards__"
#: Modules that bind a stand-in, or a function of one, as a global.
_HOLDERS = ("dataclasses", "uuid", "pathlib")


def _standin(name: str, **attributes: Any) -> ModuleType:
    """A module named ``name`` holding ``attributes``; anything else it is asked for
    (but dunder names, which the import system probes) comes from the real module,
    which asking loads."""
    standin = ModuleType(name, f"Stand-in for {name} while a module imports (lightimport).")
    standin.__dict__.update(attributes)
    standin.__dict__[_MARK] = True

    def __getattr__(attribute: str) -> Any:  # PEP 562: only what the stand-in lacks
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        return getattr(_real(name), attribute)

    standin.__dict__["__getattr__"] = __getattr__
    return standin


def _real(name: str) -> ModuleType:
    """The real module ``name``, imported now if need be, and put where a stand-in
    was: ``sys.modules``, its package, and the globals of the modules that bound it."""
    current = sys.modules.get(name)
    if current is not None and current.__dict__.get(_MARK):
        _withdraw(name, current)
    __import__(name)
    real = sys.modules[name]
    for holder in _HOLDERS:
        module = sys.modules.get(holder)
        if module is None:
            continue
        for key, value in list(module.__dict__.items()):
            if isinstance(value, ModuleType) and value.__dict__.get(_MARK):
                if value.__name__ == name:
                    setattr(module, key, real)
            elif callable(value):
                forwards = getattr(value, _FORWARDS, None)
                if forwards is not None and forwards[0] == name:
                    setattr(module, key, getattr(real, forwards[1]))
    return real


def _forwarder(name: str, attribute: str) -> Any:
    """A function that calls the real ``name.attribute`` (loading ``name``), for a
    stand-in whose module is imported from (``from urllib.parse import
    quote_from_bytes``); the first call puts the real function in its place."""

    def forward(*args: Any, **kwargs: Any) -> Any:
        return getattr(_real(name), attribute)(*args, **kwargs)

    forward.__name__ = forward.__qualname__ = attribute
    setattr(forward, _FORWARDS, (name, attribute))
    return forward


def _platform_system() -> str:
    """``platform.system()``, which uuid calls at import: ``Linux`` read from
    ``os.uname()`` as :mod:`platform` reads it; anything else from the real module."""
    import os

    uname = getattr(os, "uname", None)
    if uname is not None and uname().sysname == "Linux":
        return "Linux"
    system: str = _real("platform").system()
    return system


def _parsedate_to_datetime(text: str) -> Any:
    """``email.utils.parsedate_to_datetime(text)`` for the one form jsonschema-rs
    passes, ``Day, DD Mon YYYY HH:MM:SS +HHMM`` with a four-digit year; any other text,
    and any value the real function would refuse, goes to the real function."""
    import datetime

    if (
        isinstance(text, str)
        and len(text) == 31
        and text[3:5] == ", "
        and text[7] == text[11] == text[16] == text[25] == " "
        and text[19] == text[22] == ":"
        and text[26] == "+"
        and text[:3] in _DAYS
        and text[8:11] in _MONTHS
    ):
        digits = text[5:7] + text[12:16] + text[17:19] + text[20:22] + text[23:25] + text[27:31]
        if digits.isascii() and digits.isdigit() and text[12] != "0":
            offset = int(text[27:29]) * 3600 + int(text[29:31]) * 60
            try:
                return datetime.datetime(
                    int(text[12:16]),
                    _MONTHS[text[8:11]],
                    int(text[5:7]),
                    int(text[17:19]),
                    int(text[20:22]),
                    int(text[23:25]),
                    tzinfo=datetime.timezone(datetime.timedelta(seconds=offset)),
                )
            except ValueError:
                pass  # the real function raises its own error
    return _real("email.utils").parsedate_to_datetime(text)
