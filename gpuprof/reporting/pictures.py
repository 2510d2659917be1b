"""A run folder's pictures: the Perfetto / Chrome trace and the self-contained HTML report, built
from the record and its report (and the measurements of `run --verify` when the folder has them)."""

import json
import os

from gpuprof.record.reader import load_run

PICTURES = ("trace", "html")
VERIFY_TRY = os.path.join("verify", "try.json")


def picture_text(run_dir: str, report: dict, fmt: str, record: dict = None) -> str:
    """The trace (JSON) or the HTML page of the run in `run_dir` (its record, when already read).
    Raises RecordError."""
    record = record if record is not None else load_run(run_dir)
    if fmt == "trace":
        from gpuprof.render.trace import trace_text
        return trace_text(record, report)
    from gpuprof.render.html import render_html
    return render_html(record, report, tried=_tried(run_dir))


def _tried(run_dir: str):
    """The `gpuprof try` record `run --verify` left in the folder, if readable."""
    try:
        with open(os.path.join(run_dir, VERIFY_TRY), "r", encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) and str(record.get("format", "")).startswith("gpuprof.try/") else None
