"""gpuprof: why is my GPU idle, and what do I change first?

This package is imported inside the user's training processes by the bootstrap, so it must stay
light: nothing here imports torch, rich, typer or psutil.
"""

# Relative, so that a private copy of this package in the job (the bootstrap's) never imports the
# name `gpuprof`, which the job's own code may use for a module of its own.
from .package import __version__  # noqa: F401  (the package's version, as `gpuprof.__version__`)


def load_ipython_extension(ipython) -> None:
    """`%load_ext gpuprof`: the %%gpuprof and %gpuprof magics (gpuprof.commands.notebook)."""
    from gpuprof.commands.notebook.magic import load
    load(ipython)
