"""gpuprof: why is my GPU idle, and what do I change first?

This package is imported inside the user's training processes by the bootstrap, so it must stay
light: nothing here imports torch, rich, typer or psutil.
"""

__version__ = "0.1.0"


def load_ipython_extension(ipython) -> None:
    """`%load_ext gpuprof`: the %%gpuprof and %gpuprof magics (gpuprof.notebook)."""
    from gpuprof.notebook.magic import load
    load(ipython)
