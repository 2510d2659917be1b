"""`gpuprof demo`: profile the bundled example and show what a report looks like."""

import os

import typer

from gpuprof.cli import app

DEMO_PROGRAM = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "demo_train.py")


@app.command()
def demo(
    out: str = typer.Option(None, "--out", metavar="DIR", help="Run folder [default: gpuprof-runs/<name>]."),
):
    """Run a bundled training example with a starved DataLoader under gpuprof."""
    from gpuprof.cli.run import run

    return run(target=[DEMO_PROGRAM], module=None, out=out, json_path=None, interval=0.1, probes=True,
               gpu=True, quiet=False, live=None, command_mode=False)
