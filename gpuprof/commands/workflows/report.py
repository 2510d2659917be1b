"""`gpuprof report RUN`: analyse one or more saved run folders again and write the report in a
format. The saved report.json is left as `run` wrote it. A report JSON alone (what a CI job kept of
`--json`) is rendered as it is: every format but the trace, which needs the run's time series; the
HTML page then says its plots are missing. A `try` experiment (its folder or try.json) shows its
table again, in console, markdown or json; what report cannot show is named in one line
(gpuprof.commands.workflows.saved_folders)."""

import json
import os
import sys

from gpuprof.errors import UsageProblem
from gpuprof.record.reader import RecordError


def report_runs(run_dirs: list, fmt: str, out_path=None, json_path=None) -> int:
    """Write the report of `run_dirs` as `fmt` to `out_path` (stdout for None or '-'), and as
    JSON to `json_path` when given; returns the exit status. Bad input raises UsageProblem."""
    from gpuprof.present.render import formats
    from gpuprof.present.reporting.outputs import check_all

    if fmt not in formats.names():
        raise UsageProblem(f"unknown --format {fmt!r}: choose one of {', '.join(formats.names())}")
    check_all((json_path, "--json"), (out_path, "--out"))
    from gpuprof.commands.workflows.saved_folders import try_record
    tried = try_record(run_dirs)
    if tried is not None:
        return _write(_try_text(run_dirs[0], tried, fmt, to_stdout=out_path in (None, "-")), out_path,
                      json_path and (json_path, formats.render("try-json", tried)))
    try:
        data, run_dir, record = _build(run_dirs)
        text = _text(run_dir, data, fmt, record)
    except RecordError as exc:
        raise UsageProblem(str(exc))
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        raise UsageProblem(f"{' '.join(run_dirs)}: the saved run is malformed ({exc.__class__.__name__}: {exc})")
    return _write(text, out_path, json_path and (json_path, formats.render("json", data)))


def _write(text: str, out_path, json_file) -> int:
    """`text` to --out (stdout for None or '-'), then the (path, text) of --json; the exit status."""
    from gpuprof.present.reporting.outputs import try_write
    if out_path is not None and out_path != "-":
        if not try_write(out_path, text, "--out"):
            return 2
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    if json_file and not try_write(json_file[0], json_file[1], "--json"):
        return 2
    return 0


#: A `try` record shown by `report` in the report format of the same kind.
TRY_FORMATS = {"console": "try-console", "markdown": "try-markdown", "json": "try-json"}


def _try_text(path: str, record: dict, fmt: str, to_stdout: bool = True) -> str:
    """A `try` experiment's table again, as `try` printed it (console, markdown or json)."""
    from gpuprof.present.render import formats
    from gpuprof.present.reporting.save import is_terminal
    if fmt not in TRY_FORMATS:
        raise UsageProblem(f"{path} is a `gpuprof try` experiment: its results come as {', '.join(TRY_FORMATS)}; "
                           f"--format {fmt} is drawn for one of its runs (`gpuprof report RUN_FOLDER --format {fmt}` "
                           f"with a run folder inside it)")
    try:
        if fmt == "console":
            return formats.render("try-console", record, terminal=to_stdout and is_terminal(sys.stdout))
        return formats.render(TRY_FORMATS[fmt], record)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        raise UsageProblem(f"{path}: the saved try results are malformed ({exc.__class__.__name__}: {exc})")


#: What the pictures get in place of a run record they cannot read: no events, no samples.
NO_RECORD = {"meta": {}, "system": {}, "gpu": {}, "processes": []}


def _build(paths: list):
    """(report, the run folder its pictures come from, that folder's record when read): one run
    folder as it is, several merged into the job's report (pictures then show the node of the rank
    that sets the pace), or a saved report JSON as it is (no folder, no record)."""
    if len(paths) == 1 and os.path.isfile(paths[0]):
        from gpuprof.gate.errors import GateInputError
        from gpuprof.gate.load import load_report
        try:
            return load_report(paths[0]), None, None
        except GateInputError as exc:
            raise UsageProblem(str(exc))
    from gpuprof.record.reader import load_run
    from gpuprof.present.reporting.build import build_report
    from gpuprof.present.reporting.job import build_job_report, run_folders
    folders = run_folders(paths)
    from gpuprof.commands.workflows.saved_folders import check_one_job
    check_one_job(paths, folders)
    if len(folders) == 1:
        record = load_run(folders[0])
        return _with_saved_verification(folders[0], build_report(record, run_dir=folders[0])), folders[0], record
    data = build_job_report(folders)
    rank = (data.get("verdict") or {}).get("rank")
    host = next((row.get("host") for row in data.get("ranks") or [] if row.get("rank") == rank), None)
    folder = next((node["run_dir"] for node in data["nodes"] if node["host"] == host), folders[0])
    return data, folder, None


def _text(run_dir, data: dict, fmt: str, record: dict = None) -> str:
    from gpuprof.present.render import formats
    from gpuprof.present.reporting.pictures import report_text
    from gpuprof.present.reporting.save import is_terminal
    if run_dir is None and formats.reads_record(fmt):
        if fmt == "trace":
            raise UsageProblem("a report JSON holds no time series: --format trace needs the run folder it came "
                               f"from ({data.get('run_dir') or 'its path is not in the report'})")
        note = ("the run folder is not at hand (rendered from the report JSON alone): no plots over time; "
                f"`gpuprof report {data.get('run_dir') or 'RUN_DIR'} --format html` draws them")
        data = dict(data, notes=list(data.get("notes") or []) + [note])
        return formats.render(fmt, data, record=NO_RECORD)
    if formats.reads_record(fmt):
        data = _with_saved_verification(run_dir, data)
    return report_text(run_dir, data, fmt, record, terminal=is_terminal(sys.stdout))


def _with_saved_verification(run_dir: str, data: dict) -> dict:
    """The measurements `run --verify` saved in report.json belong in every format: the report built
    again carries them, and its advice is ranked by them as the saved one was (advice.measured)."""
    try:
        with open(os.path.join(run_dir, "report.json"), "r", encoding="utf-8") as handle:
            saved = json.load(handle)
    except (OSError, ValueError, RecursionError):
        return data
    if isinstance(saved, dict) and isinstance(saved.get("verified"), dict) and "verified" not in data:
        from gpuprof.advise.measured import with_measurements
        rows = [row for row in saved["verified"].get("rows") or [] if isinstance(row, dict)]
        return dict(data, verified=saved["verified"], advice=with_measurements(data.get("advice") or [], rows))
    return data
