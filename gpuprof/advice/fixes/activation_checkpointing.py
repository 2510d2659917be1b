"""activation-checkpointing: recompute the largest blocks' activations in backward instead of
keeping them (about a third more compute, an assumed 60% of the activations freed)."""

from gpuprof.advice.fix import MemoryFix


def build(facts):
    return {"frees": facts.activations * 0.6 if facts.activations else None,
            "detail": "wrap the largest blocks with torch.utils.checkpoint: their activations are recomputed in "
                      "backward (about a third more compute)",
            "snippet": "from torch.utils.checkpoint import checkpoint\n"
                       "h = checkpoint(block, h, use_reentrant=False)     # for each large block in forward"}


FIX = MemoryFix(id="activation-checkpointing", title="Recompute activations in backward instead of keeping them",
                effort=2, build=build)
