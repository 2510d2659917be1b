"""`python -m gpuprof.priors` prints the table of priors as Markdown (docs/priors.md)."""

from gpuprof.priors.table import markdown

print(markdown(), end="")
