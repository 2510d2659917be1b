"""mixed-precision: forward and loss under bf16 autocast on a GPU that is the limit (tensor cores,
half the memory traffic); a prior of 1.5x, not a measurement."""

from gpuprof.advice.fix import Fix, pct


def build(ev, s):
    if s.bottleneck != "compute":
        return None
    return {"estimated_speedup": 1.5, "where": None,
            "detail": "run forward and loss under torch.autocast('cuda', dtype=torch.bfloat16): tensor cores, half the memory traffic",
            "snippet": "with torch.autocast('cuda', dtype=torch.bfloat16):\n    loss = loss_fn(model(x), y)",
            "why": f"the GPU is the limit ({pct(ev.gpu_util or 0)} busy); float32 matmuls run well below bf16 peak"}


FIX = Fix(id="mixed-precision", title="Train in mixed precision (bf16 autocast)", effort=1, addresses=("compute",),
          build=build, needs_gpu=True)
