"""`gpuprof gate`: pass or fail a saved run against thresholds and a baseline, with JUnit XML and
Markdown for CI, and a table on stderr. The decisions themselves are pure (gpuprof.gate)."""

import os

from gpuprof.errors import UsageProblem


#: The exit status of a gate whose run (or baseline) was measured on a machine other processes kept
#: busy and that no threshold failed on the job's own numbers: neither a pass nor a failure.
DISTURBED_EXIT = 3


def run_gate(report_path: str, report: dict = None, baseline_path=None, config=None, flags=None,
             junit=None, markdown=None, force=False, cwd=".", round_paths=(), baseline_round_paths=()) -> int:
    """Load, decide, write the outputs, show the table; returns 0 (pass), 1 (fail) or 3 (measured on a
    busy machine, nothing failed on the job's own numbers).
    Bad input raises UsageProblem (exit 2)."""
    from gpuprof.gate import config as gate_config
    from gpuprof.gate.decide import decide
    from gpuprof.gate.errors import GateInputError
    from gpuprof.gate.load import load_report
    from gpuprof.present.render.gate_text import junit_xml, markdown as markdown_text
    from gpuprof.present.reporting.outputs import try_write

    try:
        file_values, source = gate_config.load(config, cwd)
        thresholds = gate_config.merge(file_values, flags or {})
        baseline_path = baseline_path or thresholds.pop("baseline", None)
        thresholds.pop("baseline", None)
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
    return 0 if result.passed else (DISTURBED_EXIT if result.undecided else 1)


def show_table(result, source) -> None:
    import sys

    from rich.table import Table

    from gpuprof.present.render.gate_text import fmt, limit_text
    from gpuprof.present.render.console import stream_console

    style = {"pass": "green", "fail": "bold red", "missing": "bold red", "skipped": "yellow", "disturbed": "yellow"}
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
    if result.undecided:
        console.print(f"[yellow]gate not decided[/]: {result.disturbed}", highlight=False)
        return
    failed = [c.name for c in result.checks if c.status not in ("pass", "skipped")]
    console.print(f"[bold red]gate failed[/]: {len(failed)} of {len(result.checks)} thresholds not met "
                  f"({', '.join(failed)})")
    if result.summary:
        console.print(f"the run's verdict: {result.summary}", markup=False, style="dim")
