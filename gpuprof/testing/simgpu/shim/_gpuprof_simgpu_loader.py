"""How the two shims beside this file (sitecustomize.py and pynvml.py) reach the simulated GPU.

Every Python process of a simulated job runs one of them (torch imports pynvml while it loads), so
they must not import gpuprof by its public name: that would bind the job to whichever `gpuprof` is
first on sys.path (the program's own module of that name, or another installed gpuprof) and leave
it in sys.modules for the program. Instead the simulated GPU's package, found from this file's own
path, is loaded once per process under the private name `_gpuprof_simgpu` (its modules import each
other relatively), and gpuprof's post-import hook (gpuprof/capture/probes/post_import.py) under a private
name of its own."""

import importlib
import importlib.util
import os
import sys
import threading

PACKAGE = "_gpuprof_simgpu"
POST_IMPORT = "_gpuprof_simgpu_post_import"
SHIM = os.path.dirname(os.path.abspath(__file__))
SIMGPU = os.path.dirname(SHIM)
PROBES = os.path.join(os.path.dirname(os.path.dirname(SIMGPU)), "capture", "probes")

_lock = threading.RLock()


def module(name: str):
    """The simulated GPU's module `name` (e.g. "torch_face", "nvml_face"), as `_gpuprof_simgpu.<name>`."""
    with _lock:
        if PACKAGE not in sys.modules:
            _load(PACKAGE, os.path.join(SIMGPU, "__init__.py"), search=[SIMGPU])
    return importlib.import_module(f"{PACKAGE}.{name}")


def post_import_hook(callbacks: dict):
    """gpuprof's post-import hook calling `callbacks` ({module name: callable(module)}), installed."""
    with _lock:
        hooks = sys.modules.get(POST_IMPORT) or _load(POST_IMPORT, os.path.join(PROBES, "post_import.py"))
    hook = hooks.PostImportHook(callbacks)
    hook.install()
    return hook


def _load(name: str, path: str, search=None):
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=search)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    try:
        spec.loader.exec_module(loaded)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return loaded
