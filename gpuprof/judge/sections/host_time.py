"""Where the training thread spent the measured steps, from the step probe's stack samples: forward,
backward, optimizer, the DataLoader, and host code by the user's function. Batch construction that
sits inside a step (between forward and backward, say) shows here as time in a data-making function,
although no wait measures it."""

import re

from gpuprof.stats.digits import REPORT_DIGITS

#: A user function whose name says it makes data.
DATA_FUNCTION = re.compile(r"batch|data|load|sampl|fetch|read|augment|transform|collate|prepar|densif|shuffle|"
                           r"token|decode", re.IGNORECASE)
MIN_SAMPLES = 50
HOST_FUNCTIONS_KEPT = 8     # host functions listed by share
DATA_FUNCTIONS_KEPT = 4     # ... of which data-making ones
SAMPLED_MARGIN = 0.02       # the sampled data share replaces the measured wait only when larger by this
#: Frames without a name of their own (Python 3.11 runs comprehensions in frames of their own).
ANONYMOUS = re.compile(r"^<(listcomp|dictcomp|setcomp|genexpr|lambda)>")


def owner(chain: str) -> tuple:
    """(the function a host sample counts for, whether it makes data), from the sampled chain of
    user frames ('inner (f:l)<caller (f:l)<...'; one frame in records of older gpuprof versions).
    A data-making function owns what it calls: comprehensions, lambdas and helpers; otherwise the
    innermost named function is the owner."""
    frames = _frames(chain or "?") or ["?"]
    for frame in frames:
        name = frame.split(" (", 1)[0]
        if not ANONYMOUS.match(name) and DATA_FUNCTION.search(name):
            return frame, True
    named = next((f for f in frames if not ANONYMOUS.match(f.split(" (", 1)[0])), frames[0])
    return named, False


def _frames(chain: str) -> list:
    """The frames of a chain: split on '<' between frames, not inside '<listcomp>'."""
    return [part for part in re.split(r"(?<=\))<", chain) if part]


def analyse_samples(events, start=None, end=None) -> dict:
    """Shares of the sampled time in [start, end] (each event covers the second before it; its
    counts are the time each place stood for, or plain sample counts)."""
    counts: dict = {}
    taken: float = 0
    for event in events:
        t = event.get("t")
        if start is not None and end is not None and t is not None and not (start < t <= end + 1.0):
            continue
        weights = event.get("counts") or {}
        taken += event.get("n") if isinstance(event.get("n"), int) else sum(
            n for n in weights.values() if isinstance(n, (int, float)))
        for key, n in weights.items():
            if isinstance(n, (int, float)):
                counts[key] = counts.get(key, 0) + n
    total = sum(counts.values())
    if not total:
        return {"samples": 0}
    kinds: dict = {}
    functions: dict = {}
    states: dict = {}       # thread state while in data-making functions: R running, D disk, S sleeping
    makes_data = set()
    for key, n in counts.items():
        place, _, state = key.rpartition("|") if "|" in key else (key, "", "")
        kind, _, chain = place.partition(":")
        kinds[kind] = kinds.get(kind, 0) + n
        if kind == "host":
            function, is_data = owner(chain or "?")
            functions[function] = functions.get(function, 0) + n
            if is_data:
                makes_data.add(function)
                states[state or "?"] = states.get(state or "?", 0) + n
    ranked = sorted(functions.items(), key=lambda item: -item[1])
    data = [(name, n) for name, n in ranked if name in makes_data]
    in_data = sum(states.values())
    return {
        "samples": taken,
        "shares": {kind: round(n / total, REPORT_DIGITS) for kind, n in sorted(kinds.items())},
        "host_functions": [{"function": name, "share": round(n / total, REPORT_DIGITS)}
                           for name, n in ranked[:HOST_FUNCTIONS_KEPT]],
        "data_functions": [{"function": name, "share": round(n / total, REPORT_DIGITS)}
                           for name, n in data[:DATA_FUNCTIONS_KEPT]],
        "data_share": round(sum(n for _, n in data) / total, REPORT_DIGITS),
        # While making data: running on a CPU, waiting for the disk, or asleep (a lock, a socket).
        "data_states": {name: round(states.get(code, 0) / in_data, 3)
                        for code, name in (("R", "running"), ("D", "disk"), ("S", "sleeping"))} if in_data else None,
    }


def use_sampled_batching(steps: dict) -> None:
    """Batch construction inside the step: when no DataLoader wait was measured and the samples put
    more of the step in data-making host functions than the gap before the forward shows, the data
    share is the sampled one (`data_wait_source: "sampled"`), naming the function."""
    sampled = steps.get("sampled") or {}
    if steps.get("data_wait_source") == "dataloader" or (sampled.get("samples") or 0) < MIN_SAMPLES:
        return
    share = sampled.get("data_share") or 0.0
    if share <= (steps.get("data_wait_share") or 0.0) + SAMPLED_MARGIN:
        return
    top = (sampled.get("data_functions") or [{}])[0]
    states = sampled.get("data_states") or {}
    steps.update(data_wait_share=share, data_wait_source="sampled", data_wait_where=top.get("function"),
                 data_wait_cpu_share=states.get("running"), data_wait_disk_share=states.get("disk"),
                 data_wait_s=share * (steps.get("window_s") or 0.0))


def training_cpu(events, start=None, end=None):
    """The training process's threads over the measured steps: CPU seconds run, seconds waited for
    a CPU, and the waited share of what they wanted (wait / (run + wait)); None without two
    readings in the window."""
    inside = sorted((e for e in events if isinstance(e.get("t"), (int, float))
                     and (start is None or end is None or start - 1.0 <= e["t"] <= end + 1.0)),
                    key=lambda e: e["t"])
    if len(inside) < 2:
        return None
    run = (inside[-1].get("run") or 0.0) - (inside[0].get("run") or 0.0)
    wait = (inside[-1].get("wait") or 0.0) - (inside[0].get("wait") or 0.0)
    if run <= 0:
        return None
    return {"run_s": round(run, REPORT_DIGITS), "wait_s": round(max(wait, 0.0), REPORT_DIGITS),
            "wait_share": round(max(wait, 0.0) / (run + max(wait, 0.0)), REPORT_DIGITS),
            "threads": inside[-1].get("threads")}
