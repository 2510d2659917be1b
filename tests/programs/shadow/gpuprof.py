"""A user module that happens to be called gpuprof."""
WHO = "the user's own gpuprof.py"
