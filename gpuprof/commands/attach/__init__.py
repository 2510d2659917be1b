"""`gpuprof attach PID`: a job that is already running, diagnosed from outside it."""
