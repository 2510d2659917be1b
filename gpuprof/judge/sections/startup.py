"""The start-up: from the launch of the program to the end of its first training step, and what
filled it (the start-up samples of the probe gpuprof.capture.probes.startup, by part and by the user's
line). The time before torch was imported (the interpreter's start, torch's own import and any
code before it) is not sampled and counts as a part of its own."""

import re

from gpuprof.stats.digits import REPORT_DIGITS
from gpuprof.record import kinds
from gpuprof.record.startup_parts import BEFORE_TORCH

#: The start-up is worth a line of the report from this share of the run's wall time (and at
#: least NOTABLE_FLOOR_S seconds, so that a short run's torch import is no finding), or from
#: NOTABLE_S seconds once it is at least LONG_SHARE of the run (a findings' floor: less is no line).
NOTABLE_SHARE = 0.20
NOTABLE_FLOOR_S = 5.0
NOTABLE_S = 30.0
LONG_SHARE = 0.10


def is_notable(seconds: float, share) -> bool:
    if share is None:
        return False
    return (share >= NOTABLE_SHARE and seconds >= NOTABLE_FLOOR_S) or (share >= LONG_SHARE and seconds >= NOTABLE_S)


def analyse_startup(groups_events: list, meta: dict, stepping_pid=None):
    """The start-up section, or None for a run whose probes sampled no start-up (an older record,
    probes off, attach, a notebook cell, a process that never imported torch)."""
    event = _event_of(groups_events, stepping_pid, meta.get("pid"))
    launched = meta.get("start_monotonic")
    if event is None or launched is None:
        return None
    ended = event.get("t")
    seconds = max(ended - launched, 0.0)
    duration = meta.get("duration_s")
    # A run that never reached a step has no start-up apart from its work: all of it was "start-up",
    # and a share of it would read as a finding about a run that did not train.
    reached = bool(event.get("first_step"))
    share = min(seconds / duration, 1.0) if duration and reached else None
    parts, functions = _tally(event.get("counts") or {})
    before = max((event.get("t0") or launched) - launched, 0.0)
    if before > 0:
        parts[BEFORE_TORCH] = parts.get(BEFORE_TORCH, 0.0) + before
    where = max(functions.items(), key=lambda item: item[1][0], default=None)
    # The parts are shares of one whole: the probe rounds each count it writes, so their sum may
    # pass the span by a rounding; then they are shares of their sum.
    whole = max(seconds, sum(parts.values()))
    return {
        "seconds": round(seconds, 3),
        "share": round(share, REPORT_DIGITS) if share is not None else None,
        "reached_first_step": reached,
        "notable": is_notable(seconds, share),
        "parts": [{"part": part, "seconds": round(value, 3),
                   "share": round(value / whole, REPORT_DIGITS) if whole > 0 else None}
                  for part, value in sorted(parts.items(), key=lambda item: -item[1])],
        "where": _where(where, whole),
        "pid": event.get("pid"),
    }


#: Frames without a name of their own, in words: each runs inside the user's named function.
#: Keyed by a frame's function name, which an older record may lack (None).
ANONYMOUS: dict[str | None, str] = {
    "<genexpr>": "a generator expression", "<lambda>": "a lambda", "<listcomp>": "a list comprehension",
    "<dictcomp>": "a dict comprehension", "<setcomp>": "a set comprehension"}


def _where(found, seconds: float):
    """{"function", "line" as file:line, "part", "seconds", "share"} of the user's function that
    took most of the start-up, or None; with "inside" (`<genexpr>`, `<lambda>`, ...) where its
    busiest line is in a comprehension or a lambda of that function."""
    if found is None:
        return None
    total, part, chain = found[1]
    frames = _frames(chain)
    name, line = _name_and_place(frames[0])
    owner = _name_and_place(_owner(frames))[0]
    out = {"function": owner, "line": line, "part": part,
           "seconds": round(total, 3), "share": round(total / seconds, REPORT_DIGITS) if seconds > 0 else None}
    if name != owner:
        out["inside"] = name
    return out


