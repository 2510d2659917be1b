"""A run folder's report in any format: the formats that read the run record (the trace, the HTML
page) get it, and the measurements `run --verify` left in the folder."""

import json
import os

from gpuprof.record.reader import load_run
from gpuprof.present.render import formats

VERIFY_TRY = os.path.join("verify", "try.json")


def report_text(run_dir: str, report: dict, fmt: str, record: dict = None, terminal: bool = False) -> str:
    """The report of the run in `run_dir` as `fmt` (its record, when already read, is `record`).
    Raises RecordError when a format needs the record and it cannot be read."""
    if not formats.reads_record(fmt):
        return formats.render(fmt, report, terminal=terminal)
    record = record if record is not None else load_run(run_dir)
    return formats.render(fmt, report, record=record, tried=_tried(run_dir))


def _tried(run_dir: str):
    """The `gpuprof try` record `run --verify` left in the folder, if readable."""
    try:
        with open(os.path.join(run_dir, VERIFY_TRY), "r", encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) and str(record.get("format", "")).startswith("gpuprof.try/") else None
