"""`gpuprof try`: run the program again with each change and measure what it buys, with no code change."""

import json
import os
import sys
from typing import List, Optional

import typer

from gpuprof.cli.app import app
from gpuprof.cli.run import RunCommand
from gpuprof.launch.errors import UsageProblem


@app.command(name="try", cls=RunCommand, context_settings={"help_option_names": ["-h", "--help"]})
def try_(
    target: Optional[List[str]] = typer.Argument(None, metavar="SCRIPT [ARGS]...",
                                                 help="The training script and its arguments."),
    module: Optional[str] = typer.Option(None, "-m", "--module", metavar="MODULE",
                                         help="Run a module, as `python -m MODULE ARGS`."),
    set_: Optional[List[str]] = typer.Option(None, "--set", metavar="KEY=V[,V...]",
                                             help="A DataLoader setting to try (num_workers, pin_memory, "
                                                  "persistent_workers, prefetch_factor, batch_size); several values "
                                                  "give a sweep. Repeatable."),
    input_ceiling: bool = typer.Option(False, "--input-ceiling",
                                       help="Also measure the speed with the input pipeline made free (replayed batches)."),
    echo: Optional[int] = typer.Option(None, "--echo", metavar="E", help="Try batch echoing with factor E."),
    hdf5_cache: Optional[int] = typer.Option(None, "--hdf5-cache", metavar="BYTES",
                                             help="Try this HDF5 chunk cache size (and kept data-set handles)."),
    fix: Optional[List[str]] = typer.Option(None, "--fix", metavar="ID",
                                            help="Try a fix from the baseline's advice, exactly as it describes. Repeatable."),
    top: int = typer.Option(0, "--top", metavar="N", help="Try the baseline's top N fixes that need no code change."),
    loader: Optional[str] = typer.Option(None, "--loader", metavar="FILE:LINE",
                                         help="The DataLoader to change [default: the one the baseline's report names]."),
    steps: int = typer.Option(40, "--steps", metavar="N", help="Measured steps per run."),
    warmup_steps: int = typer.Option(5, "--warmup-steps", metavar="K", help="Warm-up steps left out of each run."),
    rounds: int = typer.Option(3, "--rounds", metavar="R", help="Rounds of baseline and variants."),
    out: Optional[str] = typer.Option(None, "--out", metavar="DIR",
                                      help="Folder for the experiment's runs [default: ~/.local/state/gpuprof/runs/try-<script>-<host>-<time>-<id>]."),
    json_path: Optional[str] = typer.Option(None, "--json", metavar="FILE", help="Also write the results as JSON ('-' for stdout)."),
    markdown: Optional[str] = typer.Option(None, "--markdown", metavar="FILE", help="Also write the results as Markdown."),
    interval: float = typer.Option(0.1, "--interval", metavar="SECONDS", help="System sampling interval."),
    gpu: bool = typer.Option(True, "--gpu/--no-gpu", help="Sample GPUs through NVML."),
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
    return try_changes(target=target, module=module, set_=set_, input_ceiling=input_ceiling, echo=echo,
                       hdf5_cache=hdf5_cache, fix=fix, top=top, loader=loader, steps=steps,
                       warmup_steps=warmup_steps, rounds=rounds, out=out, json_path=json_path, markdown=markdown,
                       interval=interval, gpu=gpu, python=python, quiet=quiet, command_mode=command_mode)


def try_changes(target=None, module=None, set_=None, input_ceiling=False, echo=None, hdf5_cache=None, fix=None,
                top=0, loader=None, steps=40, warmup_steps=5, rounds=3, out=None, json_path=None, markdown=None,
                interval=0.1, gpu=True, python=None, quiet=False, command_mode=False, say=None,
                on_record=None) -> int:
    """The experiment, its table and files; returns the exit status. `on_record(record)` receives
    the try record (`run --verify` keeps its input check in the run's report)."""
    from gpuprof.experiments import variants as kinds
    from gpuprof.experiments.results import summarise
    from gpuprof.experiments.runner import Experiment, Interrupted, Plan, Settings, say_to_stderr, stderr_tail
    from gpuprof.launch.command import from_cli
    from gpuprof.reporting.outputs import check_all

    target = list(target or [])
    command = from_cli(target, module=module, command_mode=command_mode, python=python)
    if steps < 1:
        raise UsageProblem(f"--steps must be at least 1, not {steps}")
    if warmup_steps < 0:
        raise UsageProblem(f"--warmup-steps must not be negative, not {warmup_steps}")
    if not 1 <= rounds <= 50:
        raise UsageProblem(f"--rounds must be between 1 and 50, not {rounds}")
    if top < 0:
        raise UsageProblem(f"--top must not be negative, not {top}")
    if not 0.01 <= interval <= 60:
        raise UsageProblem(f"--interval must be between 0.01 and 60 seconds, not {interval}")
    variants = kinds.parse_set(set_)
    if input_ceiling:
        variants.insert(0, kinds.input_ceiling())
    if echo is not None:
        variants.append(kinds.echo(echo))
    if hdf5_cache is not None:
        variants.append(kinds.hdf5_cache(hdf5_cache))
    plan = Plan(variants=variants, fixes=list(fix or []), top=top)
    if plan.empty():
        raise UsageProblem("nothing to try: give --set KEY=VALUE, --input-ceiling, --echo E, --hdf5-cache BYTES, "
                           "--fix ID or --top N")
    check_all((json_path, "--json"), (markdown, "--markdown"))
    say = say or (say_to_stderr if not quiet else (lambda text: None))
    experiment = Experiment(command, plan, Settings(steps=steps, warmup_steps=warmup_steps, rounds=rounds,
                                                    interval=interval, gpu=gpu, out=out, loader=loader), say=say)
    experiment.prepare()
    say(f"runs your program several times (a baseline first, then {rounds} rounds of the baseline and each change); "
        f"each run's record and output are kept in {experiment.folder}, and your files are never edited (what the "
        "program itself writes, it writes once per run)")
    try:
        experiment.execute()
    except Interrupted:
        pass
    first = experiment.runs[0] if experiment.runs else None
    if first is not None and first["failed"]:
        say(f"the baseline run failed with status {first['exit_code']}; nothing was tried. The end of its stderr:")
        tail = stderr_tail(first["run_dir"])
        if tail:
            sys.stderr.write(tail + "\n")
    record = summarise(experiment)
    _save(record, experiment.folder)
    if not quiet:
        from gpuprof.render.try_console import render_try
        from gpuprof.reporting.save import is_terminal
        sys.stderr.write(render_try(record, terminal=is_terminal(sys.stderr)))
        sys.stderr.flush()
    from gpuprof.reporting.outputs import try_write
    if json_path is not None:
        try_write(json_path, json.dumps(record, indent=2, default=str) + "\n", "--json")
    if markdown is not None:
        from gpuprof.render.try_markdown import render_try_markdown
        try_write(markdown, render_try_markdown(record), "--markdown")
    if on_record is not None:
        on_record(record)
    return record["exit_code"]


TRY_FILE = "try.json"


def _save(record: dict, folder: str) -> None:
    """try.json in the experiment's folder. Its claim file `run.json` stays, saying what the folder
    holds, so a later run or try given the same --out makes a fresh folder inside it."""
    from gpuprof.record.atomic import write_text_atomic
    try:
        write_text_atomic(os.path.join(folder, TRY_FILE), json.dumps(record, indent=2, default=str) + "\n")
        write_text_atomic(os.path.join(folder, "run.json"), json.dumps(
            {"format": record["format"], "status": "finished", "results": TRY_FILE}) + "\n")
    except OSError as exc:
        sys.stderr.write(f"gpuprof: error: could not save {TRY_FILE} in {folder}: {exc.strerror or exc}\n")

