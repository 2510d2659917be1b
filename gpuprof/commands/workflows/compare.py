"""`gpuprof compare A B`: read two saved runs (run folders, report JSONs or `try` folders), compare
them (gpuprof.gate.compare, pure) and write the comparison as console text, Markdown or JSON.
Exit 0 whatever the result, unless `--fail-if-slower` is given and the gate's check fails (1).
Bad input raises UsageProblem (exit 2)."""

import json
import os
import sys

from gpuprof.errors import UsageProblem

FORMATS = ("console", "markdown", "json")
TRY_FILE = "try.json"
TRY_FORMAT_PREFIX = "gpuprof.try/"


def compare_runs(path_a: str, path_b: str, fmt: str = "console", output: str = None, fail_if_slower: float = None,
                 force: bool = False) -> int:
    from gpuprof.gate.compare import Incomparable, compare
    from gpuprof.gate.errors import GateInputError
    from gpuprof.record.reader import RecordError
    from gpuprof.present.reporting.outputs import check_all, try_write

    if fmt not in FORMATS:
        raise UsageProblem(f"unknown --format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if fail_if_slower is not None and not (fail_if_slower >= 0):
        raise UsageProblem(f"--fail-if-slower takes a percentage of 0 or more, not {fail_if_slower}")
    check_all((output, "--output"))
    try:
        result = compare(load_side(path_a), load_side(path_b), fail_if_slower=fail_if_slower, force=force)
    except (Incomparable, GateInputError, RecordError) as exc:
        raise UsageProblem(str(exc))
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        raise UsageProblem(f"{path_a} vs {path_b}: a saved run is malformed ({exc.__class__.__name__}: {exc})")
    text = render(result, fmt, to_terminal=output in (None, "-"))
    if output not in (None, "-"):
        if not try_write(output, text, "--output"):
            return 2
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return 1 if (result.get("gate") or {}).get("failed") else 0


def render(result: dict, fmt: str, to_terminal: bool = True) -> str:
    from gpuprof.record.atomic import _jsonable
    from gpuprof.present.render import compare_text
    if fmt == "json":
        return json.dumps(result, indent=1, default=_jsonable) + "\n"
    if fmt == "markdown":
        return compare_text.markdown(result)
    from gpuprof.present.render.text_width import text_width
    return compare_text.console(result, width=text_width(terminal=to_terminal))


def load_side(path: str) -> dict:
    """One side from a run folder, a report JSON, a try folder (its baseline runs) or its try.json."""
    from gpuprof.gate.compare import side
    if not os.path.exists(path):
        raise UsageProblem(f"no such run folder or report: {path}")
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, TRY_FILE)):
            return try_side(path, os.path.join(path, TRY_FILE))
        if os.path.isfile(os.path.join(path, "run.json")):
            return run_side(path)
        if os.path.isfile(os.path.join(path, "report.json")):
            return side(_report_file(os.path.join(path, "report.json")), path, "report JSON")
        return job_side(path)
    if _json_format(path).startswith(TRY_FORMAT_PREFIX):
        return try_side(os.path.dirname(os.path.abspath(path)), path)
    return side(_report_file(path), path, "report JSON")


def _report_file(path: str) -> dict:
    from gpuprof.gate.errors import GateInputError
    from gpuprof.gate.load import load_report
    try:
        return load_report(path)
    except GateInputError as exc:
        raise UsageProblem(str(exc))


def _json_format(path: str) -> str:
    try:
        with open(path, "r", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return ""
    return data.get("format") or "" if isinstance(data, dict) and isinstance(data.get("format"), str) else ""


def run_side(path: str) -> dict:
    """A run folder analysed again (as `gpuprof report` does), with the changes `try` applied in it."""
    from gpuprof.gate.compare import side
    from gpuprof.record.reader import load_run
    from gpuprof.present.reporting.build import build_report
    record = load_run(path)
    report = build_report(record, run_dir=path)
    if "provenance" not in report:
        # a run recorded before provenance: its python and gpuprof are still in run.json (the
        # report's own gpuprof_version is the gpuprof analysing it now)
        meta = record.get("meta") or {}
        report["provenance"] = {"python": meta.get("python"), "gpuprof_version": meta.get("gpuprof_version")}
    return side(report, path, "run folder", changes=applied_changes(record))


def job_side(path: str) -> dict:
    """A folder of run folders (one per node of a job) read as the job's one report."""
    from gpuprof.gate.compare import side
    from gpuprof.record.reader import RecordError
    from gpuprof.present.reporting.job import build_job_report, run_folders
    try:
        folders = run_folders([path])
    except RecordError:
        raise UsageProblem(f"{path} is not a gpuprof run folder, report or try folder "
                           "(no run.json, report.json or try.json in it)")
    if len(folders) == 1:
        return run_side(folders[0])
    return side(build_job_report(folders), path, f"job of {len(folders)} run folders")


def applied_changes(record: dict):
    """The settings `try`'s probes applied in this run ({key: value}), or None for a plain run."""
    from gpuprof.judge.sections.processes import events_of_kind
    from gpuprof.record import kinds
    applied = {}
    for event in events_of_kind(record.get("processes") or [], kinds.VARIANT):
        if isinstance(event.get("applied"), dict) and not event.get("error"):
            applied.update(event["applied"])
    return applied or None


def try_side(folder: str, try_file: str) -> dict:
    """A try folder stands for its baseline: the first baseline run as the report, the other rounds
    as more runs of it, and the variants tried there as what the folder tried."""
    from gpuprof.gate.compare import side
    from gpuprof.record.reader import RecordError
    try:
        with open(try_file, "r", encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UsageProblem(f"cannot read {try_file}: {exc}")
    if not isinstance(record, dict) or not str(record.get("format", "")).startswith(TRY_FORMAT_PREFIX):
        raise UsageProblem(f"{try_file} is not a gpuprof try record (no \"format\": \"gpuprof.try/N\")")
    rows = [row for row in record.get("rows") or [] if isinstance(row, dict)]
    baseline = next((row for row in rows if row.get("label") == "baseline"), None)
    folders = [_local(folder, run_dir) for run_dir in (baseline or {}).get("run_dirs") or []]
    reports = []
    for run_dir in folders:
        if run_dir is None:
            continue
        try:
            reports.append(run_side(run_dir)["report"])
        except RecordError:
            continue
    if not reports:
        raise UsageProblem(f"{folder}: the try folder holds no readable baseline run")
    tried = [{"label": row.get("label"), "speedup": row.get("speedup"), "conclusion": row.get("conclusion")}
             for row in rows if row is not baseline]
    source = f"try folder: its baseline, {len(reports)} run{'s' if len(reports) > 1 else ''}"
    return side(reports[0], folder, source, rounds=reports[1:], tried=tried)


def _local(folder: str, run_dir) -> str:
    """A baseline run's folder: where try.json says, or the folder of that name beside try.json
    when the try folder was moved (a CI artifact)."""
    if not isinstance(run_dir, str):
        return None
    beside = os.path.join(folder, os.path.basename(run_dir.rstrip("/")))
    if os.path.isdir(beside):
        return beside
    return run_dir if os.path.isdir(run_dir) else None
