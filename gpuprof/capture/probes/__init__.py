"""Probes: run inside the user's processes. They import only gpuprof.record and the standard library
at start-up; torch-facing probes are installed lazily when the program itself imports torch."""
