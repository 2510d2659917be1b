"""8bit-optimizer: the optimizer state in 8 bits (bitsandbytes' AdamW8bit) takes a quarter of its
32-bit bytes (prior 8bit-optimizer.state-freed); offered when the run measured optimizer state."""

from gpuprof.advise.fix import MemoryFix
from gpuprof.priors.model_fixes import EIGHT_BIT_STATE_FREED
from gpuprof.stats.sizes import mib


def build(facts):
    if not facts.state:
        return None
    return {"frees": facts.state * EIGHT_BIT_STATE_FREED.value,
            "detail": f"the optimizer state takes {mib(facts.state)} ({facts.anatomy.get('state_bytes_per_param')} "
                      "bytes per parameter); an 8-bit AdamW (bitsandbytes) keeps it in a quarter of that",
            "snippet": "import bitsandbytes as bnb\noptimizer = bnb.optim.AdamW8bit(model.parameters(), lr=lr)"}


FIX = MemoryFix(id="8bit-optimizer", title="Keep the optimizer state in 8 bits", effort=2, build=build)
