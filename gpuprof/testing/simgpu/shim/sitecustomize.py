"""The simulated GPU's start-up in every Python process that has this folder on PYTHONPATH.

It first runs the sitecustomize this one hides (the next on sys.path after this folder), as plain
Python would have.
Then, only when GPUPROF_SIMGPU names a machine folder, it arranges for the simulated CUDA device to
be installed into torch the moment the program finishes importing torch, with the same post-import
hook gpuprof's probes use (gpuprof/capture/probes/post_import.py): under `gpuprof run`, gpuprof's bootstrap
loads this file before it arms its own hook, so the device is in place before the probes wrap
torch. The simulated GPU's code is found from this file's own path (gpuprof need not be installed)
and loaded under a private name by _gpuprof_simgpu_loader.py, which pynvml.py shares, leaving the
program's `import gpuprof` as it was. With GPUPROF_SIMGPU unset this file changes nothing and
prints nothing."""


def _simgpu_start():
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))

    def ours(entry):
        try:
            return os.path.abspath(entry or os.curdir) == here
        except Exception:
            return False

    # The next sitecustomize is searched for past this folder only: one before it on sys.path
    # (gpuprof's bootstrap, which loaded this one) is already running.
    mine = [i for i, entry in enumerate(sys.path) if ours(entry)]
    later = sys.path[mine[0] + 1:] if mine else list(sys.path)
    try:
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [p for p in later if not ours(p)])
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
    except Exception as exc:
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                         f"{exc.__class__.__name__}: {exc}\n")

    folder = os.environ.get("GPUPROF_SIMGPU")
    if not folder:
        return

    def install_face(torch):
        try:
            from _gpuprof_simgpu_loader import module
            module("torch_face").install(torch, folder)
        except Exception as exc:
            sys.stderr.write(f"gpuprof simulated GPU: not installed ({exc.__class__.__name__}: {exc})\n")

    try:
        from _gpuprof_simgpu_loader import post_import_hook
        post_import_hook({"torch": install_face})
    except Exception as exc:
        sys.stderr.write(f"gpuprof simulated GPU: not armed ({exc.__class__.__name__}: {exc})\n")


_simgpu_start()
del _simgpu_start
