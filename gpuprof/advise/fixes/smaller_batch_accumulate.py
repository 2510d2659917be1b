"""smaller-batch-accumulate: halve the batch and accumulate gradients over two micro-batches: the
same effective batch with about half the activation memory (prior
smaller-batch-accumulate.activations-freed)."""

from gpuprof.advise.fix import MemoryFix
from gpuprof.advise.flag_terms import ACCUMULATION, BATCH, command_first
from gpuprof.advise.framework_terms import HALVED_ACCUMULATED, setting
from gpuprof.priors.model_fixes import HALVED_BATCH_ACTIVATIONS_FREED


def build(facts):
    size = facts.batch_size
    batch = f"{size} -> {max(size // 2, 1)}" if size else "halved"
    return {"frees": facts.activations * HALVED_BATCH_ACTIVATIONS_FREED.value if facts.activations else None,
            "detail": f"batch_size {batch} with 2 micro-batches per optimizer step: the same effective batch, about "
                      "half the activation memory",
            "snippet": in_users_terms(facts, "for i, (x, y) in enumerate(loader):            # batch_size halved\n"
                                             "    (loss_fn(model(x), y) / 2).backward()\n"
                                             "    if i % 2 == 1:\n"
                                             "        optimizer.step(); optimizer.zero_grad(set_to_none=True)")}


def in_users_terms(facts, snippet: str) -> str:
    """The snippet after the framework's own settings and the script's own options, where the run has them."""
    half = max(facts.batch_size // 2, 1) if facts.batch_size else "B // 2"
    own = setting(facts.framework, HALVED_ACCUMULATED, script="train.py", size=half)
    if own:
        snippet = f"{own}\n# or in plain PyTorch:\n{snippet}"
    if not facts.batch_size:
        return snippet
    return command_first(facts, BATCH, half, snippet, also=[(ACCUMULATION, 2)])


FIX = MemoryFix(id="smaller-batch-accumulate", title="Halve the batch and accumulate gradients over 2 steps", effort=1,
                build=build)
