"""ddp-no-sync: let DDP all-reduce the gradients once per optimizer step with no_sync().

A program that already accumulates k micro-batches per optimizer step without no_sync() makes k
all-reduces a step (DDP's own count of the iterations it synchronised, against the optimizer
steps): wrapping the first k-1 backward passes in no_sync() skips k-1 of every k and trains the
same. A program that steps after every batch is offered accumulation over ACCUMULATE micro-batches:
k-1 of every k all-reduces go, but the batch per update grows k-fold, so it ranks after the fixes
that keep training the same."""

from gpuprof.advise.fix import Fix
from gpuprof.advise.flag_terms import ACCUMULATION, command_first
from gpuprof.advise.framework_terms import framework_first
from gpuprof.advise.model import TINY
from gpuprof.judge.verdict import bottlenecks
ACCUMULATE = 4      # micro-batches per optimizer step, offered where the program steps after each batch
#: All-reduces per optimizer step from which the program accumulates (they round to 2 or more).
SEVERAL_SYNCS = 1.5


def accumulated(ev):
    """The micro-batches per optimizer step the program already accumulates, each with its own
    all-reduce, or None (one all-reduce per step, or not known)."""
    syncs = ev.ddp_syncs_per_step
    if syncs is None or syncs < SEVERAL_SYNCS:
        return None
    return int(round(syncs))


def _advice(ev, s):
    if s.bottleneck != bottlenecks.COMM.id or not s.share:
        return None
    share = s.share
    already = accumulated(ev)
    k = already or ACCUMULATE
    gain = 1.0 / max(1.0 - share * (k - 1) / k, TINY)
    skipped = f"{k - 1} of every {k} all-reduces go, so a step is up to {gain:.2f}x faster"
    if already:
        return {"estimated_speedup": gain, "where": None,
                "detail": f"the program accumulates {k} micro-batches per optimizer step and DDP all-reduces after "
                          f"each: wrap the backward of the first {k - 1} in model.no_sync(), so it all-reduces once "
                          "per step; the gradients and the training stay the same",
                "snippet": (f"sync = (i + 1) % {k} == 0          # the micro-batch that steps the optimizer\n"
                            "with (contextlib.nullcontext() if sync else model.no_sync()):\n"
                            "    loss.backward()"),
                "why": f"{share:.0%} of each step waits in collectives, {k} all-reduces a step (DDP's own count); "
                       + skipped}
    return {"estimated_speedup": gain, "where": None,
            "detail": f"all-reduce once every {k} batches: wrap the backward of the first {k - 1} in model.no_sync() "
                      f"and step the optimizer on the {k}th (the loss divided by {k}); the batch per update grows {k}x",
            "snippet": (f"sync = (i + 1) % {k} == 0\n"
                        "with (contextlib.nullcontext() if sync else model.no_sync()):\n"
                        f"    (loss_fn(model(x), y) / {k}).backward()\n"
                        "if sync:\n"
                        "    optimizer.step(); optimizer.zero_grad()"),
            "why": f"{share:.0%} of each step waits in collectives; " + skipped}


def build(ev, s):
    """The advice, first in the framework's terms (accelerate's accumulate(), the Trainer's
    accumulation steps) and, where the program steps each batch, through the script's own option."""
    built = _advice(ev, s)
    if built:
        k = accumulated(ev) or ACCUMULATE
        snippet = framework_first(ev, ACCUMULATION, built["snippet"], k=k)
        built = dict(built, snippet=snippet if accumulated(ev) else command_first(ev, ACCUMULATION, k, snippet))
    return built


FIX = Fix(id="ddp-no-sync", title="Accumulate gradients over several micro-batches with DDP's no_sync()", effort=2,
          addresses=(bottlenecks.COMM.id,), build=build, changes_training=True)
