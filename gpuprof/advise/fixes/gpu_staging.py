"""gpu-staging: copy the data set (or large shards of it, as uint8) to the GPU once and index
batches there, when the GPU has memory to spare; removes most of the copy time, or makes a batch
several times cheaper to produce (priors gpu-staging.*)."""

from gpuprof.advise.fix import MIN_GAIN, Fix, pct
from gpuprof.advise.loader_terms import where
from gpuprof.advise.model import cheaper_producer, cheaper_share
from gpuprof.priors.copy_fixes import STAGED_COPY_SAVED
from gpuprof.priors.input_fixes import STAGED_ON_GPU
from gpuprof.advise.situation import INPUT
from gpuprof.judge.verdict import bottlenecks
#: Offered only where at least this share of the GPU's memory is free (or the share is unknown).
LEAST_FREE_MEMORY = 0.3


def build(ev, s):
    if s.input_kind is None and s.bottleneck != bottlenecks.TRANSFER_H2D.id:
        return None
    if ev.gpu_mem_free_share is not None and ev.gpu_mem_free_share < LEAST_FREE_MEMORY:
        return None
    if s.bottleneck == bottlenecks.TRANSFER_H2D.id:
        gain = cheaper_share(ev.copy_share or 0.0, STAGED_COPY_SAVED.value)
    else:
        gain = cheaper_producer(ev, STAGED_ON_GPU.value)
    if gain < MIN_GAIN:
        return None
    return {"estimated_speedup": gain, "where": where(ev),
            "detail": "copy the dataset (or large shards of it, as uint8) to the GPU once and index batches there",
            "snippet": "staged = torch.from_numpy(shard).to(device)      # once per shard\n"
                       "batch = staged[torch.randint(len(staged), (B,), device=device)].float().div_(255)",
            "why": f"the GPU has {pct(ev.gpu_mem_free_share or 0)} of its memory free and input or copies take "
                   f"{pct(max(ev.wait_share or 0, ev.copy_share or 0))} of each step"}


FIX = Fix(id="gpu-staging", title="Stage large chunks of the data on the GPU and slice batches there", effort=3,
          addresses=INPUT + (bottlenecks.TRANSFER_H2D.id,), build=build, needs_gpu=True)
