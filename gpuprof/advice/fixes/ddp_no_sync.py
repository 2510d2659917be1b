"""ddp-no-sync: accumulate gradients over several micro-batches with DDP's no_sync(), so the
gradient all-reduce runs once per optimizer step instead of once per batch: with k micro-batches
per step, k-1 of every k all-reduces go. The batch per update grows k-fold, so it ranks after the
fixes that keep training the same."""

from gpuprof.advice.fix import Fix
from gpuprof.analysis import bottlenecks

ACCUMULATE = 4      # micro-batches per optimizer step


def build(ev, s):
    if s.bottleneck != bottlenecks.COMM.id or not s.share:
        return None
    share = s.share
    k = ACCUMULATE
    gain = 1.0 / (1.0 - share * (k - 1) / k)
    return {"estimated_speedup": gain, "where": None,
            "detail": f"all-reduce once every {k} batches: wrap the backward of the first {k - 1} in model.no_sync() "
                      f"and step the optimizer on the {k}th (the loss divided by {k}); the batch per update grows {k}x",
            "snippet": (f"sync = (i + 1) % {k} == 0\n"
                        "with (contextlib.nullcontext() if sync else model.no_sync()):\n"
                        f"    (loss_fn(model(x), y) / {k}).backward()\n"
                        "if sync:\n"
                        "    optimizer.step(); optimizer.zero_grad()"),
            "why": f"{share:.0%} of each step waits in collectives; {k - 1} of every {k} all-reduces go, so a step is "
                   f"up to {gain:.2f}x faster"}


FIX = Fix(id="ddp-no-sync", title="Accumulate gradients over several micro-batches with DDP's no_sync()", effort=2,
          addresses=(bottlenecks.COMM.id,), build=build, changes_training=True)
