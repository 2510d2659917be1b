"""`gpuprof try`: run the program again with each change and measure what it buys, with no code change."""

import json
import os
import sys

from gpuprof.errors import UsageProblem
from gpuprof.commands.workflows.options import TryRequest


def try_changes(request: TryRequest) -> int:
    """The experiment, its table and files; returns the exit status. `request.on_record(record)`
    receives the try record (`run --verify` keeps its input check in the run's report). Options left
    None (out, interval, gpu, python) take their values from [tool.gpuprof.run], as `run`'s do."""
    from gpuprof.commands.experiments.plan_words import rounds_words
    from gpuprof.commands.experiments.results import summarise
    from gpuprof.commands.experiments.runner import Experiment, Interrupted, Settings, say_to_stderr
    from gpuprof.capture.launch.command import from_cli
    from gpuprof.present.reporting.outputs import check_all

    request = request.settled()
    steps, warmup_steps, rounds, max_rounds = request.steps, request.warmup_steps, request.rounds, request.max_rounds
    budget, min_window, top, interval = request.budget, request.min_window, request.top, request.interval
    fix, loader, quiet, json_path, markdown = request.fix, request.loader, request.quiet, request.json_path, \
        request.markdown
    command = from_cli(request.target, module=request.module, command_mode=request.command_mode,
                       python=request.python)
    _check_numbers(steps, warmup_steps, rounds, max_rounds, budget, min_window, top, interval)
    _check_fix_ids(fix)
    check_loader(loader)
    plan = _plan(request.set_, request.input_ceiling, request.echo, request.hdf5_cache, fix, top)
    check_all((json_path, "--json"), (markdown, "--markdown"))
    say = request.say or (say_to_stderr if not quiet else (lambda text: None))
    experiment = Experiment(command, plan, Settings(steps=steps, warmup_steps=warmup_steps, rounds=rounds,
                                                    interval=interval, gpu=request.gpu, out=request.out,
                                                    loader=loader, max_rounds=max_rounds, budget_s=budget,
                                                    cold=request.cold, min_window_s=min_window), say=say)
    experiment.prepare()
    say(f"runs your program several times (a baseline first, then {rounds_words(rounds, max_rounds, budget)} "
        "of the baseline and each change); "
        f"each run's record and output are kept in {experiment.folder}, and your files are never edited (what the "
        "program itself writes, it writes once per run)")
    try:
        experiment.execute()
    except Interrupted:
        pass
    _explain_failed_baseline(experiment, say)
    record = summarise(experiment)
    _save(record, experiment.folder)
    _show_and_write(record, quiet, json_path, markdown)
    if request.on_record is not None:
        request.on_record(record)
    return record["exit_code"]


def check_run_numbers(steps, warmup_steps, min_window, interval) -> None:
    """Refuse the options every measured run shares (try's and tune's) out of range."""
    if steps < 1:
        raise UsageProblem(f"--steps must be at least 1, not {steps}")
    if warmup_steps < 0:
        raise UsageProblem(f"--warmup-steps must not be negative, not {warmup_steps}")
    if not 0 <= min_window <= 600:
        raise UsageProblem(f"--min-window must be between 0 and 600 seconds, not {min_window}")
    if not 0.01 <= interval <= 60:
        raise UsageProblem(f"--interval must be between 0.01 and 60 seconds, not {interval}")


def _check_numbers(steps, warmup_steps, rounds, max_rounds, budget, min_window, top, interval) -> None:
    """Refuse numeric options out of range before anything runs."""
    check_run_numbers(steps, warmup_steps, min_window, interval)
    if not 1 <= rounds <= 50:
        raise UsageProblem(f"--rounds must be between 1 and 50, not {rounds}")
    if max_rounds is not None and not 1 <= max_rounds <= 50:
        raise UsageProblem(f"--max-rounds must be between 1 and 50, not {max_rounds}")
    if budget is not None and budget <= 0:
        raise UsageProblem(f"--budget must be a positive number of seconds, not {budget}")
    if top < 0:
        raise UsageProblem(f"--top must not be negative, not {top}")


def _check_fix_ids(fix) -> None:
    """Refuse a --fix that try cannot apply before the baseline runs: whether the baseline's advice
    includes it can only be known afterwards, but an id that no fix has, or one that needs a code
    change, is wrong whatever the baseline says."""
    import difflib

    from gpuprof.advise import fixes
    tryable = [f.id for f in fixes.tryable()]
    for fix_id in fix or []:
        if fix_id in tryable:
            continue
        if fixes.get(fix_id) is not None:
            raise UsageProblem(f"--fix {fix_id}: this fix needs a code change, which try cannot make; "
                               f"try can apply {', '.join(tryable)}")
        close = difflib.get_close_matches(fix_id, tryable, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise UsageProblem(f"--fix {fix_id}: no such fix; {hint}try can apply {', '.join(tryable)}")


def check_loader(loader) -> None:
    """--loader names a line as FILE:LINE; anything else could never match a DataLoader."""
    if loader is None:
        return
    path, _, line = loader.rpartition(":")
    if not path or not line.isdigit() or int(line) < 1:
        raise UsageProblem(f"--loader {loader}: give the line that builds the DataLoader as FILE:LINE "
                           "(train.py:42)")


def _plan(set_, input_ceiling, echo, hdf5_cache, fix, top):
    """The changes to try, in the order they run; refused when there is nothing to try."""
    from gpuprof.commands.experiments import variants as kinds
    from gpuprof.commands.experiments.runner import Plan
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
    return plan


def _explain_failed_baseline(experiment, say) -> None:
    """When the baseline failed, nothing was tried: say so and show the end of its stderr."""
    from gpuprof.commands.experiments.runner import stderr_tail
    first = experiment.runs[0] if experiment.runs else None
    if first is not None and first["failed"]:
        say(f"the baseline run failed with status {first['exit_code']}; nothing was tried. The end of its stderr:")
        tail = stderr_tail(first["run_dir"])
        if tail:
            sys.stderr.write(tail + "\n")


def _show_and_write(record: dict, quiet: bool, json_path, markdown) -> None:
    """The table on stderr unless quiet, then the --json and --markdown files."""
    from gpuprof.present.render import formats
    if not quiet:
        from gpuprof.present.reporting.save import is_terminal
        sys.stderr.write(formats.render("try-console", record, terminal=is_terminal(sys.stderr)))
        sys.stderr.flush()
    from gpuprof.present.reporting.outputs import try_write
    if json_path is not None:
        try_write(json_path, formats.render("try-json", record), "--json")
    if markdown is not None:
        try_write(markdown, formats.render("try-markdown", record), "--markdown")


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

