"""`gpuprof report RUN`: analyse a saved run again and write its report to stdout.

The saved report.json is left as `run` wrote it; `--json FILE` writes the new one elsewhere."""

import sys
from typing import Optional

import typer

from gpuprof.cli.app import Command, app
from gpuprof.launch.errors import UsageProblem
from gpuprof.record.reader import RecordError

FORMATS = ("console", "json", "markdown")


@app.command(cls=Command)
def report(
    run_dir: str = typer.Argument(..., metavar="RUN_DIR", help="A run folder written by `gpuprof run`."),
    fmt: str = typer.Option("console", "--format", "-f", metavar="FORMAT",
                            help="console, json or markdown, written to stdout."),
    json_path: Optional[str] = typer.Option(None, "--json", metavar="FILE",
                                            help="Also write the report as JSON to FILE ('-' for stdout)."),
):
    """Analyse a saved run again and write its report to stdout."""
    from gpuprof.reporting.outputs import check_all, try_write
    from gpuprof.reporting.save import build, show

    if fmt not in FORMATS:
        raise UsageProblem(f"unknown --format {fmt!r}: choose one of {', '.join(FORMATS)}")
    check_all((json_path, "--json"))
    try:
        data = build(run_dir)
    except RecordError as exc:
        raise UsageProblem(str(exc))
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        raise UsageProblem(f"{run_dir}: the saved run is malformed ({exc.__class__.__name__}: {exc})")
    show(data, fmt, stream=sys.stdout)
    if json_path is not None and not try_write(json_path, _json(data), "--json"):
        return 2
    return 0


def _json(data) -> str:
    from gpuprof.render.json_report import json_text
    return json_text(data)
