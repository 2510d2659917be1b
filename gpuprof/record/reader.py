"""Read a run directory back: run metadata, sampler columns and every process's events."""

import glob
import json
import os

from gpuprof.record.schema import EVENTS_DIR, GPU_FILE, RUN_FILE, RUN_FORMAT, SYSTEM_FILE


class RecordError(Exception):
    """The folder is not a readable gpuprof run."""


def read_event_file(path: str):
    """Yield the events of one file; a torn last line (the process was killed mid-write) is skipped."""
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                line = line.strip()
                if not line:
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(event, dict):
                    continue
                if "rows" in event:
                    yield from expand_rows(event)
                else:
                    yield event
    except OSError:
        return


def expand_rows(event: dict):
    """The items of a columnar event ({"cols": names, "rows": [[...], ...]}), each shaped as the
    single-item event it stands for; a null value is left out, as the probe left it unmeasured."""
    static = {k: v for k, v in event.items() if k not in ("cols", "rows")}
    names = event.get("cols")
    rows = event.get("rows")
    if not isinstance(names, list) or not isinstance(rows, list):
        return
    for row in rows:
        if not isinstance(row, list):
            continue
        item = dict(static)
        for name, value in zip(names, row):
            if value is not None:
                item[name] = value
        yield item


def read_process_events(run_dir: str):
    """Events grouped by the process that wrote them: a list of lists, one per event file."""
    groups = []
    for path in sorted(glob.glob(os.path.join(run_dir, EVENTS_DIR, "*.jsonl"))):
        events = list(read_event_file(path))
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
    except (OSError, ValueError) as exc:
        raise RecordError(f"{path} cannot be read: {exc}")


def load_run(run_dir: str) -> dict:
    """The whole Run record as plain data, ready for the pure analysis."""
    if not os.path.isdir(run_dir):
        raise RecordError(f"{run_dir} is not a folder")
    meta = _read_json(os.path.join(run_dir, RUN_FILE), required=True)
    if not isinstance(meta, dict) or meta.get("format") != RUN_FORMAT:
        raise RecordError(f"{run_dir} holds a run of format {meta.get('format') if isinstance(meta, dict) else '?'}, "
                          f"this gpuprof reads {RUN_FORMAT}")
    return {
        "meta": meta,
        "system": _read_json(os.path.join(run_dir, SYSTEM_FILE), required=False) or {},
        "gpu": _read_json(os.path.join(run_dir, GPU_FILE), required=False) or {},
        "processes": read_process_events(run_dir),
    }
