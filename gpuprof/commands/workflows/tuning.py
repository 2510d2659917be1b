"""`gpuprof tune`: search combinations of the settings gpuprof can apply inside the program, within a
budget, then write the best where it lives (a patch), apply it on request and check it.

The measuring is try's (gpuprof.commands.tune.measuring drives its runner round by round); the plan is
gpuprof.commands.tune.search; nothing is written to the user's files unless --apply, which refuses a git
tree with uncommitted changes unless --force."""

import json
import os
import sys
import time

from gpuprof.errors import UsageProblem

ALWAYS_RUN = 2      # rounds the budget never stops: the fewest that give an interval


def tune(target=None, module=None, command_mode=False, budget=300.0, allow=None, only=None, steps=20, warmup_steps=3,
         min_window=1.0, loader=None, out=None, json_path=None, markdown=None, patch_path=None, apply=False,
         force=False, check=False, check_rounds=3, check_steps=None, interval=None, gpu=None, python=None,
         quiet=False, say=None) -> int:
    """The search, its outputs, the patch and its check; returns the exit status (0; 1 when the check
    failed; the program's status when the baseline failed; 128+N after signal N)."""
    from gpuprof.commands.experiments.runner import Interrupted, Settings
    from gpuprof.capture.launch.command import from_cli
    from gpuprof.present.reporting.outputs import check_all
    from gpuprof.commands.tune import knobs, patch as patching, program
    from gpuprof.commands.tune.measuring import TuneExperiment
    from gpuprof.commands.tune.search import Search
    from gpuprof.commands.workflows.run_config import settle
    from gpuprof.commands.workflows.trying import check_loader

    settled = settle({"out": out, "interval": interval, "gpu": gpu, "python": python})
    command = from_cli(list(target or []), module=module, command_mode=command_mode, python=settled["python"])
    _check_numbers(budget, steps, warmup_steps, min_window, check_rounds, check_steps, settled["interval"])
    check_loader(loader)
    allowed = knobs.parse_allow(allow)
    limited = knobs.parse_only(only, allowed)
    check_all((json_path, "--json"), (markdown, "--markdown"), (patch_path, "--patch"))
    cwd = os.getcwd()
    if apply and not force:
        refuse_uncommitted([patching.script_file(command, cwd) or cwd])
    say = say or (_say_to_stderr if not quiet else (lambda text: None))
    settings = Settings(steps=steps, warmup_steps=warmup_steps, rounds=1, max_rounds=1, interval=settled["interval"],
                        gpu=settled["gpu"], out=settled["out"], loader=loader, budget_s=budget, min_window_s=min_window)
    experiment = TuneExperiment(command, settings, say=say)
    experiment.prepare()
    say(f"runs your program many times within {budget:.0f} s (--budget): a baseline, then rounds of the "
        f"unchanged program beside combinations of settings; each run's record and output are kept in "
        f"{experiment.folder}; your files are not edited" + (" until the search ends (--apply)" if apply else ""))
    started = time.monotonic()
    search, facts = None, None
    try:
        first = experiment.start()
        if first["failed"]:
            return _failed_baseline(experiment, first, say)
        facts = program.facts_of(experiment.baseline_report, loader)
        searched = program.searched_keys(facts, allowed, limited)
        search = Search(facts, searched, program.seeds_of(experiment.baseline_report, searched))
        _rounds(experiment, search, budget, started, say)
    except Interrupted:
        if search is None:
            return 128 + int(experiment.interrupted)
        search.stop("interrupted by a signal")
    from gpuprof.commands.tune import outcome
    record = outcome.record(experiment, search, facts, allowed, time.monotonic() - started, budget,
                            program.left_out(facts, allowed, limited))
    if experiment.interrupted is not None:
        record["exit_code"] = 128 + int(experiment.interrupted)
    elif record["best"] and record["best"]["faster"]:
        _keep(record, experiment, search, facts, command, cwd, patch_path, apply, force, check,
              check_rounds, check_steps, say)
    elif check or apply or patch_path:
        record["notes"].append("no combination was measurably faster: no patch was written, applied or checked")
    _save(record, experiment.folder)
    _show_and_write(record, quiet, json_path, markdown)
    return record["exit_code"]


