"""FSDP1 (`FullyShardedDataParallel`) on the simulated GPU: its `device_id` given as an index.

torch's tutorials pass `device_id=torch.cuda.current_device()` (an int); FSDP turns it into
`torch.device(device_id)`, which the CPU build refuses ("Cannot access accelerator device when none
is available": a bare index names the accelerator's device). The index is handed on as the CUDA
device it names. FSDP is imported only by programs that use it (it takes about a second), so the
change is made when its module is first imported."""

import importlib.abc
import sys

MODULE = "torch.distributed.fsdp.fully_sharded_data_parallel"


def install(torch) -> None:
    if MODULE in sys.modules:
        _patch(torch, sys.modules[MODULE])
    else:
        sys.meta_path.insert(0, _AfterImport(torch))


def _patch(torch, module) -> None:
    cls = getattr(module, "FullyShardedDataParallel", None)
    if cls is None or getattr(cls.__init__, "_simgpu", False):
        return
    real_init = cls.__init__

    def __init__(self, *args, **kwargs):
        device_id = kwargs.get("device_id")
        if isinstance(device_id, int) and not isinstance(device_id, bool):
            kwargs["device_id"] = torch.device("cuda", device_id)
        real_init(self, *args, **kwargs)

    __init__._simgpu = True
    __init__.__wrapped__ = real_init
    cls.__init__ = __init__


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when FSDP's module is about to load, wraps its loader so the module
    is changed right after it has run."""

    def __init__(self, torch):
        self.torch = torch

    def find_spec(self, name, path=None, target=None):
        if name != MODULE:
            return None
        sys.meta_path.remove(self)
        from importlib.util import find_spec
        spec = find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader, torch = spec.loader, self.torch
        real_exec = loader.exec_module

        def exec_module(module):
            real_exec(module)
            _patch(torch, module)
        loader.exec_module = exec_module
        return spec
