"""lazy-dataset-indexing: list and check the data files once and save the index, or look each
sample's file up when it is first read, instead of walking the storage at every start-up.
Estimated on the run's wall time: the indexing part of the start-up goes."""

from gpuprof.advise.fix import Fix
from gpuprof.advise.startup_terms import part_fix
from gpuprof.judge.verdict import bottlenecks
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


_build = part_fix(PARTS, "listing and checking the data files",
                  "save the list of data files once and read it on later runs, and open or check each file "
                  "when its sample is first read (in __getitem__) rather than all of them at start-up",
                  SNIPPET)


def build(ev, s):
    return _build(ev, s)


FIX = Fix(id="lazy-dataset-indexing", title="Index the dataset once (or lazily), not at every start-up", effort=2,
          addresses=(bottlenecks.SETUP.id,), build=build)
