"""spawned-worker-imports: DataLoader workers started with spawn or forkserver import the main
script again (as `__mp_main__`), so its top-level code and imports run once per worker at every
start: every epoch, when the workers are not persistent. Keeping the top level to definitions (the
rest under the `__main__` guard) and importing heavy libraries where they are used makes each
start cheaper. Not estimated: how much of a worker's start is the script's own top level is not
measured apart from the interpreter's start; ranked by a prior no larger than the bound of the
restarts gone."""

from gpuprof.advise.fix import Fix
from gpuprof.priors.model_fixes import SPAWNED_IMPORTS_PRIOR
from gpuprof.judge.verdict import bottlenecks
#: A worker start per epoch from which the script's top level is worth looking at.
SLOW_START_S = 0.5

SNIPPET = """import torch                      # keep the top level to imports the workers need, and definitions

class MyDataset(torch.utils.data.Dataset):
    ...

def main():
    import heavy_library          # used only by the training process: imported there
    ...

if __name__ == "__main__":        # spawned workers import this file: nothing below runs in them
    main()
"""


#: How much a lighter top level is assumed to buy, at most: ranked by it until measured.
PRIOR = SPAWNED_IMPORTS_PRIOR.value


def build(ev, s):
    loader = ev.loader or {}
    epochs = loader.get("epochs") or 0
    if (loader.get("context") not in ("spawn", "forkserver") or not loader.get("num_workers")
            or loader.get("persistent_workers") or epochs < 2 or not ev.window_s):
        return None
    per_epoch = (loader.get("epoch_start_wait_s") or 0.0) / epochs
    lost = per_epoch * (epochs - 1)
    if per_epoch < SLOW_START_S or lost >= ev.window_s:
        return None
    bound = ev.window_s / (ev.window_s - lost)
    return {"estimated_speedup": None, "prior": min(PRIOR, bound), "where": loader.get("where"),
            "detail": f"{loader['context']} workers import the main script again at each start: keep its top level "
                      "to imports the workers need and definitions, put everything else under "
                      "`if __name__ == \"__main__\":`, and import heavy libraries inside the functions that use them",
            "snippet": SNIPPET,
            "why": f"each start of the {loader['num_workers']} workers waited {per_epoch:.2f} s for their first "
                   f"batches, again in {epochs - 1} later epochs; not estimated (the script's own top level is not "
                   f"timed apart from the interpreter's start): at most {bound:.2f}x with those waits gone"}


FIX = Fix(id="spawned-worker-imports", title="Lighten what spawned workers import: the __main__ guard", effort=2,
          addresses=(bottlenecks.SETUP.id,), build=build)
