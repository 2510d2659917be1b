"""`gpuprof gate REPORT`: its command line (the workflow is gpuprof.commands.workflows.gate)."""

from typing import List, Optional

import typer


FLAG_HELP = {
    "max_data_wait": "Fail when the data-wait share of step time is above F (0..1).",
    "min_samples_per_second": "Fail when throughput is below F samples/s.",
    "min_gpu_util": "Fail when mean GPU utilisation is below F (0..1).",
    "min_mfu": "Fail when model FLOPs utilisation (counted FLOPs per second over the device's peak) is below F (0..1).",
    "max_p90_step": "Fail when the 90th percentile of the measured steps' time is above F seconds (slow steps that "
                    "a median hides: periodic evaluation, checkpoints, stalls).",
    "max_regression": "Fail when the steady median step time is more than F slower than the baseline's (0.15 = 15%) "
                      "and the change is beyond the noise of the two sides.",
}


def gate(
    report: str = typer.Argument(..., metavar="REPORT", help="A report JSON or a run folder."),
    baseline: Optional[List[str]] = typer.Option(None, "--baseline", metavar="REPORT",
                                                 help="Compare step time with this run; repeat it for several runs "
                                                      "(rounds) of the baseline."),
    rounds: Optional[List[str]] = typer.Option(None, "--round", metavar="REPORT",
                                               help="Another run of the code under test (a round); the regression "
                                                    "check takes the median over rounds and their noise."),
    config: Optional[str] = typer.Option(None, "--config", metavar="FILE", help="TOML with [tool.gpuprof.gate] (default: pyproject.toml from the cwd upward)."),
    max_data_wait: Optional[float] = typer.Option(None, "--max-data-wait", metavar="F", help=FLAG_HELP["max_data_wait"]),
    min_samples_per_second: Optional[float] = typer.Option(None, "--min-samples-per-second", metavar="F", help=FLAG_HELP["min_samples_per_second"]),
    min_gpu_util: Optional[float] = typer.Option(None, "--min-gpu-util", metavar="F", help=FLAG_HELP["min_gpu_util"]),
    min_mfu: Optional[float] = typer.Option(None, "--min-mfu", metavar="F", help=FLAG_HELP["min_mfu"]),
    max_regression: Optional[float] = typer.Option(None, "--max-regression", metavar="F", help=FLAG_HELP["max_regression"]),
    max_p90_step: Optional[float] = typer.Option(None, "--max-p90-step", metavar="F", help=FLAG_HELP["max_p90_step"]),
    junit: Optional[str] = typer.Option(None, "--junit", metavar="FILE", help="Write JUnit XML, one testcase per threshold."),
    markdown: Optional[str] = typer.Option(None, "--markdown", metavar="FILE", help="Write a Markdown summary."),
    force: bool = typer.Option(False, "--force", help="Compare with a baseline of another program or batch size."),
    judge_busy_machine: bool = typer.Option(False, "--judge-busy-machine",
                                            help="Pass or fail every check as measured even when other processes "
                                                 "kept the machine busy (else a check the load could have moved "
                                                 "towards its result is not decided: exit 3)."),
):
    """Check a run against thresholds: exit 0 when all hold, 1 when any fails, 2 on bad input, 3 when
    some could not be decided on a machine other processes kept busy and none failed on a quiet one."""
    from gpuprof.present.reporting.outputs import check_all
    check_all((junit, "--junit"), (markdown, "--markdown"))
    flags = {"max_data_wait": max_data_wait, "min_samples_per_second": min_samples_per_second,
             "min_gpu_util": min_gpu_util, "min_mfu": min_mfu, "max_regression": max_regression, "max_p90_step": max_p90_step,
             "judge_busy_machine": judge_busy_machine}
    baselines = list(baseline or [])
    from gpuprof.commands.workflows.gate import run_gate
    return run_gate(report, baseline_path=baselines[0] if baselines else None, config=config, flags=flags,
                    junit=junit, markdown=markdown, force=force, round_paths=list(rounds or []),
                    baseline_round_paths=baselines[1:])
