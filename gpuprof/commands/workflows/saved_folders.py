"""What a path given to `gpuprof report` holds, among everything gpuprof writes: a run folder (of
`run`, `attach` or a notebook cell), a folder of one job's run folders (one per node), a report
JSON, a `try` experiment (its folder or its try.json), or something `report` cannot show, named in
one line with the command that reads it. Reads only the small claim files, never a whole run."""

import json
import os

from gpuprof.errors import UsageProblem
from gpuprof.record.schema import RUN_FILE

TRY_PREFIX = "gpuprof.try/"
TRY_FORMATS = ("gpuprof.try/1",)


def _read(path: str):
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError, RecursionError):
        return None


def _format_of(data) -> str:
    return str(data.get("format") or "") if isinstance(data, dict) else ""


def try_record(paths: list):
    """The `try` record that `paths` names (a try folder or its try.json), or None when the paths
    hold something else. Raises UsageProblem for a try that cannot be shown."""
    if len(paths) != 1:
        return None
    path = paths[0]
    if os.path.isfile(path):
        data = _read(path)
        return _checked_try(path, data) if _format_of(data).startswith(TRY_PREFIX) else None
    claim = _read(os.path.join(path, RUN_FILE))
    if not _format_of(claim).startswith(TRY_PREFIX):
        _refuse_unfinished_try(path, claim)
        return None
    results = os.path.join(path, str(claim.get("results") or "try.json"))
    data = _read(results)
    if data is None:
        raise UsageProblem(f"{path} is a `gpuprof try` experiment whose results ({results}) cannot be read; "
                           f"each run in it is a run folder that `gpuprof report` reads ({_one_run(path)})")
    return _checked_try(path, data)


def _checked_try(path: str, data: dict) -> dict:
    if _format_of(data) not in TRY_FORMATS:
        raise UsageProblem(f"{path} holds `gpuprof try` results of format {_format_of(data)}, this gpuprof reads "
                           f"{', '.join(TRY_FORMATS)}")
    return data


def _runs_inside(path: str) -> list:
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    return [name for name in names if os.path.isfile(os.path.join(path, name, RUN_FILE))]


def _one_run(path: str) -> str:
    inside = _runs_inside(path)
    return f"`gpuprof report {os.path.join(path, inside[0])}`" if inside else "none was kept"


def _refuse_unfinished_try(path: str, claim) -> None:
    """A folder whose claim file says a run is under way, holding run folders of its own, is a
    `try` that has not finished (or was killed): it has no table to show yet."""
    if not isinstance(claim, dict) or claim.get("status") != "running":
        return
    inside = _runs_inside(path)
    if inside:
        raise UsageProblem(f"{path} is a `gpuprof try` experiment that has not finished (no results yet; a "
                           f"finished try shows its table with `gpuprof report`); its runs are run folders: "
                           f"`gpuprof report {os.path.join(path, inside[0])}` reads the first")


def check_one_job(paths: list, folders: list) -> None:
    """Several run folders found inside one folder are merged only as one job's nodes (one run
    folder per host); a folder of separate runs (the runs folder, `doctor --keep`'s) is named as
    such rather than merged into a job that never was."""
    if len(paths) != 1 or len(folders) < 2:
        return
    hosts = [(_read(os.path.join(folder, RUN_FILE)) or {}).get("host") for folder in folders]
    known = [host for host in hosts if host]
    if len(set(known)) < len(known):
        raise UsageProblem(f"{paths[0]} holds {len(folders)} separate run folders, not one job's nodes (one per "
                           f"host): give one of them, as in `gpuprof report {folders[0]}`")
