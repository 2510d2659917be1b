"""`pynvml` for a simulated machine: nvidia-ml-py's interface answering from GPUPROF_SIMGPU's folder.

With GPUPROF_SIMGPU set, this module holds the real pynvml's names (constants, ctypes structures,
NVMLError classes) with its device functions answered by the simulated GPU's nvml_face, loaded
under a private name so the program's `import gpuprof` is untouched. With
it unset, importing this module gives the real pynvml itself, found on sys.path past this folder,
so a shim folder left on PYTHONPATH changes nothing."""

import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _real_module():
    """Execute the real pynvml in this module's place in sys.modules, as `import pynvml` would."""
    paths = [p for p in sys.path if os.path.realpath(p or os.curdir) != os.path.realpath(_HERE)]
    spec = importlib.machinery.PathFinder.find_spec(__name__, paths)
    if spec is None:
        raise ModuleNotFoundError(f"No module named {__name__!r}", name=__name__)
    module = importlib.util.module_from_spec(spec)
    sys.modules[__name__] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[__name__]
        raise
    return module


def _simulate(folder):
    # The face is loaded from this folder's own tree under a private name (_gpuprof_simgpu_loader).
    from _gpuprof_simgpu_loader import module
    module("nvml_face").install(globals(), folder)


if os.environ.get("GPUPROF_SIMGPU"):
    _simulate(os.environ["GPUPROF_SIMGPU"])
else:
    _real_module()
