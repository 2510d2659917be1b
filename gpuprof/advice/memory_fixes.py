"""Fixes for a run that ran out of memory, ranked by the memory each frees (where the anatomy lets it
be counted), each with the exact change. Kept apart from the speed catalogue: these trade speed for
memory, and their measure is bytes, not a speed-up."""


def _mib(nbytes) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} B"


def oom_advice(memory: dict, batch_size=None) -> list:
    anatomy = memory.get("anatomy") or {}
    activations = memory.get("rest_bytes") if memory.get("device") == "cuda" else None
    state, grads = anatomy.get("state_bytes") or 0, anatomy.get("grad_bytes") or 0
    batch = f"{batch_size} -> {max(batch_size // 2, 1)}" if batch_size else "halved"
    items = [
        ("smaller-batch-accumulate", "Halve the batch and accumulate gradients over 2 steps", 1,
         activations * 0.5 if activations else None,
         f"batch_size {batch} with 2 micro-batches per optimizer step: the same effective batch, about half the "
         "activation memory",
         "for i, (x, y) in enumerate(loader):            # batch_size halved\n"
         "    (loss_fn(model(x), y) / 2).backward()\n"
         "    if i % 2 == 1:\n        optimizer.step(); optimizer.zero_grad(set_to_none=True)"),
        ("mixed-precision-memory", "Keep activations in bfloat16 (autocast)", 1,
         activations * 0.5 if activations else None,
         "run forward and loss under torch.autocast: activations saved for backward take half the bytes",
         "with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n    loss = loss_fn(model(x), y)"),
        ("activation-checkpointing", "Recompute activations in backward instead of keeping them", 2,
         activations * 0.6 if activations else None,
         "wrap the largest blocks with torch.utils.checkpoint: their activations are recomputed in backward "
         "(about a third more compute)",
         "from torch.utils.checkpoint import checkpoint\n"
         "h = checkpoint(block, h, use_reentrant=False)     # for each large block in forward"),
        ("8bit-optimizer", "Keep the optimizer state in 8 bits", 2, state * 0.75 if state else None,
         f"the optimizer state takes {_mib(state)} ({anatomy.get('state_bytes_per_param')} bytes per parameter); "
         "an 8-bit AdamW (bitsandbytes) keeps it in a quarter of that",
         "import bitsandbytes as bnb\noptimizer = bnb.optim.AdamW8bit(model.parameters(), lr=lr)"),
        ("grads-set-to-none", "Free gradients between steps", 1, grads if grads else None,
         f"optimizer.zero_grad(set_to_none=True) releases the {_mib(grads)} of gradients until backward "
         "makes them again, instead of keeping zero-filled tensors through the next forward",
         "optimizer.zero_grad(set_to_none=True)"),
    ]
    out = []
    for fix_id, title, effort, frees, detail, snippet in items:
        if fix_id == "8bit-optimizer" and not state:
            continue
        if fix_id == "grads-set-to-none" and not grads:
            continue
        out.append({"id": fix_id, "title": title, "estimated_speedup": None, "frees_bytes": int(frees) if frees else None,
                    "where": None, "detail": detail, "snippet": snippet, "effort": effort,
                    "addresses": ["memory.oom"], "change": None,
                    "why": "ranked by the memory it frees" + (f": about {_mib(frees)}" if frees else
                                                              " (not counted on a CPU run: the activations are not "
                                                              "told apart from the rest of the process)")})
    out.sort(key=lambda a: (-(a["frees_bytes"] or 0), a["effort"]))
    return out


NOT_A_FIX = ("torch.cuda.empty_cache() is not a fix: it returns cached blocks to the driver, but the next step's "
             "peak needs the same memory again; it only helps another process on the same GPU")


def oom_verdict(memory: dict, previous: dict) -> dict:
    oom = memory["oom"]
    anatomy = memory.get("anatomy") or {}
    held = ""
    if anatomy:
        held = (f"; the training held {_mib(anatomy['param_bytes'])} of parameters, {_mib(anatomy['grad_bytes'])} of "
                f"gradients and {_mib(anatomy['state_bytes'])} of optimizer state")
    if memory.get("peak_bytes"):
        held += f", {_mib(memory['peak_bytes'])} at its peak ({memory.get('basis')})"
    return {"bottleneck": "memory.oom", "share": None, "confidence": 0.95 if oom["kind"] != "oom-killer" else 0.8,
            "basis": "probes", "reason": oom["how"],
            "evidence": {"oom": oom, "anatomy": anatomy or None, "peak_bytes": memory.get("peak_bytes"),
                         "before": (previous or {}).get("summary")},
            "summary": f"Out of memory: {oom['how']}{held}." + (f" {NOT_A_FIX}." if memory.get("device") == "cuda" else "")}
