"""Judge: pure analysis of a saved run record — the sections built from its events (sections) and
the verdict over them (verdict). No live processes, no drawing; it reads `gpuprof.record`, the
priors and `gpuprof.stats` only."""
