"""The report as JSON (the versioned format documented in docs/report-format.md)."""

from gpuprof.record.atomic import write_json_atomic


def write_json(report: dict, path: str) -> None:
    write_json_atomic(path, report)
