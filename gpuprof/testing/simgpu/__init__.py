"""A simulated NVIDIA GPU for machines without one: CUDA's semantics inside torch (streams, events,
pageable and pinned copies, synchronisation, several devices, CUDA_VISIBLE_DEVICES) and NVML's
behind the `pynvml` interface, read across processes as a real driver shares its state.

A run on it: make a machine folder, then run the program with `environment(folder)`:

    from gpuprof.testing.simgpu import Gpu, Machine, environment
    folder = Machine(gpus=[Gpu(), Gpu()]).create(tmpdir)
    subprocess.run(["gpuprof", "run", "train.py"], env=environment(folder))

docs/simulated-gpu.md says what each part follows in NVIDIA's documentation."""

import os

from . import measured
from .machine import ENV, Gpu, Machine, MigInstance, h200, load

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim")


def environment(folder: str, env: dict = None) -> dict:
    """`env` (default: this process's) with the simulated machine in `folder` switched on: the shim
    folder (its `pynvml` and `sitecustomize`) first on PYTHONPATH and GPUPROF_SIMGPU naming the
    machine."""
    out = dict(os.environ if env is None else env)
    paths = [SHIM] + [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p and p != SHIM]
    out["PYTHONPATH"] = os.pathsep.join(paths)
    out[ENV] = os.path.abspath(folder)
    return out


__all__ = ["ENV", "Gpu", "Machine", "MigInstance", "SHIM", "environment", "h200", "load", "measured"]
