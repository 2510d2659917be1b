"""compile-cache: keep torch.compile's caches between runs (PyTorch's "Compile Time Caching"
recipes): its FX graph and AOTAutograd caches live under TORCHINDUCTOR_CACHE_DIR, by default in
the system's temp directory, which a container or a fresh node loses. Estimated on the run's
wall time with the whole compilation part gone, an upper bound (a warm cache still loads)."""

from gpuprof.advise.fix import Fix
from gpuprof.advise.startup_terms import part_fix
from gpuprof.judge.verdict import bottlenecks
from gpuprof.record import startup_parts

PARTS = (startup_parts.COMPILATION,)

SNIPPET = """# a persistent cache directory (default: the temp directory, lost with the container)
export TORCHINDUCTOR_CACHE_DIR=/data/cache/torchinductor
export TORCHINDUCTOR_FX_GRAPH_CACHE=1
# or carry the artifacts yourself (PyTorch >= 2.7):
#   artifact_bytes, _ = torch.compiler.save_cache_artifacts()       # after the first compiled steps
#   torch.compiler.load_cache_artifacts(artifact_bytes)             # before compiling in a later run
"""


_build = part_fix(PARTS, "compilation",
                  "keep torch.compile's caches between runs: a persistent TORCHINDUCTOR_CACHE_DIR with the "
                  "FX graph cache on, or torch.compiler.save_cache_artifacts()/load_cache_artifacts()",
                  SNIPPET)


def build(ev, s):
    return _build(ev, s)


FIX = Fix(id="compile-cache", title="Keep torch.compile's cache between runs", effort=1,
          addresses=(bottlenecks.SETUP.id,), build=build)
