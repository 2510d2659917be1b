"""gpuprof bootstrap, loaded by every Python process of a profiled job through PYTHONPATH.

It first runs the user's own sitecustomize (as plain Python would have), then takes its own folder
back off sys.path so the program sees the sys.path it would have had, then hands over to
gpuprof.probes.boot. It never raises: a failure here disables the probes, never the program.
"""


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

        settings = json.loads(raw)
        root = settings["root"]
        added = root not in sys.path
        if added:
            sys.path.insert(0, root)
        try:
            from gpuprof.probes import boot
        finally:
            if added:
                try:
                    sys.path.remove(root)
                except ValueError:
                    pass
        boot.start(settings)
    except Exception as exc:  # never let gpuprof break the program
        try:
            with open(os.path.join(settings["run_dir"], "bootstrap-errors.log"), "a") as log:
                log.write(f"{os.getpid()}: {exc.__class__.__name__}: {exc}\n")
        except Exception:
            pass


_gpuprof_bootstrap()
del _gpuprof_bootstrap
