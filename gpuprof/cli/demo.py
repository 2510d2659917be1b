"""`gpuprof demo`: profile the bundled example and show what a report looks like."""

import os

import typer

from gpuprof.cli.app import app

DEMO_PROGRAM = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "demo_train.py")


@app.command()
def demo(
    out: str = typer.Option(None, "--out", metavar="DIR", help="Run folder [default: ~/.local/state/gpuprof/runs/<name>]."),
):
    """Run a bundled training example with a starved DataLoader under gpuprof."""
    from gpuprof.cli.profile import profile

    return profile(target=[DEMO_PROGRAM], out=out)
