"""`gpuprof doctor`: its command line (the workflow is gpuprof.commands.workflows.doctor)."""

from typing import List, Optional

import typer


def doctor(
    simulated: bool = typer.Option(False, "--simulated",
                                   help="Run the GPU scenarios on the simulated device and check gpuprof's verdicts."),
    verify: bool = typer.Option(False, "--verify",
                                help="Run the scenarios marked real on the GPU at hand and check gpuprof's verdicts."),
    scenario: Optional[List[str]] = typer.Option(None, "--scenario", metavar="NAME|FILE",
                                                 help="Only this scenario: a name, or a Python file defining SCENARIO "
                                                      "or SCENARIOS. Repeat it for several."),
    keep: Optional[str] = typer.Option(None, "--keep", metavar="DIR",
                                       help="Keep every scenario's machine, run folder, report and log in DIR (a new "
                                            "or empty folder) [default: only those that disagree]."),
    json_path: Optional[str] = typer.Option(None, "--json", metavar="FILE",
                                            help="Also write the scenarios' results as JSON."),
):
    """What gpuprof can see here: NVML, the GPUs, the GPUs a job may use, containers, torch, py-spy and limits.

    With --simulated or --verify, run GPU scenarios with known answers under `gpuprof run` and compare
    its reports with them: exit 0 when all agree, 1 when one does not, 2 on bad input."""
    from gpuprof.commands.workflows.doctor import doctor as run_doctor
    return run_doctor(simulated=simulated, verify=verify, scenarios=scenario or [], keep=keep, json_path=json_path)