def _keep(record, experiment, search, facts, command, cwd, patch_path, apply, force, check, check_rounds,
          check_steps, say) -> None:
    """The patch for the best combination: written to --patch, applied with --apply, then checked."""
    from gpuprof.commands.experiments.runner import Interrupted, Settings
    from gpuprof.commands.tune import patch as patching
    from gpuprof.commands.tune.check import check as check_patch
    from gpuprof.commands.tune.outcome import check_section, patch_section
    built = patching.build(search.best, facts, experiment.baseline_report, command, cwd)
    record["patch"] = patch_section(built, patch_path)
    _write(os.path.join(experiment.folder, "tune.patch"), built.text)
    if patch_path is not None and patch_path != "-":
        _write(patch_path, built.text)
    elif patch_path == "-":
        sys.stdout.write(built.text)
    if apply and built.files:
        if not force:
            refuse_uncommitted([f.path for f in built.files])
        try:
            patching.apply(built)
        except OSError as exc:
            raise UsageProblem(f"--apply: {exc}")
        record["applied"] = True
        say(f"applied the patch to {', '.join(f.shown for f in built.files)}; to undo it: git apply -R "
            f"{os.path.join(experiment.folder, 'tune.patch')} (in {built.root})")
    if (check or apply) and built.files:
        s = experiment.settings
        settings = Settings(steps=check_steps, warmup_steps=s.warmup_steps if check_steps else 0,
                            interval=s.interval, gpu=s.gpu, out=s.out)
        promised = search.versus(search.best, {})
        try:
            result = check_patch(command, built, cwd, experiment.folder, settings, promised, record["applied"],
                                 say, rounds=check_rounds)
        except Interrupted as stopped:
            record["notes"].append("the check was interrupted by a signal")
            record["exit_code"] = 128 + int(stopped.signum)
            return
        record["check"] = check_section(result, record["applied"])
        record["exit_code"] = 0 if result.passed else 1


def _rounds(experiment, search, budget: float, started: float, say) -> None:
    """Rounds until the search ends or the next would pass the budget. Rounds 1 and 2 always run:
    one round has no interval, so a budget that stopped after it would have spent its time deciding
    nothing (round 1's baseline ran while planning)."""
    from gpuprof.commands.tune.candidates import label_of
    while True:
        combinations = search.next_round()
        if combinations is None:
            return
        round_no = search.round + 1
        spent = time.monotonic() - started
        cost = experiment.per_run_s() * (len(combinations) + (1 if round_no > 1 else 0))
        if round_no > ALWAYS_RUN and spent + cost > budget:
            search.stop(f"the next round ({len(combinations) + 1} runs, about {cost:.0f} s) would pass the "
                        f"{budget:.0f} s budget (--budget)")
            return
        stage = search.stage
        what = f"stage {stage.number}, {stage.why}" if stage else "the best against the unchanged program"
        best = search.best
        so_far = f"{label_of(best)} ({search.versus(best, {}).centre or 1:.2f}x)" if best else "as it is"
        say(f"[{spent:.0f}/{budget:.0f} s] round {round_no} ({what}): {len(combinations)} combination"
            f"{'s' if len(combinations) != 1 else ''}; best so far: {so_far}")
        search.record(experiment.measure(round_no, combinations))


def refuse_uncommitted(paths) -> None:
    from gpuprof.commands.tune.git_tree import uncommitted
    dirty = uncommitted([p for p in paths if p])
    if dirty:
        raise UsageProblem(f"--apply: uncommitted changes in {dirty[0]}; commit or stash them first (the patch "
                           "should be the only change), or add --force")


def _check_numbers(budget, steps, warmup_steps, min_window, check_rounds, check_steps, interval) -> None:
    from gpuprof.commands.workflows.trying import check_run_numbers
    if not budget > 0:
        raise UsageProblem(f"--budget must be a positive number of seconds, not {budget}")
    check_run_numbers(steps, warmup_steps, min_window, interval)
    if not 2 <= check_rounds <= 20:
        raise UsageProblem(f"--check-rounds must be between 2 and 20, not {check_rounds}")
    if check_steps is not None and check_steps < 1:
        raise UsageProblem(f"--check-steps must be at least 1, not {check_steps}")


def _failed_baseline(experiment, first, say) -> int:
    from gpuprof.commands.experiments.runner import stderr_tail
    say(f"the baseline run failed with status {first['exit_code']}; nothing was searched. The end of its stderr:")
    tail = stderr_tail(first["run_dir"])
    if tail:
        sys.stderr.write(tail + "\n")
    return first["exit_code"] if first["exit_code"] not in (0, None) else 1


def _write(path: str, text: str) -> None:
    from gpuprof.present.reporting.outputs import try_write
    try_write(path, text, "--patch")


def _show_and_write(record: dict, quiet: bool, json_path, markdown) -> None:
    from gpuprof.present.reporting.outputs import try_write
    from gpuprof.commands.tune import text
    if not quiet:
        sys.stderr.write(text.console(record))
        sys.stderr.flush()
    if json_path is not None:
        try_write(json_path, json.dumps(record, indent=2, default=str) + "\n", "--json")
    if markdown is not None:
        try_write(markdown, text.markdown(record), "--markdown")


TUNE_FILE = "tune.json"


def _save(record: dict, folder: str) -> None:
    """tune.json in the search's folder, which its run.json then names (as try's folder does)."""
    from gpuprof.record.atomic import write_text_atomic
    try:
        write_text_atomic(os.path.join(folder, TUNE_FILE), json.dumps(record, indent=2, default=str) + "\n")
        write_text_atomic(os.path.join(folder, "run.json"), json.dumps(
            {"format": record["format"], "status": "finished", "results": TUNE_FILE}) + "\n")
    except OSError as exc:
        sys.stderr.write(f"gpuprof: error: could not save {TUNE_FILE} in {folder}: {exc.strerror or exc}\n")


def _say_to_stderr(text: str) -> None:
    sys.stderr.write(f"gpuprof tune: {text}\n")
    sys.stderr.flush()
