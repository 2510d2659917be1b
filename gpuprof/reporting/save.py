"""A run folder's report: built from the record, written beside it, shown in the asked format."""

import os
from typing import Optional

from gpuprof.record.reader import load_run
from gpuprof.record.schema import REPORT_FILE


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
