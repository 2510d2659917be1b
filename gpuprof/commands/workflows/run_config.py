"""Run defaults from `[tool.gpuprof.run]` in the nearest pyproject.toml (from the cwd upward), as
coverage reads `[tool.coverage.run]`. Command-line flags win over the file; the file wins over
gpuprof's own defaults."""

import os

from gpuprof.errors import UsageProblem
from gpuprof.project_file import find_pyproject, read_toml, tool_table

KEYS = {"out": str, "interval": float, "probes": bool, "gpu": bool, "live": bool, "quiet": bool, "python": str,
        "peak_tflops": float, "price_per_gpu_hour": float}
BUILT_IN = {"out": None, "interval": 0.1, "probes": True, "gpu": True, "live": None, "quiet": False, "python": None,
            "peak_tflops": None, "price_per_gpu_hour": None}


def file_defaults(cwd: str = ".") -> dict:
    """The checked `[tool.gpuprof.run]` table (paths made absolute from the file's folder)."""
    path = find_pyproject(cwd)
    if path is None:
        return {}
    table = tool_table(read_toml(path, UsageProblem), "run", path, UsageProblem)
    out = {}
    for key, value in table.items():
        kind = KEYS.get(key)
        if kind is None:
            raise UsageProblem(f"{path}: unknown [tool.gpuprof.run] key {key} (known: {', '.join(KEYS)})")
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind):
            raise UsageProblem(f"{path}: [tool.gpuprof.run] {key} must be a {kind.__name__}, not {value!r}")
        if key in ("out", "python") and os.sep in value and not os.path.isabs(value):
            value = os.path.join(os.path.dirname(path), value)
        out[key] = value
    return out


def settle(given: dict, cwd: str = ".") -> dict:
    """The run's settings: what the command line gave (None: not given), else the file, else built-in."""
    from_file = file_defaults(cwd) if any(given.get(key) is None for key in KEYS) else {}
    return {key: given[key] if given.get(key) is not None else from_file.get(key, BUILT_IN[key]) for key in KEYS}
