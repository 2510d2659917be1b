"""The one reader of gpuprof's settings files: the nearest pyproject.toml from a folder upward (as
coverage.py finds its own), or a TOML file given with --config, and a `[tool.gpuprof.NAME]` table
in it. Each command checks its own table's keys; a file that cannot be read, or is not TOML, is
refused with a one-line error of the caller's kind."""

import os

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def find_pyproject(start: str):
    """The nearest pyproject.toml in `start` or a folder above it, else None."""
    folder = os.path.abspath(start)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def read_toml(path: str, error=ValueError) -> dict:
    """The file's TOML; `error(message)` is raised where it is missing, unreadable or not TOML."""
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise error(f"config file not found: {path}")
    except OSError as exc:
        raise error(f"cannot read config {path}: {exc.strerror or exc}")
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path} is not valid TOML: {exc}")


def tool_table(data: dict, name: str, path: str, error=ValueError, top_level: bool = False) -> dict:
    """`[tool.gpuprof.NAME]` ({} where absent); with `top_level`, a `[NAME]` table at the top too
    (a file given with --config holds gpuprof's settings only)."""
    table = data.get("tool", {}).get("gpuprof", {}).get(name)
    if table is None and top_level:
        table = data.get(name)
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise error(f"{path}: [tool.gpuprof.{name}] must be a table")
    return table
