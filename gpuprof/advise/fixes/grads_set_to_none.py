"""grads-set-to-none: zero_grad(set_to_none=True) frees the gradients between steps instead of
keeping zero-filled tensors through the next forward."""

from gpuprof.advise.fix import MemoryFix
from gpuprof.stats.sizes import mib


def build(facts):
    if not facts.grads:
        return None
    return {"frees": facts.grads,
            "detail": f"optimizer.zero_grad(set_to_none=True) releases the {mib(facts.grads)} of gradients until "
                      "backward makes them again, instead of keeping zero-filled tensors through the next forward",
            "snippet": "optimizer.zero_grad(set_to_none=True)"}


FIX = MemoryFix(id="grads-set-to-none", title="Free gradients between steps", effort=1, build=build)
