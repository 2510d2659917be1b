"""`gpuprof demo`: profile the bundled example and show what a report looks like."""

import os

import typer

DEMO_PROGRAM = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples", "demo_train.py")


def demo(
    out: str = typer.Option(None, "--out", metavar="DIR", help="Run folder [default: a new folder in ~/.local/state/gpuprof/runs]."),
):
    """Run a bundled training example with a starved DataLoader under gpuprof."""
    from gpuprof.commands.workflows.options import RunRequest
    from gpuprof.commands.workflows.run import profile

    return profile(RunRequest(target=[DEMO_PROGRAM], out=out))
