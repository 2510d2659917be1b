"""gpuprof: why is my GPU idle, and what do I change first?

This package is imported inside the user's training processes by the bootstrap, so it must stay
light: nothing here imports torch, rich, typer or psutil.
"""

from gpuprof.package import __version__  # noqa: F401  (the package's version, as `gpuprof.__version__`)


def load_ipython_extension(ipython) -> None:
    """`%load_ext gpuprof`: the %%gpuprof and %gpuprof magics (gpuprof.notebook)."""
    from gpuprof.notebook.magic import load
    load(ipython)