def where_words(where: dict) -> str:
    """The user's function and line as a user finds them: 'build_dataset at data.py:12',
    'tokenize_corpus (a generator expression at train.py:6)'; a comprehension recorded without its
    function (an older record) is named by what it is."""
    function, line = where.get("function"), where.get("line")
    if where.get("inside") in ANONYMOUS:
        return f"{function} ({ANONYMOUS[where['inside']]} at {line})"
    return f"{ANONYMOUS.get(function, function)} at {line}"


def _frames(chain: str) -> list:
    """'inner (f:6)<owner (f:9)' -> its frames, innermost first (a line of an older record is one
    frame); split on '<' between frames, never inside '<genexpr>'."""
    return [part for part in re.split(r"(?<=\))<", chain) if part] or [chain]


def _owner(frames: list) -> str:
    """The innermost named frame: the function a comprehension or a lambda runs in."""
    return next((frame for frame in frames if _name_and_place(frame)[0] not in ANONYMOUS), frames[0])


def _name_and_place(frame: str) -> tuple:
    """'build (data.py:12)' -> ('build', 'data.py:12')."""
    name, _, place = frame.partition(" (")
    return name, place[:-1] if place.endswith(")") else place


def _event_of(events: list, stepping_pid, root_pid):
    """The start-up event of the process that stepped; else of another that reached its first step;
    else, for a job that never stepped, of its first process. A process that imported torch and
    never stepped while another did (torchrun's agent, a spawning launcher) sampled no start-up of
    the training: its event is no start-up."""
    found = [e for e in events if e.get("k") == kinds.STARTUP_SAMPLES and e.get("t") is not None]
    stepped = [e for e in found if e.get("first_step")]
    mine = [e for e in stepped if stepping_pid is not None and e.get("pid") == stepping_pid]
    if mine or stepped:
        return (mine or stepped)[0]
    root = [e for e in found if root_pid is not None and e.get("pid") == root_pid]
    return (root or found or [None])[0] if stepping_pid is None else None


def _tally(counts: dict) -> tuple:
    """({part: seconds}, {user function: (seconds, its largest part, its line with most time)})
    from the probe's counts, keyed "part|function (file:line)". A function's lines are summed
    (a loop's samples fall on each of its lines) and its busiest line names where it is."""
    parts: dict = {}
    per_line: dict = {}
    for key, value in counts.items():
        part, _, line = key.partition("|")
        parts[part] = parts.get(part, 0.0) + value
        if line:
            per_line[(line, part)] = per_line.get((line, part), 0.0) + value
    functions: dict = {}
    for (line, part), value in per_line.items():
        function = _function_of(line)
        entry = functions.setdefault(function, {"seconds": 0.0, "parts": {}, "lines": {}})
        entry["seconds"] += value
        entry["parts"][part] = entry["parts"].get(part, 0.0) + value
        entry["lines"][line] = entry["lines"].get(line, 0.0) + value
    return parts, {function: (entry["seconds"], _largest(entry["parts"]), _largest(entry["lines"]))
                   for function, entry in functions.items()}


def _function_of(chain: str) -> str:
    """'build (data.py:12)' -> 'build (data.py)': the function, whichever of its lines ran; a
    comprehension's or a lambda's line counts for the named function around it."""
    owner = _owner(_frames(chain))
    head, sep, tail = owner.rpartition(":")
    return f"{head})" if sep and tail.rstrip(")").isdigit() else owner


def _largest(values: dict):
    return max(values.items(), key=lambda item: item[1])[0]


def startup_section(events: list, meta: dict, steps: dict) -> dict:
    """{"startup": the section} for the report, or {} where no start-up was sampled (so a record
    from before the probe reads as it always did)."""
    found = analyse_startup(events, meta, steps.get("pid"))
    return {"startup": found} if found is not None else {}
