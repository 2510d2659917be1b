"""gpuprof in a notebook: `%load_ext gpuprof`, then %%gpuprof on a training cell."""
