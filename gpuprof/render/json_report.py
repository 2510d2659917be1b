"""The report as JSON (the versioned format documented in docs/report-format.md)."""

import json

from gpuprof.record.atomic import _jsonable


def json_text(report: dict) -> str:
    return json.dumps(report, indent=1, default=_jsonable) + "\n"


def render(report: dict, options) -> str:
    return json_text(report)
