"""activation-checkpointing: recompute the largest blocks' activations in backward instead of
keeping them (about a third more compute; the share of the activations freed is a prior,
activation-checkpointing.activations-freed)."""

from gpuprof.advise.fix import MemoryFix
from gpuprof.priors.model_fixes import CHECKPOINTED_ACTIVATIONS_FREED


def build(facts):
    return {"frees": facts.activations * CHECKPOINTED_ACTIVATIONS_FREED.value if facts.activations else None,
            "detail": "wrap the largest blocks with torch.utils.checkpoint: their activations are recomputed in "
                      "backward (about a third more compute)",
            "snippet": "from torch.utils.checkpoint import checkpoint\n"
                       "h = checkpoint(block, h, use_reentrant=False)     # for each large block in forward"}


FIX = MemoryFix(id="activation-checkpointing", title="Recompute activations in backward instead of keeping them",
                effort=2, build=build)
