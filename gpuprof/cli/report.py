"""`gpuprof report RUN`: render a saved run again (analysis is repeatable)."""

import os
from typing import Optional

import typer

from gpuprof.cli import app
from gpuprof.launch.errors import UsageProblem
from gpuprof.record.reader import RecordError, load_run
from gpuprof.record.schema import REPORT_FILE

FORMATS = ("console", "json", "markdown")


def build_and_save(run_dir: str, json_path: Optional[str] = None) -> dict:
    from gpuprof.render.json_report import write_json
    from gpuprof.reporting.build import build_report

    report = build_report(load_run(run_dir), run_dir=run_dir)
    write_json(report, os.path.join(run_dir, REPORT_FILE))
    if json_path:
        write_json(report, json_path)
    return report


def show(report: dict, fmt: str = "console") -> None:
    if fmt == "json":
        import json
        import sys
        sys.stdout.write(json.dumps(report, indent=1) + "\n")
    elif fmt == "markdown":
        import sys
        from gpuprof.render.markdown import render_markdown
        sys.stdout.write(render_markdown(report))
    else:
        from gpuprof.render.console import render_console
        render_console(report)


@app.command()
def report(
    run_dir: str = typer.Argument(..., metavar="RUN_DIR", help="A run folder written by `gpuprof run`."),
    fmt: str = typer.Option("console", "--format", "-f", help="console (stderr), json or markdown (stdout)."),
    json_path: Optional[str] = typer.Option(None, "--json", metavar="FILE", help="Also write the report as JSON."),
):
    """Analyse a saved run again and show its report."""
    if fmt not in FORMATS:
        raise UsageProblem(f"unknown --format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if json_path is not None:
        from gpuprof.cli.run import check_writable_file
        check_writable_file(json_path, "--json")
    try:
        data = build_and_save(run_dir, json_path)
    except RecordError as exc:
        raise UsageProblem(str(exc))
    show(data, fmt)
    return 0
