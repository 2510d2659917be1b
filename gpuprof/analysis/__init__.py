"""Pure analysis of a saved Run record: no live processes, no drawing, only `gpuprof.record`."""
