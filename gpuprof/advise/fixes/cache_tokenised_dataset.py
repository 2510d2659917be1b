"""cache-tokenised-dataset: build (tokenise, preprocess) the dataset once and load the result on
later runs, instead of rebuilding it at every start-up. Estimated on the run's wall time: the
dataset part of the start-up goes, the load of the cached copy is taken as free."""

from gpuprof.advise.fix import Fix
from gpuprof.advise.startup_terms import part_fix
from gpuprof.judge.verdict import bottlenecks
from gpuprof.record import startup_parts

PARTS = (startup_parts.DATASET,)

SNIPPET = """# Hugging Face datasets: map() results are cached by fingerprint when the dataset comes from files
tokenised = raw.map(tokenise, batched=True, num_proc=4)      # keep load_from_cache_file=True (the default)
tokenised.save_to_disk("cache/tokenised")                    # once; later runs:
tokenised = datasets.load_from_disk("cache/tokenised")
# your own code: save the built tensors once (torch.save / a numpy memmap), keyed by the inputs
"""


_build = part_fix(PARTS, "building the dataset",
                  "build the dataset once and load it on later runs: with Hugging Face datasets keep "
                  "map()'s cache (a function it can hash, load_from_cache_file left on) or save_to_disk() "
                  "the result and load_from_disk() it; with your own code save the built tensors to a file",
                  SNIPPET)


def build(ev, s):
    return _build(ev, s)


FIX = Fix(id="cache-tokenised-dataset", title="Cache the built (tokenised) dataset between runs", effort=2,
          addresses=(bottlenecks.SETUP.id,), build=build)
