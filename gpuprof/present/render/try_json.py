"""The `gpuprof try` record as JSON (gpuprof.try/1, documented in docs/try.md)."""

import json


def render(record: dict, options) -> str:
    return json.dumps(record, indent=2, default=str) + "\n"
