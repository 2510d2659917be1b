"""persistent-workers: keep a DataLoader's workers alive between epochs (and prefetch deeper).

Estimated from the time each epoch after the first waited for its workers to start and fetch
their first batch: that wait goes."""

from gpuprof.advise.fix import Fix
from gpuprof.advise.loader_terms import keep_loader_line, loader_detail, loader_snippet, where
from gpuprof.advise.model import TINY
from gpuprof.advise.situation import INPUT

#: The least estimate worth showing for this fix (its own, below MIN_GAIN).
LEAST_GAIN = 1.02
#: The prefetch_factor proposed with it.
PREFETCH_FACTOR = 4


def build(ev, s):
    loader = ev.loader or {}
    epochs = loader.get("epochs") or 0
    if not loader.get("num_workers") or loader.get("persistent_workers") or epochs < 2 or not ev.window_s:
        return None
    restart_s = (loader.get("epoch_start_wait_s") or 0.0) * (epochs - 1) / epochs
    gain = ev.window_s / max(ev.window_s - restart_s, TINY)
    if gain < LEAST_GAIN:
        return None
    return {
        "estimated_speedup": gain, "where": where(ev),
        "detail": loader_detail(ev, f"persistent_workers False -> True (and prefetch_factor {PREFETCH_FACTOR})"),
        "snippet": loader_snippet(ev, {"num_workers": loader.get("num_workers"), "persistent_workers": True,
                                       "prefetch_factor": PREFETCH_FACTOR}),
        "why": f"{epochs} epochs each waited {loader.get('epoch_start_wait_s', 0) / epochs:.2f} s for workers "
               "to start and fetch their first batch",
        "change": {"persistent_workers": True, "prefetch_factor": PREFETCH_FACTOR},
    }


FIX = Fix(id="persistent-workers", title="Keep DataLoader workers alive between epochs", effort=1, addresses=INPUT,
          build=build, try_keys=("persistent_workers", "prefetch_factor"), keep=keep_loader_line,
          unadvised=lambda report: {"persistent_workers": True, "prefetch_factor": PREFETCH_FACTOR})
