"""larger-batch: a larger batch while the GPU has memory to spare, so per-step overheads are
amortised over more samples. It changes the optimisation (scale the learning rate), so it ranks
after the fixes that keep training the same."""

from gpuprof.advise.fix import Fix, pct
from gpuprof.advise.flag_terms import BATCH, command_first
from gpuprof.advise.framework_terms import framework_first
from gpuprof.advise.loader_terms import where
from gpuprof.advise.model import cheaper_share
from gpuprof.priors.model_fixes import LARGER_BATCH_COMPUTE_GAIN, LARGER_BATCH_OVERHEAD_SAVED
from gpuprof.judge.verdict import bottlenecks
#: Offered only where at least this share of the GPU's memory is free.
LEAST_FREE_MEMORY = 0.4


def build(ev, s):
    if s.bottleneck not in (bottlenecks.COMPUTE.id, bottlenecks.HOST_OVERHEAD.id):
        return None
    if ev.gpu_mem_free_share is None or ev.gpu_mem_free_share < LEAST_FREE_MEMORY:
        return None
    share = s.share or 0.0
    gain = cheaper_share(share, LARGER_BATCH_OVERHEAD_SAVED.value) if s.bottleneck == bottlenecks.HOST_OVERHEAD.id \
        else LARGER_BATCH_COMPUTE_GAIN.value
    batch = (ev.loader or {}).get("batch_size")
    target = batch * 2 if batch else None
    fits = ""
    if batch and ev.largest_batch:
        if ev.largest_batch <= batch:
            return None         # the memory holds no larger batch
        target = min(batch * 2, ev.largest_batch)
        fits = f"; the largest batch that fits is about {ev.largest_batch} (from how the peak grows with the batch)"
    return {"estimated_speedup": gain, "where": where(ev),
            "detail": f"batch_size {batch} -> {target}" if batch else "double the batch size",
            "snippet": command_first(ev, BATCH, target, framework_first(
                ev, BATCH, f"DataLoader(dataset, batch_size={target or '2 * B'}, ...)   # scale the learning rate "
                           "accordingly", size=target or "2 * B")),
            "why": f"{pct(ev.gpu_mem_free_share)} of GPU memory is free; per-step overheads are amortised over more "
                   f"samples{fits}"}


FIX = Fix(id="larger-batch", title="Use a larger batch (the GPU has memory to spare)", effort=1,
          addresses=(bottlenecks.COMPUTE.id, bottlenecks.HOST_OVERHEAD.id), build=build, changes_training=True,
          needs_gpu=True)
