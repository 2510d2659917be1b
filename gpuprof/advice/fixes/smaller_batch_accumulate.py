"""smaller-batch-accumulate: halve the batch and accumulate gradients over two micro-batches: the
same effective batch with about half the activation memory."""

from gpuprof.advice.fix import MemoryFix


def build(facts):
    size = facts.batch_size
    batch = f"{size} -> {max(size // 2, 1)}" if size else "halved"
    return {"frees": facts.activations * 0.5 if facts.activations else None,
            "detail": f"batch_size {batch} with 2 micro-batches per optimizer step: the same effective batch, about "
                      "half the activation memory",
            "snippet": "for i, (x, y) in enumerate(loader):            # batch_size halved\n"
                       "    (loss_fn(model(x), y) / 2).backward()\n"
                       "    if i % 2 == 1:\n        optimizer.step(); optimizer.zero_grad(set_to_none=True)"}


FIX = MemoryFix(id="smaller-batch-accumulate", title="Halve the batch and accumulate gradients over 2 steps", effort=1,
                build=build)
