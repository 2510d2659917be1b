"""`gpuprof report RUN`: render a saved run again (analysis is repeatable)."""

from typing import Optional

import typer

from gpuprof.cli.app import app
from gpuprof.launch.errors import UsageProblem
from gpuprof.record.reader import RecordError
from gpuprof.reporting.save import build_and_save, show

FORMATS = ("console", "json", "markdown")


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
        from gpuprof.cli.profile import check_writable_file
        check_writable_file(json_path, "--json")
    try:
        data = build_and_save(run_dir, json_path)
    except RecordError as exc:
        raise UsageProblem(str(exc))
    show(data, fmt)
    return 0
