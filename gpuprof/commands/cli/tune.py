"""`gpuprof tune`: its command line (the workflow is gpuprof.commands.workflows.tuning). The settings --allow
takes are read from their declarations (gpuprof.commands.tune.knobs), so the help never drifts."""

from typing import List, Optional

import typer

from gpuprof.commands.tune.knobs import ALLOWABLE, SAFE


def tune(
    target: Optional[List[str]] = typer.Argument(None, metavar="SCRIPT [ARGS]...",
                                                 help="The training script and its arguments."),
    module: Optional[str] = typer.Option(None, "-m", "--module", metavar="MODULE",
                                         help="Run a module, as `python -m MODULE ARGS`."),
    budget: float = typer.Option(300.0, "--budget", metavar="SECONDS",
                                 help="Search for at most this long; no round starts that would pass it."),
    allow: Optional[List[str]] = typer.Option(None, "--allow", metavar="NAME[,NAME]",
                                              help="Also search settings that change numerics or the schedule "
                                                   f"({', '.join(k.key for k in ALLOWABLE)}). Repeatable."),
    only: Optional[List[str]] = typer.Option(None, "--only", metavar="NAME[,NAME]",
                                             help="Search only these settings (a quicker search). Repeatable."),
    patch: Optional[str] = typer.Option(None, "--patch", metavar="FILE",
                                        help="Write the best combination as a unified diff of your files ('-' for stdout)."),
    apply: bool = typer.Option(False, "--apply", help="Write the patch into your files, then check it (refused on a "
                                                      "git tree with uncommitted changes unless --force)."),
    force: bool = typer.Option(False, "--force", help="With --apply: apply even with uncommitted changes."),
    check: bool = typer.Option(False, "--check", help="Run the patched program (a copy, unless --apply) against the "
                                                      "unchanged one: the gain, its stdout and exit status."),
    check_rounds: int = typer.Option(3, "--check-rounds", metavar="R", help="Runs of each program in the check."),
    check_steps: Optional[int] = typer.Option(None, "--check-steps", metavar="N",
                                              help="Bound each check run to N measured steps [default: the "
                                                   "program runs to its end]."),
    steps: int = typer.Option(20, "--steps", metavar="N", help="Measured steps per search run."),
    warmup_steps: int = typer.Option(3, "--warmup-steps", metavar="K", help="Warm-up steps left out of each run."),
    min_window: float = typer.Option(1.0, "--min-window", metavar="SECONDS",
                                     help="Measure at least this long per run: short steps get more of them."),
    loader: Optional[str] = typer.Option(None, "--loader", metavar="FILE:LINE",
                                         help="The DataLoader to tune [default: the one the baseline's report names]."),
    out: Optional[str] = typer.Option(None, "--out", metavar="DIR",
                                      help="Folder for the search's runs [default: a new folder in "
                                           "~/.local/state/gpuprof/runs, named tune-<script>-<host>-<time>-<id>]."),
    json_path: Optional[str] = typer.Option(None, "--json", metavar="FILE",
                                            help="Also write the results as JSON (gpuprof.tune/1; '-' for stdout)."),
    markdown: Optional[str] = typer.Option(None, "--markdown", metavar="FILE", help="Also write the results as Markdown."),
    interval: Optional[float] = typer.Option(None, "--interval", metavar="SECONDS",
                                             help="System sampling interval [default: 0.1]."),
    gpu: Optional[bool] = typer.Option(None, "--gpu/--no-gpu", help="Sample GPUs through NVML [default: gpu]."),
    python: Optional[str] = typer.Option(None, "--python", metavar="EXE",
                                         help="Interpreter for SCRIPT or -m MODULE [default: the first python on PATH]."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines and no table (files are still written)."),
    command_mode: bool = typer.Option(False, "--command-mode", hidden=True),
):
    from gpuprof.commands.workflows.tuning import tune as run_tune
    return run_tune(target=target, module=module, command_mode=command_mode, budget=budget, allow=allow, only=only,
                    steps=steps, warmup_steps=warmup_steps, min_window=min_window, loader=loader, out=out,
                    json_path=json_path, markdown=markdown, patch_path=patch, apply=apply, force=force, check=check,
                    check_rounds=check_rounds, check_steps=check_steps, interval=interval, gpu=gpu, python=python,
                    quiet=quiet)


tune.__doc__ = f"""Search combinations of the settings gpuprof can apply inside SCRIPT without changing what it
    computes ({', '.join(k.key for k in SAFE)}), measured against the unchanged program in
    interleaved rounds, and show the best with its interval.

    The search starts from a baseline run's report and its advice, and stops when nothing around the
    best is faster beyond the noise, or at --budget. --patch writes the best as a diff of your files;
    nothing is written to them unless --apply. Exit status 0; 1 when the check failed."""
