"""nvidia-ml-py's real `pynvml`, loaded under a private name beside the shim that hides it.

The simulated `pynvml` re-exports the real module's constants, ctypes structures and NVMLError
classes, so code that catches `pynvml.NVMLError_GpuIsLost` or builds `c_nvmlGpmMetricsGet_t` works
the same on both. The real module is found on sys.path past the shim folder and executed once as
`_gpuprof_real_pynvml`; its driver library is replaced by one whose every entry point answers
NotSupported, which is what a driver says of a query the device does not support: a function the
simulation does not model fails the way NVML's do (the face checks nvmlInit first)."""

import ctypes
import importlib.machinery
import importlib.util
import os
import sys
import threading

PRIVATE_NAME = "_gpuprof_real_pynvml"
SHIM_MARK = "_gpuprof_simgpu_loader.py"   # a file only a simulated GPU's shim folder holds
_lock = threading.Lock()


def find_spec(hidden_folder: str):
    """The import spec of the real `pynvml` on sys.path, skipping `hidden_folder` and any other
    simulated GPU's shim folder (another gpuprof tree's); None if absent."""
    hidden = os.path.realpath(hidden_folder)
    paths = [p for p in sys.path if os.path.realpath(p or os.curdir) != hidden and not _is_shim(p)]
    return importlib.machinery.PathFinder.find_spec("pynvml", paths)


def _is_shim(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder or os.curdir, SHIM_MARK))


def load(hidden_folder: str):
    """The real `pynvml` module (loaded once per process), or ModuleNotFoundError as when
    nvidia-ml-py is not installed."""
    with _lock:
        module = sys.modules.get(PRIVATE_NAME)
        if module is not None:
            return module
        spec = find_spec(hidden_folder)
        if spec is None:
            raise ModuleNotFoundError("No module named 'pynvml'", name="pynvml")
        spec = importlib.util.spec_from_file_location(
            PRIVATE_NAME, spec.origin, submodule_search_locations=spec.submodule_search_locations)
        module = importlib.util.module_from_spec(spec)
        sys.modules[PRIVATE_NAME] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[PRIVATE_NAME]
            raise
        module.nvmlLib = _UnmodelledLibrary(module)
        return module


def address_of(pointer):
    """The address a ctypes pointer (a device handle, a GPM sample) holds; None for anything else."""
    try:
        return ctypes.cast(pointer, ctypes.c_void_p).value
    except (TypeError, ctypes.ArgumentError):
        return None


def library_functions(module) -> set:
    """Names of the module's functions that reach the driver library, directly or through another
    such function (helpers that only convert structures are left out)."""
    code = {name: _code_names(value) for name, value in vars(module).items() if callable(value)}
    reaching = {name for name, names in code.items() if "_nvmlGetFunctionPointer" in names}
    grew = True
    while grew:
        more = {name for name, names in code.items() if name not in reaching and names & reaching}
        reaching |= more
        grew = bool(more)
    return {name for name in reaching if name.startswith("nvml")}


def _code_names(function) -> set:
    names = set()
    while function is not None:
        code = getattr(function, "__code__", None)
        if code is not None:
            names.update(code.co_names)
            names.update(n for const in code.co_consts if hasattr(const, "co_names") for n in const.co_names)
        function = getattr(function, "__wrapped__", None)
    return names


class _UnmodelledLibrary:
    """Stands for libnvidia-ml.so in the real module: entry points the face does not answer."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _UnmodelledEntry(self._module, name)


class _UnmodelledEntry:
    def __init__(self, module, name):
        self.module = module
        self.name = name

    def __call__(self, *args):
        if self.name == "nvmlErrorString":
            return b"Unknown Error"
        return self.module.NVML_ERROR_NOT_SUPPORTED
