"""background-prefetch: a hand-written loop (no DataLoader) that waits on reads or a remote store
makes its next batches in background threads.

Waiting releases the GIL, so n threads wait side by side: the step becomes max(compute, wait / n)."""

import math

from gpuprof.advise.fix import MIN_GAIN, Fix, pct
from gpuprof.advise.model import LEAST_COMPUTE_SHARE, TINY
from gpuprof.judge.verdict.evidence import HANDWRITTEN
from gpuprof.judge.verdict import bottlenecks
#: The most threads proposed, however long the wait (the fewest: 2).
MOST_THREADS = 8


def build(ev, s):
    if s.input_kind not in (bottlenecks.INPUT_LATENCY.id, bottlenecks.INPUT_DISK.id) or \
            ev.wait_source not in HANDWRITTEN:
        return None
    w = ev.wait_share or 0.0
    threads = min(MOST_THREADS, max(2, math.ceil(w / max(1 - w, LEAST_COMPUTE_SHARE))))
    gain = 1.0 / max(1 - w, w / threads, TINY)
    if gain < MIN_GAIN:
        return None
    return {
        "estimated_speedup": gain, "where": None,
        "detail": f"a pool of {threads} threads makes the next {threads} batches while the current one trains "
                  "(the same batches in the same order; the function that makes a batch must be thread-safe)",
        "snippet": ("from concurrent.futures import ThreadPoolExecutor\n"
                    f"pool = ThreadPoolExecutor(max_workers={threads})\n"
                    f"pending = [pool.submit(get_batch, i) for i in range({threads})]\n"
                    "for step in range(steps):\n"
                    f"    x, y = pending.pop(0).result(); pending.append(pool.submit(get_batch, step + {threads}))"),
        "why": f"{pct(w)} of each step is spent making the batch before the forward, "
               f"{pct(1 - (ev.producer_cpu_ratio or 0))} of it waiting (not computing): "
               f"{threads} threads can wait side by side",
    }


FIX = Fix(id="background-prefetch", title="Prepare the next batches in background threads while the model trains",
          effort=2, addresses=(bottlenecks.INPUT_LATENCY.id, bottlenecks.INPUT_DISK.id), build=build)
