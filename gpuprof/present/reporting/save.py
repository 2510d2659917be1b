"""A run folder's report: built from the record, saved beside it (by `run` only), shown in the
asked format. `gpuprof report` never rewrites the saved report.json."""

import os
import sys

from gpuprof.record.reader import load_run
from gpuprof.record.schema import REPORT_FILE


def build(run_dir: str) -> dict:
    from gpuprof.present.reporting.build import build_report
    return build_report(load_run(run_dir), run_dir=run_dir)


def save_in_run(report: dict, run_dir: str) -> None:
    """report.json in the run folder. Raises OSError."""
    from gpuprof.record.atomic import write_text_atomic
    from gpuprof.present.render import formats
    write_text_atomic(os.path.join(run_dir, REPORT_FILE), formats.render("json", report))


def show(report: dict, fmt: str = "console", stream=None) -> None:
    """Write the report to `stream` (stderr by default: `run` keeps stdout for the program)."""
    from gpuprof.present.render import formats
    stream = stream or sys.stderr
    if stream is None:
        return
    stream.write(formats.render(fmt, report, terminal=is_terminal(stream)))
    stream.flush()


def is_terminal(stream) -> bool:
    """Whether `stream` is a terminal (False for a closed, missing or odd stream)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False
