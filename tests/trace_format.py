"""The trace-event format's rules a viewer relies on, checked on a parsed trace (a test helper).

Rules from the Trace Event Format document (the JSON object form that Perfetto and
chrome://tracing load): every event has a phase, a pid and a tid; complete events ("X") have a
time stamp and a non-negative duration in microseconds; counters ("C") carry numeric args;
metadata ("M") names processes and threads. On top, what makes a timeline readable: slices on
one track are in time order and never overlap, counters per track are in time order, and every
process and thread that has events is named."""

import math

PHASES = {"X", "C", "M", "i", "I", "B", "E"}


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def problems(trace) -> list:
    """Every rule the trace breaks, in words (an empty list for a valid trace)."""
    out = []
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return ["not an object with a traceEvents list"]
    named_processes, named_threads = set(), set()
    slices, counters = {}, {}
    for i, event in enumerate(trace["traceEvents"]):
        where = f"event {i}"
        if not isinstance(event, dict):
            out.append(f"{where}: not an object")
            continue
        phase = event.get("ph")
        if phase not in PHASES:
            out.append(f"{where}: unknown phase {phase!r}")
            continue
        if not isinstance(event.get("pid"), int) or not isinstance(event.get("tid"), int):
            out.append(f"{where}: pid and tid must be integers")
            continue
        if not isinstance(event.get("name"), str) or not event["name"]:
            out.append(f"{where}: no name")
        if phase == "M":
            if not isinstance(event.get("args"), dict):
                out.append(f"{where}: metadata without args")
            elif event["name"] == "process_name":
                named_processes.add(event["pid"])
            elif event["name"] == "thread_name":
                named_threads.add((event["pid"], event["tid"]))
            continue
        if not _number(event.get("ts")):
            out.append(f"{where}: no numeric ts")
            continue
        if phase == "X":
            if not _number(event.get("dur")) or event["dur"] < 0:
                out.append(f"{where}: a complete event needs dur >= 0")
                continue
            slices.setdefault((event["pid"], event["tid"]), []).append((event["ts"], event["dur"], i))
        elif phase == "C":
            args = event.get("args")
            if not isinstance(args, dict) or not args or not all(_number(v) for v in args.values()):
                out.append(f"{where}: a counter needs numeric args")
            counters.setdefault((event["pid"], event["name"]), []).append(event["ts"])
    for (pid, tid), items in slices.items():
        if pid not in named_processes:
            out.append(f"process {pid} has slices but no process_name")
        if (pid, tid) not in named_threads:
            out.append(f"thread {pid}/{tid} has slices but no thread_name")
        for (ts, dur, i), (next_ts, _, j) in zip(items, items[1:]):
            if next_ts < ts:
                out.append(f"track {pid}/{tid}: event {j} starts before event {i}")
            elif next_ts < ts + dur - 0.5:          # time stamps are rounded to 0.1 us
                out.append(f"track {pid}/{tid}: event {j} overlaps event {i}")
    for (pid, name), times in counters.items():
        if pid not in named_processes:
            out.append(f"process {pid} has counters but no process_name")
        if any(b < a for a, b in zip(times, times[1:])):
            out.append(f"counter {name!r} of process {pid} goes back in time")
    return out


def process_names(trace) -> dict:
    return {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "process_name"}


def thread_names(trace) -> dict:
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


def slices_on(trace, pid, thread_name) -> list:
    tids = [tid for (p, tid), name in thread_names(trace).items() if p == pid and name == thread_name]
    return [e for e in trace["traceEvents"] if e.get("ph") == "X" and e["pid"] == pid and e["tid"] in tids]


def counter_names(trace) -> set:
    return {e["name"] for e in trace["traceEvents"] if e.get("ph") == "C"}
