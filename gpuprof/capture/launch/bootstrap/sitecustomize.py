"""gpuprof's bootstrap, found through PYTHONPATH by every Python process of a profiled job.

Any interpreter the job starts finds it, python2.7 and old python3 included, so this file keeps to
syntax they all parse and to what they all can do, and prints nothing. It takes its folder back off
sys.path, runs the sitecustomize plain python would have run (once, found on sys.path as it is now),
and, on Python 3.10+, starts gpuprof's probes (_gpuprof_start.py). Afterwards
sys.modules['sitecustomize'] is what plain python would hold: the user's module, or nothing at all
(the bootstrap ends with the ImportError that `site` takes for "there is none"), so that a later
`import sitecustomize` finds what it would have found. Only the user's own sitecustomize's error
leaves this module, for `site` to report as it would without gpuprof.
"""

import os
import sys


def _gpuprof_bootstrap():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if not _same_dir(entry, here)]
    for entry in [key for key in sys.path_importer_cache if _same_dir(key, here)]:
        del sys.path_importer_cache[entry]
    error = None
    try:
        found = _run_own_sitecustomize()
    except BaseException:
        found, error = True, sys.exc_info()[1]
    if sys.version_info >= (3, 10) and os.environ.get("GPUPROF_BOOTSTRAP"):
        _start_probes(os.path.join(here, "_gpuprof_start.py"))
    if error is not None:
        raise error
    if not found:
        raise _none_found()


def _same_dir(entry, here):
    try:
        return os.path.abspath(entry or os.curdir) == here
    except Exception:
        return False


def _run_own_sitecustomize():
    """Runs the sitecustomize the import system finds now; False when there is none."""
    if sys.version_info < (3, 5):
        return _run_with_imp()
    machinery = sys.modules["_frozen_importlib"]
    spec = None
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        spec = find_spec("sitecustomize", None) if find_spec is not None else None
        if spec is not None:
            break
    if spec is None or spec.loader is None:
        return False
    module = machinery.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)
    return True


def _run_with_imp():
    import imp

    try:
        found = imp.find_module("sitecustomize", sys.path)
    except ImportError:
        return False
    try:
        imp.load_module("sitecustomize", *found)
    finally:
        if found[0] is not None:
            found[0].close()
    return True


def _none_found():
    try:
        return ImportError("No module named 'sitecustomize'", name="sitecustomize")
    except TypeError:
        return ImportError("No module named sitecustomize")


def _start_probes(path):
    """Loads _gpuprof_start.py by its path (no name in sys.modules, nothing the import-time report
    lists) and starts the probes; any failure leaves the program without them."""
    try:
        spec = sys.modules["_frozen_importlib_external"].spec_from_file_location("_gpuprof_start", path)
        module = sys.modules["_frozen_importlib"].module_from_spec(spec)
        spec.loader.exec_module(module)
        module.start()
    except Exception:
        pass


_gpuprof_bootstrap()
