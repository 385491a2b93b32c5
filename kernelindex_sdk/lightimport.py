"""Two third-party imports made cheaper by standing in, briefly, for a standard module
each loads at import but barely uses.

* jsonschema-rs's Rust module imports :mod:`email.utils` only to call
  ``parsedate_to_datetime`` once, on its own build date, for
  ``jsonschema_rs.jsonschema_rs.__build__["info-time"]``. The real module brings
  ``socket``, ``selectors``, ``random``, ``calendar``, ``base64`` and six ``email``
  modules: ~45M instructions, 15 % of ``kernelindex validate one.json``
  (benchmarks/README.md). :func:`jsonschema_rs` imports it with a stand-in whose
  ``parsedate_to_datetime`` reads exactly the RFC 2822 form it is given
  (``Tue, 27 Oct 2026 10:17:51 +0000``) and defers to the real function for anything
  else.
* orjson imports :mod:`dataclasses` (to read one sentinel), and :mod:`dataclasses`
  imports :mod:`inspect` — with ``ast``, ``dis`` and ``tokenize``, ~35M instructions —
  for one call, ``inspect.signature``, made only when a dataclass without a docstring
  is created. :func:`dataclasses_without_inspect` imports :mod:`dataclasses` with a
  stand-in for :mod:`inspect` that becomes the real module on first use.

Each stand-in is in ``sys.modules`` only while that one import runs, and only if the
real module was not loaded already (then the real one is used); afterwards
``sys.modules`` holds no stand-in, so a later ``import email.utils`` or ``import
inspect`` loads the real module. A stand-in answers every other attribute from the
real module (loading it then), so even a thread that imported it during the window
gets the real functions. tests/test_lightimport.py checks all of this in fresh
processes.
"""

from __future__ import annotations

import sys
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
    standin = _standin("email.utils", parsedate_to_datetime=_parsedate_to_datetime)
    with _StandingIn("email.utils", standin):
        import jsonschema_rs
    return jsonschema_rs


def dataclasses_without_inspect() -> None:
    """Import :mod:`dataclasses` (orjson will) without :mod:`inspect`, unless it is
    loaded already. Its ``inspect`` global is a stand-in that, on first use, loads the
    real :mod:`inspect`, puts it in its place and answers from it."""
    if "dataclasses" in sys.modules:
        return
    standin = _standin("inspect")
    with _StandingIn("inspect", standin):
        import dataclasses  # noqa: F401


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
#: Modules known to bind a stand-in as a global (``import inspect`` in dataclasses).
_HOLDERS = ("dataclasses",)


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
        if module is not None:
            for key, value in list(module.__dict__.items()):
                if isinstance(value, ModuleType) and value.__dict__.get(_MARK):
                    setattr(module, key, real)
    return real


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
