"""gpuprof bootstrap, loaded by every Python process of a profiled job through PYTHONPATH.

It first runs the user's own sitecustomize (as plain Python would have), then takes its own folder
back off sys.path so the program sees the sys.path it would have had, then hands over to
gpuprof.probes.boot. It never raises: a failure here disables the probes, never the program.
"""


PRIVATE_NAME = "_gpuprof_job"     # gpuprof's package inside the job's processes


def _gpuprof_bootstrap():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))

    def same_dir(entry):
        try:
            return os.path.abspath(entry or os.curdir) == here
        except Exception:
            return False

    others = [p for p in sys.path if not same_dir(p)]
    try:
        import importlib.machinery
        import importlib.util

        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
    except ImportError as exc:
        if getattr(exc, "name", None) != "sitecustomize":
            sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                             f"{exc.__class__.__name__}: {exc}\n")
    except Exception as exc:
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                         f"{exc.__class__.__name__}: {exc}\n")
    sys.path[:] = [p for p in sys.path if not same_dir(p)]

    raw = os.environ.get("GPUPROF_BOOTSTRAP")
    if not raw:
        return
    try:
        import json
        import importlib.util

        settings = json.loads(raw)
        # gpuprof's own package is loaded from its folder under a private name, without touching
        # sys.path: the program's `import gpuprof` (its own gpuprof.py, or none) is what plain
        # python would give it.
        package_dir = os.path.join(settings["root"], "gpuprof")
        spec = importlib.util.spec_from_file_location(
            PRIVATE_NAME, os.path.join(package_dir, "__init__.py"), submodule_search_locations=[package_dir])
        package = importlib.util.module_from_spec(spec)
        sys.modules[PRIVATE_NAME] = package
        spec.loader.exec_module(package)
        boot = importlib.import_module(PRIVATE_NAME + ".probes.boot")
        boot.start(settings)
    except Exception as exc:  # never let gpuprof break the program
        try:
            with open(os.path.join(settings["run_dir"], "bootstrap-errors.log"), "a") as log:
                log.write(f"{os.getpid()}: {exc.__class__.__name__}: {exc}\n")
        except Exception:
            pass


_gpuprof_bootstrap()
del _gpuprof_bootstrap, PRIVATE_NAME
