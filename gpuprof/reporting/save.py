"""A run folder's report: built from the record, saved beside it (by `run` only), shown in the
asked format. `gpuprof report` never rewrites the saved report.json."""

import os
import sys

from gpuprof.record.reader import load_run
from gpuprof.record.schema import REPORT_FILE


def build(run_dir: str) -> dict:
    from gpuprof.reporting.build import build_report
    return build_report(load_run(run_dir), run_dir=run_dir)


def save_in_run(report: dict, run_dir: str) -> None:
    """report.json in the run folder. Raises OSError."""
    from gpuprof.record.atomic import write_text_atomic
    from gpuprof.render.json_report import json_text
    write_text_atomic(os.path.join(run_dir, REPORT_FILE), json_text(report))


def render(report: dict, fmt: str, terminal: bool = None) -> str:
    """The report as text in one of the formats: console (for a terminal or a log), json, markdown."""
    if fmt == "json":
        from gpuprof.render.json_report import json_text
        return json_text(report)
    if fmt == "markdown":
        from gpuprof.render.markdown import render_markdown
        return render_markdown(report)
    from gpuprof.render.console import console_text
    return console_text(report, terminal=terminal)


def show(report: dict, fmt: str = "console", stream=None) -> None:
    """Write the report to `stream` (stderr by default: `run` keeps stdout for the program)."""
    stream = stream or sys.stderr
    if stream is None:
        return
    terminal = is_terminal(stream)
    stream.write(render(report, fmt, terminal=terminal))
    stream.flush()


def is_terminal(stream) -> bool:
    """Whether `stream` is a terminal (False for a closed, missing or odd stream)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False
