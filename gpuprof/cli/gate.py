"""`gpuprof gate REPORT`: pass or fail a saved run against thresholds and a baseline (exit 0/1/2)."""

import os
from typing import List, Optional

import typer

from gpuprof.cli.app import Command, app
from gpuprof.launch.errors import UsageProblem

FLAG_HELP = {
    "max_data_wait": "Fail when the data-wait share of step time is above F (0..1).",
    "min_samples_per_second": "Fail when throughput is below F samples/s.",
    "min_gpu_util": "Fail when mean GPU utilisation is below F (0..1).",
    "max_regression": "Fail when the steady median step time is more than F slower than the baseline's (0.15 = 15%) "
                      "and the change is beyond the noise of the two sides.",
}


def run_gate(report_path: str, report: dict = None, baseline_path=None, config=None, flags=None,
             junit=None, markdown=None, force=False, cwd=".", round_paths=(), baseline_round_paths=()) -> int:
    """Load, decide, write the outputs, show the table; returns 0 (pass) or 1 (fail).
    Bad input raises UsageProblem (exit 2)."""
    from gpuprof.gate import config as gate_config
    from gpuprof.gate.decide import decide
    from gpuprof.gate.errors import GateInputError
    from gpuprof.gate.load import load_report
    from gpuprof.gate.output import junit_xml, markdown as markdown_text
    from gpuprof.reporting.outputs import try_write

    try:
        file_values, source = gate_config.load(config, cwd)
        thresholds = gate_config.merge(file_values, flags or {})
        baseline_path = baseline_path or thresholds.pop("baseline", None)
        thresholds.pop("baseline", None)
        if not thresholds:
            raise GateInputError("no thresholds: give --max-data-wait, --min-samples-per-second, --min-gpu-util "
                                 "or --max-regression, or set them in [tool.gpuprof.gate]")
        if report is None:
            report = load_report(report_path)
        baseline = load_report(baseline_path) if baseline_path else None
        rounds = [load_report(path) for path in round_paths]
        baseline_rounds = [load_report(path) for path in baseline_round_paths]
        if baseline_rounds and baseline is None:
            raise GateInputError("more baseline runs were given without a first --baseline")
        result = decide(report, thresholds, baseline, force, rounds, baseline_rounds)
    except GateInputError as exc:
        raise UsageProblem(str(exc))
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        raise UsageProblem(f"{report_path}: a malformed report ({exc.__class__.__name__}: {exc})")
    written = True
    if junit:
        written = try_write(junit, junit_xml(result, report_path), "--junit") and written
    if markdown:
        written = try_write(markdown, markdown_text(result, report), "--markdown") and written
    show_table(result, source)
    if not written:
        return 2
    return 0 if result.passed else 1


def show_table(result, source) -> None:
    import sys

    from rich.table import Table

    from gpuprof.gate.output import fmt, limit_text
    from gpuprof.render.console import stream_console

    style = {"pass": "green", "fail": "bold red", "missing": "bold red", "skipped": "yellow"}
    table = Table(title="gpuprof gate" + (f" ({os.path.relpath(source)})" if source else ""), title_justify="left")
    for column in ("threshold", "measured", "limit", "result", "detail"):
        table.add_column(column)
    for check in result.checks:
        table.add_row(check.name, fmt(check.measured, check.name), limit_text(check),
                      f"[{style[check.status]}]{check.status}[/]", check.detail)
    console = stream_console(sys.stderr)
    console.print(table)
    if result.passed:
        console.print("[green]gate passed[/]")
        return
    failed = [c.name for c in result.checks if c.status not in ("pass", "skipped")]
    console.print(f"[bold red]gate failed[/]: {len(failed)} of {len(result.checks)} thresholds not met "
                  f"({', '.join(failed)})")
    if result.summary:
        console.print(f"the run's verdict: {result.summary}", markup=False, style="dim")


@app.command(cls=Command)
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
    max_regression: Optional[float] = typer.Option(None, "--max-regression", metavar="F", help=FLAG_HELP["max_regression"]),
    junit: Optional[str] = typer.Option(None, "--junit", metavar="FILE", help="Write JUnit XML, one testcase per threshold."),
    markdown: Optional[str] = typer.Option(None, "--markdown", metavar="FILE", help="Write a Markdown summary."),
    force: bool = typer.Option(False, "--force", help="Compare with a baseline of another program or batch size."),
):
    """Check a run against thresholds: exit 0 when all hold, 1 when any fails, 2 on bad input."""
    from gpuprof.reporting.outputs import check_all
    check_all((junit, "--junit"), (markdown, "--markdown"))
    flags = {"max_data_wait": max_data_wait, "min_samples_per_second": min_samples_per_second,
             "min_gpu_util": min_gpu_util, "max_regression": max_regression}
    baselines = list(baseline or [])
    return run_gate(report, baseline_path=baselines[0] if baselines else None, config=config, flags=flags,
                    junit=junit, markdown=markdown, force=force, round_paths=list(rounds or []),
                    baseline_round_paths=baselines[1:])
