"""concurrent-fetch: a DataLoader whose producers wait on a remote store, one request at a time,
fetches a batch's samples concurrently in a `__getitems__`: the wait per batch falls by up to the
number of requests in flight."""

from gpuprof.advise.fix import MIN_GAIN, Fix, pct
from gpuprof.advise.loader_terms import where
from gpuprof.advise.model import cheaper_producer
from gpuprof.judge.verdict import bottlenecks
#: The most requests proposed in flight at once for a batch.
MOST_IN_FLIGHT = 8


def build(ev, s):
    if s.input_kind != bottlenecks.INPUT_LATENCY.id or not ev.loader or ev.wait_source != "dataloader":
        return None
    batch = ev.loader.get("batch_size") or 1
    in_flight = min(batch, MOST_IN_FLIGHT)
    if in_flight < 2:
        return None
    gain = cheaper_producer(ev, in_flight)
    if gain < MIN_GAIN:
        return None
    return {
        "estimated_speedup": gain, "where": where(ev),
        "detail": f"define __getitems__(self, indices) and fetch a batch's {batch} samples with {in_flight} requests "
                  "in flight (threads or async I/O); torch calls it once per batch",
        "snippet": ("def __getitems__(self, indices):      # in the Dataset class\n"
                    f"    with ThreadPoolExecutor({in_flight}) as pool:\n"
                    "        return list(pool.map(self.__getitem__, indices))"),
        "why": f"producers are idle {pct(1 - (ev.producer_cpu_ratio or 0))} of the time they fetch: they wait, one "
               "request after another",
    }


FIX = Fix(id="concurrent-fetch", title="Fetch the samples of a batch concurrently inside the Dataset", effort=2,
          addresses=(bottlenecks.INPUT_LATENCY.id,), build=build)
