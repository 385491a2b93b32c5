"""The wheel's build hook: compiles the C twins of two hot paths.

* ``kernelindex_sdk/_canonical_scan.c``, the twin of ``canonical._scan_values``: the
  walk that is the largest part of a digest's time in Python;
* ``kernelindex_sdk/checks/_runrules.c``, the twin of ``v1alpha1.run_spec_passes``: the
  quick rules every run of a JSON Lines stream is checked by.

Where a C compiler is (``CC``, else the one Python was built with), each is compiled
for the interpreter that builds the wheel:

* a wheel (``pip install .``, ``pip wheel .``) carries the modules and is tagged for
  this interpreter and platform;
* an editable install (``pip install -e .``) writes each module beside its source, as
  ``build_ext --inplace`` does (git-ignored), and the checkout imports it from there.

Without a compiler, on Windows, or with ``KERNELINDEX_NATIVE=0`` in the environment
(``kernelindex_sdk/base/native.py``, the switch's one definition), nothing is compiled
and the wheel is pure Python: the Python twins answer, with the same answers (each
module is used only where it gives its twin's answers on a probe, and the tests hold
each pair to each other).
"""

from __future__ import annotations

import os
import runpy
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: The C sources: each becomes the module of its path, less ``.c``.
SOURCES = (
    Path("kernelindex_sdk") / "_canonical_scan.c",
    Path("kernelindex_sdk") / "checks" / "_runrules.c",
)


def _compile_command(source: Path, target: Path) -> list[str] | None:
    """The command that builds ``source`` into the extension module ``target``, or None
    where no C compiler is known."""
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC")
    if sys.platform == "win32" or not compiler:
        return None
    command = shlex.split(compiler)
    if shutil.which(command[0]) is None:
        return None
    command += ["-shared", "-fPIC", "-O2", f"-I{sysconfig.get_paths()['include']}"]
    command += [str(source), "-o", str(target)]
    if sys.platform == "darwin":
        command += ["-undefined", "dynamic_lookup"]
    else:
        command.append("-lm")
    return command


def compile_native_module(source: Path, target: Path) -> str | None:
    """Compile ``source`` into ``target`` (written whole: a temporary file renamed into
    place, so a process that has the old one loaded keeps it); None, or why not."""
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    command = _compile_command(source, partial)
    if command is None:
        return "no C compiler"
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as error:
        partial.unlink(missing_ok=True)
        return f"{command[0]}: {error}"
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        return f"{command[0]} exited {done.returncode}: {last}"
    os.replace(partial, target)
    return None


class NativeModulesHook(BuildHookInterface):
    """Compiles :data:`SOURCES` for the wheel, or beside themselves for an editable
    install."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        # The switch is the package's own (base/native.py), read from its file: the
        # build's environment has none of the package's dependencies to import it with.
        native = runpy.run_path(str(root / "kernelindex_sdk" / "base" / "native.py"))
        if not native["native_allowed"]():
            self.app.display_info(f"{native['NATIVE_VARIABLE']}=0: no C module is built")
            return
        suffix = str(sysconfig.get_config_var("EXT_SUFFIX") or ".so")
        if version != "editable":
            self._work = tempfile.mkdtemp(prefix="kernelindex-native-")
        for source in SOURCES:
            name = source.stem + suffix
            if version == "editable":
                target = root / source.parent / name
            else:
                target = Path(self._work) / name
            failed = compile_native_module(root / source, target)
            if failed is not None:
                self.app.display_warning(
                    f"kernelindex: {source} was not built ({failed}); its Python twin "
                    "answers instead, with the same answers"
                )
            elif version != "editable":
                build_data["force_include"][str(target)] = (source.parent / name).as_posix()
                build_data["pure_python"] = False
                build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        work = getattr(self, "_work", None)
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
