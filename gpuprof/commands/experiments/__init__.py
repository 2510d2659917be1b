"""`gpuprof try`: measure what each change buys by running the program again with it, through the
same launch path as `gpuprof run`, in interleaved rounds against a baseline."""
