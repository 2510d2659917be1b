"""`gpuprof try`: its command line (the workflow is gpuprof.commands.workflows.trying). The keys `--set`
takes and the fixes `--fix` can apply are read from their declarations, so the help never drifts."""

from typing import List, Optional

import typer

from gpuprof.advise import fixes
from gpuprof.record.changes import SETTABLE

def try_(
    target: Optional[List[str]] = typer.Argument(None, metavar="SCRIPT [ARGS]...",
                                                 help="The training script and its arguments."),
    module: Optional[str] = typer.Option(None, "-m", "--module", metavar="MODULE",
                                         help="Run a module, as `python -m MODULE ARGS`."),
    set_: Optional[List[str]] = typer.Option(None, "--set", metavar="KEY=V[,V...]",
                                             help=f"A setting to try ({', '.join(SETTABLE)}); several values "
                                                  "give a sweep. Repeatable."),
    input_ceiling: bool = typer.Option(False, "--input-ceiling",
                                       help="Also measure the speed with the input pipeline made free (replayed batches)."),
    echo: Optional[int] = typer.Option(None, "--echo", metavar="E", help="Try batch echoing with factor E."),
    hdf5_cache: Optional[int] = typer.Option(None, "--hdf5-cache", metavar="BYTES",
                                             help="Try this HDF5 chunk cache size (and kept data-set handles)."),
    fix: Optional[List[str]] = typer.Option(None, "--fix", metavar="ID",
                                            help="Try a fix from the baseline's advice, exactly as it describes "
                                                 f"({', '.join(f.id for f in fixes.tryable())}). Repeatable."),
    top: int = typer.Option(0, "--top", metavar="N", help="Try the baseline's top N fixes that need no code change."),
    loader: Optional[str] = typer.Option(None, "--loader", metavar="FILE:LINE",
                                         help="The DataLoader to change [default: the one the baseline's report names]."),
    steps: int = typer.Option(40, "--steps", metavar="N", help="Measured steps per run."),
    warmup_steps: int = typer.Option(5, "--warmup-steps", metavar="K", help="Warm-up steps left out of each run."),
    rounds: int = typer.Option(3, "--rounds", metavar="R", help="Rounds of baseline and variants, at least."),
    max_rounds: int = typer.Option(8, "--max-rounds", metavar="M",
                                   help="Rounds at most: after --rounds, rounds are added until every speed-up's "
                                        "interval is clear (--max-rounds R for exactly R)."),
    budget: float = typer.Option(900.0, "--budget", metavar="SECONDS",
                                 help="No round is added once another would pass this many seconds."),
    min_window: float = typer.Option(2.0, "--min-window", metavar="SECONDS",
                                     help="Measure at least this long per run: short steps get more of them "
                                          "(0: exactly --steps)."),
    cold: bool = typer.Option(False, "--cold", help="Evict the files the program reads from the page cache before "
                                                    "every run, so each run reads the disk as a first epoch would."),
    out: Optional[str] = typer.Option(None, "--out", metavar="DIR",
                                      help="Folder for the experiment's runs [default: a new folder in "
                                           "~/.local/state/gpuprof/runs, named try-<script>-<host>-<time>-<id>]."),
    json_path: Optional[str] = typer.Option(None, "--json", metavar="FILE", help="Also write the results as JSON ('-' for stdout)."),
    markdown: Optional[str] = typer.Option(None, "--markdown", metavar="FILE", help="Also write the results as Markdown."),
    interval: Optional[float] = typer.Option(None, "--interval", metavar="SECONDS",
                                             help="System sampling interval [default: 0.1]."),
    gpu: Optional[bool] = typer.Option(None, "--gpu/--no-gpu", help="Sample GPUs through NVML [default: gpu]."),
    python: Optional[str] = typer.Option(None, "--python", metavar="EXE",
                                         help="Interpreter for SCRIPT or -m MODULE [default: the first python on PATH]."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines and no table (files are still written)."),
    command_mode: bool = typer.Option(False, "--command-mode", hidden=True),
):
    """Run SCRIPT several times, once per change and a baseline, in interleaved rounds, and print what
    each change measurably buys next to gpuprof's own estimate.

    Each run is bounded to --steps measured steps after --warmup-steps (stopped politely, as
    `gpuprof run --steps` does). The program's output goes to each run's folder, not the terminal.
    Changes are applied by gpuprof inside the program (no file is edited): exit status 0, or the
    program's own status if the baseline fails."""
    from gpuprof.commands.workflows.options import TryRequest
    from gpuprof.commands.workflows.trying import try_changes
    return try_changes(TryRequest(target=list(target or []), module=module, set_=set_, input_ceiling=input_ceiling,
                                  echo=echo, hdf5_cache=hdf5_cache, fix=fix, top=top, loader=loader, steps=steps,
                                  warmup_steps=warmup_steps, rounds=rounds, out=out, json_path=json_path,
                                  markdown=markdown, interval=interval, gpu=gpu, python=python, quiet=quiet,
                                  command_mode=command_mode, max_rounds=max_rounds, budget=budget, cold=cold,
                                  min_window=min_window))
