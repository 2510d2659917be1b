"""cache-preprocessed: do the deterministic part of preprocessing once (or hold the raw data in
memory) instead of every epoch; assumed to make a batch CHEAPER times cheaper to produce, with the
prior's ends as the estimate's (prior cache-preprocessed.times-cheaper).

Random augmentation must stay online: a flip or noise cached once is the same every epoch. When
the probe found random calls or transforms in the dataset's per-sample path, the fix offers to
cache only the deterministic part, and gives no estimate: what share of the producers' time that
part takes is not measured (workers are not sampled). Reading raw data from storage is never
random, so for a disk-bound loader the cache of raw data keeps augmentation online as it is.

On a CPU-only machine workers share the cores with the training's intra-op threads: halving the
producers' work also gives compute the cores it frees, which the step model alone misses."""

from gpuprof.advise.fix import MIN_GAIN, Fix
from gpuprof.advise.loader_terms import where
from gpuprof.advise.model import TINY
from gpuprof.priors.input_fixes import CACHED_SAMPLE_COST
from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.sections.augmentation import random_parts
from gpuprof.judge.sections.batch_parts import collate_dominates

#: How many times cheaper a cached sample is than one made from scratch: central, pessimistic, optimistic.
CHEAPER = CACHED_SAMPLE_COST.value
CHEAPER_LOW, CHEAPER_HIGH = CACHED_SAMPLE_COST.ends()
#: The random steps named in the words before the rest are counted ("and 2 more").
RANDOM_NAMED = 3
#: The deterministic steps named in the words.
DETERMINISTIC_NAMED = 4


def freed_cores_gain(ev, k: float) -> float:
    """Speed-up of producers k times cheaper in workers on a CPU-only machine, with compute given
    the cores they free: compute ran on cores - P cores (P the producers' cores) and runs on
    cores - P/k; the workers, now k times faster, bound the step at 1/k of today's. 1.0 where it
    does not apply (a GPU, batches made inline, producers' cores unknown)."""
    producers = ev.producer_cores
    if ev.gpu or ev.inline_producer or not producers or ev.wait_share is None:
        return 1.0
    cores = float(ev.cpu_count)
    if producers >= cores:
        return 1.0
    compute = (1.0 - ev.wait_share) * (cores - producers) / (cores - producers / k)
    return 1.0 / max(compute, 1.0 / k, TINY)


def _gain(ev, s, k: float) -> float:
    """Speed-up of samples k times cheaper: the input's wait or CPU share shrinks, and on a CPU-only
    machine with workers compute gets the cores they free, whichever is larger. Where the compute
    verdict's input costs cores, the free input's own estimate already counts them."""
    freed = freed_cores_gain(ev, k) if s.input_costs_cores is None else 1.0
    return max(s.cheaper_input(ev, k), freed)


def _ends(ev, s) -> dict:
    return {"estimate_low": _gain(ev, s, CHEAPER_LOW), "estimate_high": _gain(ev, s, CHEAPER_HIGH)}


def build(ev, s):
    kind = s.input_kind
    if kind not in (bottlenecks.INPUT_CPU.id, bottlenecks.INPUT_DISK.id):
        return None
    if kind == bottlenecks.INPUT_CPU.id and collate_dominates(ev.loader):
        return None         # the work to do once is the collate's: collate-once names it, measured

    gain = _gain(ev, s, CHEAPER)
    if gain < MIN_GAIN:
        return None
    random = random_parts(ev.loader)
    if kind == bottlenecks.INPUT_DISK.id:
        detail = "read the data once into memory (or onto local fast storage) and serve later epochs from there"
        if random:
            detail += "; cache the raw data only, so the random augmentation stays online"
        snippet = "data = np.load(path, mmap_mode=None)   # or copy to local NVMe / RAM disk before training"
        return {"estimated_speedup": gain, **_ends(ev, s), "where": where(ev), "detail": detail, "snippet": snippet,
                "why": f"the same data is read every epoch; {s.input_cost(ev)}"}
    if random:
        return deterministic_part_only(ev, s, random)
    detail = ("save decoded/resized samples once (e.g. a .npy memmap) and keep only random augmentations "
              "online, so the random numbers they draw are unchanged")
    snippet = "cache = np.lib.format.open_memmap('cache.npy', mode='w+', dtype=np.uint8, shape=(N, C, H, W))"
    return {"estimated_speedup": gain, **_ends(ev, s), "where": where(ev), "detail": detail, "snippet": snippet,
            "why": f"the same preparation is repeated every epoch{checked(ev)}; {s.input_cost(ev)}"}


def checked(ev) -> str:
    """Words saying the per-sample path was read and holds nothing random, where it was."""
    found = (ev.loader or {}).get("augmentation") or {}
    return " (the dataset's per-sample path draws no random numbers)" if found.get("checked") else ""


def deterministic_part_only(ev, s, random: list) -> dict:
    """Offer caching the deterministic part alone, not estimated, naming what must stay online."""
    kept = ", ".join(random[:RANDOM_NAMED]) + (f" and {len(random) - RANDOM_NAMED} more"
                                              if len(random) > RANDOM_NAMED else "")
    steady = ((ev.loader or {}).get("augmentation") or {}).get("deterministic") or []
    part = f" ({', '.join(steady[:DETERMINISTIC_NAMED])})" if steady else \
        " (decoding, resizing, conversions before the first random call)"
    return {"estimated_speedup": None, "prior": MIN_GAIN, "where": where(ev),
            "detail": f"cache only the deterministic part of each sample{part}, once, and keep the random "
                      f"augmentation online ({kept}): caching it would give every epoch the same noise and flips",
            "snippet": ("cache = np.lib.format.open_memmap('cache.npy', mode='w+', dtype=np.float32, "
                        "shape=(N, C, H, W))\n"
                        "# __getitem__: x = torch.from_numpy(cache[i]); then the random steps, as today"),
            "why": f"the per-sample path draws random numbers ({kept}); not estimated: the share of the producers' "
                   f"time the deterministic part takes is not measured; {s.input_cost(ev)}"}


FIX = Fix(id="cache-preprocessed", title="Cache the deterministic part of preprocessing (or the raw data in memory)",
          effort=2, addresses=(bottlenecks.INPUT_CPU.id, bottlenecks.INPUT_DISK.id), build=build)
