"""mixed-precision-memory: activations saved for backward in bfloat16 take half the bytes (prior
mixed-precision-memory.activations-freed)."""

from gpuprof.advise.fix import MemoryFix
from gpuprof.priors.model_fixes import BF16_ACTIVATIONS_FREED


def build(facts):
    return {"frees": facts.activations * BF16_ACTIVATIONS_FREED.value if facts.activations else None,
            "detail": "run forward and loss under torch.autocast: activations saved for backward take half the bytes",
            "snippet": "with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n    loss = loss_fn(model(x), y)"}


FIX = MemoryFix(id="mixed-precision-memory", title="Keep activations in bfloat16 (autocast)", effort=1, build=build)
