"""cache-preprocessed: do the deterministic part of preprocessing once (or hold the raw data in
memory) instead of every epoch; assumed to make a batch 2x cheaper."""

from gpuprof.advice.fix import MIN_GAIN, Fix
from gpuprof.advice.loader_terms import where
from gpuprof.analysis import bottlenecks


def build(ev, s):
    kind = s.input_kind
    if kind not in (bottlenecks.INPUT_CPU.id, bottlenecks.INPUT_DISK.id):
        return None
    gain = s.cheaper_input(ev, 2.0)
    if gain < MIN_GAIN:
        return None
    if kind == bottlenecks.INPUT_DISK.id:
        detail = "read the data once into memory (or onto local fast storage) and serve later epochs from there"
        snippet = "data = np.load(path, mmap_mode=None)   # or copy to local NVMe / RAM disk before training"
    else:
        detail = ("save decoded/resized samples once (e.g. a .npy memmap) and keep only random augmentations "
                  "online, so the random numbers they draw are unchanged")
        snippet = "cache = np.lib.format.open_memmap('cache.npy', mode='w+', dtype=np.uint8, shape=(N, C, H, W))"
    return {"estimated_speedup": gain, "where": where(ev), "detail": detail, "snippet": snippet,
            "why": f"the same preparation is repeated every epoch; {s.input_cost(ev)}"}


FIX = Fix(id="cache-preprocessed", title="Cache the deterministic part of preprocessing (or the raw data in memory)",
          effort=2, addresses=(bottlenecks.INPUT_CPU.id, bottlenecks.INPUT_DISK.id), build=build)
