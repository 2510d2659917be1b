"""What the model-side fixes share: whether the run's model is known and compute-bound, where it is
called, which low-precision type its device runs fast, and how a gain no one can know before
measuring is stated.

A model-side fix cannot be estimated from the run: the gain of bf16, compilation or a memory layout
depends on the operators, the shapes and the chip. Such a fix carries a stated prior (used for
ranking only, and said so) and points at `gpuprof try --fix ID`, whose measurement replaces it."""

import os
from gpuprof.judge.verdict import bottlenecks
#: GPUs from this compute capability run bf16 and TF32 on tensor cores (Ampere).
AMPERE = (8, 0)
#: GPUs from this compute capability run float16 on tensor cores (Volta).
VOLTA = (7, 0)
#: A model counts as float32 where at least this share of its parameters are.
MOSTLY_FLOAT32 = 0.5
#: CPU instructions that make bf16 matmuls faster than float32 ones.
CPU_BF16 = ("avx512_bf16", "amx_bf16")


def compute_model(ev, s):
    """The trained model's facts when the run is compute-bound and the probes saw the model, else None."""
    if s.bottleneck != bottlenecks.COMPUTE.id or not ev.model:
        return None
    return ev.model


def launch_bound_model(ev, s):
    """The trained model's facts when the host's launches set a GPU job's pace (host.overhead), else
    None: what cuts launches (CUDA graphs, fused optimizer steps) answers it."""
    if s.bottleneck != bottlenecks.HOST_OVERHEAD.id or not ev.model or not ev.gpu or not on_gpu(ev.model):
        return None
    return ev.model


def launch_ceiling(ev):
    """The most a step paced by the host's launches can gain when launching costs nothing: it then
    takes the GPU's own busy time (1 / utilisation over the steps), or None without the figure."""
    return 1.0 / ev.gpu_util if ev.gpu_util else None


def on_gpu(model: dict) -> bool:
    return str(model.get("device") or "").startswith("cuda")


def capability(model: dict):
    cap = model.get("capability")
    return tuple(cap) if cap else None


def fast_low_precision(ev, model: dict):
    """'bfloat16' or 'float16' where the device runs it faster than float32, else None: bf16 on
    Ampere or later GPUs and on CPUs with bf16 instructions; float16 (with a GradScaler) on older GPUs."""
    if on_gpu(model):
        cap = capability(model)
        if cap is None:
            return None
        return "bfloat16" if cap >= AMPERE else "float16" if cap >= VOLTA else None
    return "bfloat16" if any(flag in ev.cpu_flags for flag in CPU_BF16) else None


def mostly_float32(model: dict) -> bool:
    dtypes = model.get("dtypes") or {}
    total = sum(dtypes.values())
    return bool(total) and dtypes.get("float32", 0) / total >= MOSTLY_FLOAT32


def where(model: dict):
    """The user's line that calls the model, relative to the working directory where it can be."""
    line = model.get("where")
    if line and os.path.isabs(line.rsplit(":", 1)[0]):
        try:
            path, number = line.rsplit(":", 1)
            relative = os.path.relpath(path)
            if not relative.startswith(".."):
                return f"{relative}:{number}"
        except ValueError:
            pass
    return line


def not_estimated(fix_id: str, reason: str) -> str:
    return f"not estimated ({reason}): measure it with `gpuprof try --fix {fix_id}`"
