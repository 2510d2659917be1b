"""Example programs shipped inside the package, for `gpuprof demo`."""
