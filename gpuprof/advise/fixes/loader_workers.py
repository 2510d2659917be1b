"""loader-workers: a hand-written loop that builds its batches on the CPU in the training thread
moves that work into DataLoader worker processes, which build the next batches alongside compute
as far as the cores allow (bounded by the CPU the steps use)."""

from gpuprof.advise.fix import MIN_GAIN, Fix
from gpuprof.advise.model import cpu_budget, more_capacity, shipping_share
from gpuprof.judge.verdict.evidence import HANDWRITTEN
from gpuprof.judge.verdict import bottlenecks
#: The most workers proposed (the fewest: 2).
MOST_WORKERS = 4


def build(ev, s):
    if s.input_kind != bottlenecks.INPUT_CPU.id or ev.wait_source not in HANDWRITTEN:
        return None
    workers = max(2, min(ev.cpu_count, MOST_WORKERS))
    k = min(workers, max(ev.cpu_count - 1, 1))
    ship = shipping_share(ev)          # batches made in workers cross between processes, both sides pay
    gain = min(more_capacity(ev, k, extra=ship), cpu_budget(ev, extra_work=2 * ship))
    if gain < MIN_GAIN:
        return None
    function = (ev.data_where or "get_batch").split(" (", 1)[0]
    return {
        "estimated_speedup": gain, "where": None,
        "detail": f"wrap {function} in an IterableDataset and iterate a DataLoader with {workers} workers, so the "
                  "next batches are built while the model trains. Randomness: each worker draws from its own "
                  "random stream, so the batches differ from today's (seed each worker for repeatable runs)",
        "snippet": ("class Batches(torch.utils.data.IterableDataset):\n"
                    "    def __iter__(self):\n"
                    "        while True:\n"
                    f"            yield {function}()\n"
                    f"batches = iter(DataLoader(Batches(), batch_size=None, num_workers={workers}, "
                    "persistent_workers=True))\n"
                    "x, y = next(batches)          # in place of the call in the loop"),
        "why": f"{s.input_cost(ev)}, built in the training thread; {workers} workers overlap it with compute, "
               f"bounded by the CPU: producers and compute must fit on {ev.cpu_count} cores",
    }


FIX = Fix(id="loader-workers", title="Make the batches in DataLoader workers instead of the training loop", effort=2,
          addresses=(bottlenecks.INPUT_CPU.id,), build=build)
