"""lazy-dataset-indexing: list and check the data files once and save the index, or look each
sample's file up when it is first read, instead of walking the storage at every start-up.
Estimated on the run's wall time: the indexing part of the start-up goes."""

from gpuprof.advice.fix import MIN_GAIN, Fix
from gpuprof.advice.startup_terms import notable_part, run_gain, where_in, why
from gpuprof.analysis import bottlenecks
from gpuprof.record import startup_parts

PARTS = (startup_parts.INDEXING,)

SNIPPET = """index = Path("cache/index.json")
if index.exists():
    files = json.loads(index.read_text())             # later runs: no walk over the storage
else:
    files = sorted(str(p) for p in root.rglob("*.jpg"))
    index.write_text(json.dumps(files))
# and in the Dataset: open/check a file in __getitem__, not in __init__
"""


def build(ev, s):
    found = notable_part(ev, *PARTS)
    if found is None:
        return None
    startup, seconds = found
    gain = run_gain(startup, seconds)
    if gain is None or gain < MIN_GAIN:
        return None
    return {"estimated_speedup": gain, "where": where_in(startup, *PARTS),
            "detail": "save the list of data files once and read it on later runs, and open or check each file "
                      "when its sample is first read (in __getitem__) rather than all of them at start-up",
            "snippet": SNIPPET,
            "why": why(startup, seconds, "listing and checking the data files")}


FIX = Fix(id="lazy-dataset-indexing", title="Index the dataset once (or lazily), not at every start-up", effort=2,
          addresses=(bottlenecks.SETUP.id,), build=build)
