"""Gate thresholds from `[tool.gpuprof.gate]`: in the TOML given with --config, or else in the
nearest pyproject.toml from the cwd upward. Command-line flags override the file."""

import os

from gpuprof.gate.errors import GateInputError
from gpuprof.project_file import find_pyproject, read_toml, tool_table

#: The gate's thresholds, the one list of them: each is a key of [tool.gpuprof.gate] and, spelled as
#: flag_of(name), a flag of `gpuprof gate`.
THRESHOLDS = ("max_data_wait", "min_samples_per_second", "min_gpu_util", "min_mfu", "max_regression",
              "max_p90_step")

KEYS = {
    **{name: float for name in THRESHOLDS},
    "baseline": str,
    "judge_busy_machine": bool,
}


def flag_of(key: str) -> str:
    """The command-line flag of a config key: max_data_wait is --max-data-wait."""
    return "--" + key.replace("_", "-")


def gate_table(data: dict, path: str, explicit: bool) -> dict:
    """`[tool.gpuprof.gate]`; in a file given with --config, a top-level `[gate]` table too."""
    return tool_table(data, "gate", path, GateInputError, top_level=explicit)


def validate(table: dict, path: str) -> dict:
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise GateInputError(f"{path}: unknown gate key{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(unknown)} (known: {', '.join(KEYS)})")
    out = {}
    for key, value in table.items():
        kind = KEYS[key]
        if kind is bool:
            if not isinstance(value, bool):
                raise GateInputError(f"{path}: {key} must be true or false, not {value!r}")
        elif kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise GateInputError(f"{path}: {key} must be a number, not {value!r}")
            value = check_range(key, float(value), f"{path}: ")
        elif not isinstance(value, str):
            raise GateInputError(f"{path}: {key} must be a string")
        elif key == "baseline" and not os.path.isabs(value):
            value = os.path.join(os.path.dirname(os.path.abspath(path)), value)
        out[key] = value
    return out


def load(config_path=None, cwd: str = ".") -> tuple:
    """(thresholds, the file they came from or None)."""
    if config_path is not None:
        return validate(gate_table(read_toml(config_path, GateInputError), config_path, True), config_path), config_path
    pyproject = find_pyproject(cwd)
    if pyproject is None:
        return {}, None
    return validate(gate_table(read_toml(pyproject, GateInputError), pyproject, False), pyproject), pyproject


SHARES = ("max_data_wait", "min_gpu_util", "min_mfu")


def check_range(key: str, value: float, where: str = "", name: str = None) -> float:
    """Shares are fractions (0.2 for 20%): a value above 1 would always pass, so it is refused."""
    name = name or key
    if value != value or value < 0:
        raise GateInputError(f"{where}{name} must not be negative, not {value:g}")
    if key in SHARES and value > 1:
        raise GateInputError(f"{where}{name} is a share between 0 and 1 ({value / 100:g} for {value:g}%), not {value:g}")
    return value


def merge(file_values: dict, flags: dict) -> dict:
    """Flags given on the command line win over the file; both are held to the same ranges, and
    together they must set at least one threshold."""
    merged = dict(file_values)
    for key, value in flags.items():
        if isinstance(value, bool):
            if value:
                merged[key] = True         # a switch given on the command line; absent, the file decides
        elif value is not None:
            merged[key] = check_range(key, float(value), name=flag_of(key))
    require_thresholds(merged)
    return merged


def require_thresholds(settings: dict) -> None:
    """A gate with nothing to check is bad input; the message names every threshold flag."""
    if any(name in settings for name in THRESHOLDS):
        return
    flags = [flag_of(name) for name in THRESHOLDS]
    raise GateInputError(f"no thresholds: give {', '.join(flags[:-1])} or {flags[-1]}, "
                         "or set them in [tool.gpuprof.gate]")
