"""`gpuprof doctor`: what gpuprof can see here; with --simulated, GPU scenarios on the simulated
device; with --verify, the scenarios marked real on the GPU at hand. Exit 0 when the checks ran or
every scenario agreed, 1 when a scenario disagreed, 2 on bad input (one line)."""

import json
import os
import shutil
import sys
import tempfile

from gpuprof.errors import UsageProblem
from gpuprof.present.reporting.outputs import check_all, write_output
from gpuprof.commands.workflows.messages import error

NO_GPU = "no GPU here: --verify needs one; --simulated runs the scenarios on the simulated device"


def doctor(simulated: bool = False, verify: bool = False, scenarios=(), keep: str = None, json_path: str = None) -> int:
    if simulated and verify:
        raise UsageProblem("--simulated and --verify: choose one")
    if not (simulated or verify) and (scenarios or keep or json_path):
        raise UsageProblem("--scenario, --keep and --json go with --simulated or --verify")
    check_all((json_path, "--json"))
    _check_keep(keep)
    from gpuprof.commands.doctor.scenarios import choose
    chosen = choose(list(scenarios or []), real_only=verify) if (simulated or verify) else []
    if simulated:
        return run_scenarios(chosen, _python_with_torch(), None, keep, json_path)
    if verify and not _nvml_sees_a_gpu():
        error(NO_GPU)
        return 2
    from gpuprof.commands.doctor import checks
    from gpuprof.commands.doctor.gather import gather
    from gpuprof.commands.doctor.lines import fancy, render
    facts = gather()
    python = checks.cuda_python(facts)
    if verify and python is None:
        gpus = len(facts["nvml"].get("gpus") or [])
        error(f"NVML sees {gpus} GPU(s), but no python here has a torch that can use one: --verify needs it "
              "(gpuprof doctor says more)" if gpus else NO_GPU)
        return 2
    from gpuprof.present.render.text_width import text_width
    pretty = fancy(sys.stdout)
    sys.stdout.write(render(checks.sections(facts), pretty=pretty, width=text_width(sys.stdout.isatty())))
    sys.stdout.flush()
    if not verify:
        return 0
    from gpuprof.commands.doctor.runner import machine_at_hand
    return run_scenarios(chosen, python, machine_at_hand(facts["nvml"]), keep, json_path)


def _nvml_sees_a_gpu() -> bool:
    """--verify refuses a machine without a GPU before the checks (torch in child processes, the peak
    benchmark) spend seconds on facts it would not print."""
    from gpuprof.commands.doctor.nvml_facts import read_nvml
    return bool(read_nvml().get("gpus"))


def run_scenarios(chosen: list, python: str, machine, keep, json_path) -> int:
    """Run each scenario in turn, print the table, write the JSON; 0 when all agree, else 1. Without
    --keep, the folders of scenarios that agreed are removed and those that did not are kept."""
    from gpuprof.commands.doctor import table
    from gpuprof.commands.doctor.lines import fancy
    from gpuprof.commands.doctor.runner import Runner
    work_dir = keep or tempfile.mkdtemp(prefix="gpuprof-doctor-")
    os.makedirs(work_dir, exist_ok=True)
    runner = Runner(work_dir, python, machine)
    outcomes = []
    for i, scenario in enumerate(chosen, 1):
        _progress(f"[{i}/{len(chosen)}] {scenario.name}: {scenario.what or scenario.program} ...")
        outcome = runner.run(scenario)
        _progress(f"[{i}/{len(chosen)}] {scenario.name}: {'agrees' if outcome.ok else 'DIFFERS'} "
                  f"({outcome.seconds:.0f} s)")
        outcomes.append(outcome)
        if not keep and outcome.ok:
            shutil.rmtree(outcome.folder, ignore_errors=True)
            outcome.folder = None
    if not keep:
        _remove_if_empty(work_dir)
    from gpuprof.present.render.text_width import text_width
    sys.stdout.write(table.render(outcomes, pretty=fancy(sys.stdout), width=text_width(sys.stdout.isatty())))
    sys.stdout.flush()
    if json_path:
        try:
            write_output(json_path, json.dumps(table.to_json(outcomes), indent=1) + "\n")
        except OSError as exc:
            error(f"could not write --json {json_path}: {exc.strerror or exc}")
    return 0 if all(o.ok for o in outcomes) else 1


def _python_with_torch() -> str:
    """The interpreter a scenario's program runs in: the one `gpuprof run` starts, else gpuprof's own."""
    from gpuprof.commands.doctor.gather import ask_torch_where_jobs_run
    answers, _ = ask_torch_where_jobs_run()
    for answer in answers:
        if not answer.get("error"):
            return answer["python"]
    raise UsageProblem("the scenarios need torch, and it is not importable in "
                       + " nor in ".join(f"{a['python']} ({a['error']})" for a in answers))


def _check_keep(keep) -> None:
    if keep and os.path.exists(keep) and (not os.path.isdir(keep) or os.listdir(keep)):
        raise UsageProblem(f"--keep {keep}: give a new or empty folder")


def _remove_if_empty(folder: str) -> None:
    try:
        os.rmdir(folder)
    except OSError:
        pass


def _progress(line: str) -> None:
    sys.stderr.write(f"gpuprof doctor: {line}\n")
    sys.stderr.flush()
