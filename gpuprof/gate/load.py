"""Read a report for the gate: a report JSON file or a run folder, checked for format and version."""

import json
import os

from gpuprof.gate.errors import GateInputError
from gpuprof.record.schema import REPORT_FILE, REPORT_FORMAT_PREFIX, SUPPORTED_REPORT_VERSIONS


def load_report(path: str) -> dict:
    target = os.path.join(path, REPORT_FILE) if os.path.isdir(path) else path
    if not os.path.exists(target):
        if os.path.isdir(path):
            raise GateInputError(f"{path} has no {REPORT_FILE}: not a gpuprof run folder")
        raise GateInputError(f"no such report: {path}")
    try:
        with open(target, "r", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, UnicodeDecodeError) as exc:
        raise GateInputError(f"cannot read {target}: {getattr(exc, 'strerror', None) or exc}")
    except (ValueError, RecursionError) as exc:
        raise GateInputError(f"{target} is not valid JSON (corrupt report?): {str(exc)[:200]}")
    fmt = data.get("format") if isinstance(data, dict) else None
    if not isinstance(fmt, str) or not fmt.startswith(REPORT_FORMAT_PREFIX):
        raise GateInputError(f"{target} is not a gpuprof report (no \"format\": \"gpuprof.report/N\")")
    version = fmt[len(REPORT_FORMAT_PREFIX):]
    if not version.isdigit() or int(version) not in SUPPORTED_REPORT_VERSIONS:
        raise GateInputError(f"{target} has report format {fmt}; this gpuprof understands "
                             + ", ".join(f"{REPORT_FORMAT_PREFIX}{v}" for v in SUPPORTED_REPORT_VERSIONS))
    return data
