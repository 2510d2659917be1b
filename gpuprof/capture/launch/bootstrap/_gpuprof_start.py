"""Starts gpuprof in one Python 3.10+ process of the job. The bootstrap's sitecustomize loads this
file by its path; it is never imported by name.

gpuprof's package is loaded from its folder under a private name, without touching sys.path: the
program's `import gpuprof` (its own gpuprof.py, or none) is what plain python would give it.

Under `-X importtime` (or PYTHONPROFILEIMPORTTIME) the interpreter lists each module that an import
statement loads. gpuprof's own imports then go through importlib's pure-Python `__import__`, which
that list does not time, so the program's list shows only the program's modules: gpuprof's modules
get builtins whose `__import__` is that one, and while it runs it stands in for every import it
sets off (the standard library modules gpuprof needs). Without the option nothing of this is done.
"""

import builtins
import os
import sys

PRIVATE_NAME = "_gpuprof_job"     # gpuprof's package inside the job's processes
SETTINGS_ENV = "GPUPROF_BOOTSTRAP"
_machinery = sys.modules["_frozen_importlib"]
_external = sys.modules["_frozen_importlib_external"]


def start() -> None:
    """Load gpuprof's probes and start them; a failure is written to the run folder, never raised."""
    raw = os.environ.get(SETTINGS_ENV)
    if not raw:
        return
    quiet = import_time_listed()
    original = builtins.__import__
    if quiet:
        builtins.__import__ = quiet_import
    settings = {}
    try:
        import json

        settings = json.loads(raw)
        boot = _load_boot(os.path.join(settings["root"], "gpuprof"), quiet)
        boot.start(settings)
    except Exception as exc:  # never let gpuprof break the program
        _note_failure(settings, exc)
    finally:
        if quiet:
            builtins.__import__ = original


def import_time_listed() -> bool:
    """True when this interpreter lists its imports' times on stderr."""
    if sys._xoptions.get("importtime"):
        return True
    return bool(os.environ.get("PYTHONPROFILEIMPORTTIME")) and not sys.flags.ignore_environment


def _load_boot(package_dir: str, quiet: bool):
    init = os.path.join(package_dir, "__init__.py")
    loader = (QuietSourceLoader if quiet else _external.SourceFileLoader)(PRIVATE_NAME, init)
    spec = _external.spec_from_file_location(PRIVATE_NAME, init, loader=loader,
                                             submodule_search_locations=[package_dir])
    package = _machinery.module_from_spec(spec)
    sys.modules[PRIVATE_NAME] = package
    spec.loader.exec_module(package)
    import importlib

    return importlib.import_module(PRIVATE_NAME + ".capture.probes.boot")


def quiet_import(name, globals=None, locals=None, fromlist=(), level=0):
    """`__import__` that the import-time list does not show, for gpuprof's imports and theirs."""
    if builtins.__import__ is quiet_import:
        return _machinery.__import__(name, globals, locals, fromlist, level)
    saved = builtins.__import__
    builtins.__import__ = quiet_import
    try:
        return _machinery.__import__(name, globals, locals, fromlist, level)
    finally:
        builtins.__import__ = saved


_quiet_builtins = {}


def _quieten(module) -> None:
    """Give a module of gpuprof's the quiet `__import__`; a package's submodules get it too."""
    if not _quiet_builtins:
        _quiet_builtins.update(builtins.__dict__, __import__=quiet_import)
    module.__builtins__ = _quiet_builtins
    for entry in getattr(module, "__path__", None) or ():
        sys.path_importer_cache[entry] = _external.FileFinder(
            entry, (QuietSourceLoader, _external.SOURCE_SUFFIXES), (QuietSourcelessLoader, _external.BYTECODE_SUFFIXES))


class QuietSourceLoader(_external.SourceFileLoader):
    def exec_module(self, module):
        _quieten(module)
        super().exec_module(module)


class QuietSourcelessLoader(_external.SourcelessFileLoader):
    def exec_module(self, module):
        _quieten(module)
        super().exec_module(module)


def _note_failure(settings: dict, exc: Exception) -> None:
    try:
        with open(os.path.join(settings["run_dir"], "bootstrap-errors.log"), "a") as log:
            log.write(f"{os.getpid()}: {exc.__class__.__name__}: {exc}\n")
    except Exception:
        pass
