"""Advice: the registered fixes (one module each, gpuprof.advise.fixes), each with when it applies
and how its gain is estimated, and the ranking that orders them for a run."""
