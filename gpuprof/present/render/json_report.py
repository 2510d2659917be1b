"""The report as JSON (the versioned format documented in docs/report-format.md)."""

import json

from gpuprof.record.atomic import _jsonable
from gpuprof.record.report_format import Report


def json_text(report: Report) -> str:
    return json.dumps(report, indent=1, default=_jsonable) + "\n"


def render(report: Report, options) -> str:
    return json_text(report)
