"""Read a run directory back: run metadata, sampler columns and every process's events."""

import glob
import json
import os

from gpuprof.record.bounded import STREAM_KINDS, BoundedEvents
from gpuprof.record.packed import PACKED, rows_of
from gpuprof.record.schema import EVENTS_DIR, GPU_FILE, RUN_FILE, RUN_FORMAT, STACKS_FILE, SYSTEM_FILE


class RecordError(Exception):
    """The folder is not a readable gpuprof run."""


NUMERIC = {"t", "t0", "n", "w", "wall", "cpu", "sys", "rq", "rb", "rc", "pc", "co", "cc", "f", "fc", "fw", "b", "start_s", "pid", "ppid",
           "wall_max", "cpu_max", "steps", "total"}


class MalformedRecord(RecordError):
    """An event file holds something gpuprof never writes."""


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and value not in (float("inf"), float("-inf"))


def _check(event, path: str, line_no: int) -> None:
    def bad(why):
        raise MalformedRecord(f"{path}:{line_no}: malformed event ({why})")

    if not isinstance(event, dict):
        bad("not an object")
    if not isinstance(event.get("k"), str):
        bad("no kind \"k\"")
    if "rows" in event or "cols" in event:
        names = event.get("cols")
        if not isinstance(names, list) or not names or names[0] != "t" or not all(isinstance(n, str) for n in names):
            bad("columns and rows do not match")
        try:
            rows = rows_of(event)
        except ValueError:
            bad("packed rows that do not unpack")
        if not isinstance(rows, list) or ("rows" not in event and PACKED not in event):
            bad("columns and rows do not match")
        for row in rows:
            if not isinstance(row, list) or len(row) != len(names) or not _number(row[0]):
                bad("a row without a time")
            if not all(v is None or _number(v) for v in row[1:]):
                bad("a value that is not a number")
        return
    if ("t" in event or event["k"] in STREAM_KINDS) and not _number(event.get("t")):
        bad("no time \"t\"")
    for name, value in event.items():
        if (name in NUMERIC or name.endswith("_max")) and value is not None and not _number(value):
            bad(f"{name} is not a number")


def read_event_file(path: str):
    """Yield the events of one file, checked. A torn last line (the process was killed mid-write)
    is skipped; anything else gpuprof would never write raises MalformedRecord."""
    try:
        handle = open(path, "r", encoding="utf-8", errors="replace")
    except OSError:
        return
    with handle:
        pending = None           # (line number, text) of a line that did not parse: fine only if last
        for line_no, line in enumerate(handle, 1):
            line = line.strip()
            if not line:
                continue
            if pending is not None:
                raise MalformedRecord(f"{path}:{pending}: malformed event (not JSON)")
            try:
                event = json.loads(line)
            except (ValueError, RecursionError):
                pending = line_no
                continue
            _check(event, path, line_no)
            if "cols" in event:
                yield from expand_rows(event)
            else:
                yield event


def expand_rows(event: dict):
    """The items of a columnar event ({"cols": names, "rows": [[...], ...]}), each shaped as the
    single-item event it stands for; a null value is left out, as the probe left it unmeasured."""
    static = {k: v for k, v in event.items() if k not in ("cols", "rows", PACKED)}
    names = event.get("cols")
    for row in rows_of(event):
        item = dict(static)
        for name, value in zip(names, row):
            if value is not None:
                item[name] = value
        yield item


def read_process_events(run_dir: str):
    """Events grouped by the process that wrote them: a list of lists, one per event file, each
    read in bounded memory (gpuprof.record.bounded) whatever the file's size."""
    groups = []
    for path in sorted(glob.glob(os.path.join(run_dir, EVENTS_DIR, "*.jsonl"))):
        bounded = BoundedEvents()
        for event in read_event_file(path):
            bounded.add(event)
        events = bounded.events()
        if events:
            groups.append(events)
    return groups


def _read_json(path: str, required: bool):
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        if required:
            raise RecordError(f"{path} is missing: not a gpuprof run folder")
        return None
    except (OSError, ValueError, RecursionError) as exc:
        raise RecordError(f"{path} cannot be read: {exc.__class__.__name__}: {str(exc)[:200]}")


def load_run(run_dir: str) -> dict:
    """The whole Run record as plain data, ready for the pure analysis."""
    if not os.path.isdir(run_dir):
        raise RecordError(f"{run_dir} is not a folder")
    meta = _read_json(os.path.join(run_dir, RUN_FILE), required=True)
    if not isinstance(meta, dict) or meta.get("format") != RUN_FORMAT:
        raise RecordError(f"{run_dir} holds a run of format {meta.get('format') if isinstance(meta, dict) else '?'}, "
                          f"this gpuprof reads {RUN_FORMAT}")
    for name in ("exit_code", "duration_s", "start_monotonic", "end_monotonic"):
        if meta.get(name) is not None and not _number(meta.get(name)):
            raise MalformedRecord(f"{run_dir}/{RUN_FILE}: malformed run record ({name} is not a number)")
    return {
        "meta": meta,
        "system": _read_json(os.path.join(run_dir, SYSTEM_FILE), required=False) or {},
        "gpu": _read_json(os.path.join(run_dir, GPU_FILE), required=False) or {},
        "processes": read_process_events(run_dir),
        "stacks": _read_json(os.path.join(run_dir, STACKS_FILE), required=False) or {},
    }
