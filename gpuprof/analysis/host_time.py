"""Where the training thread spent the measured steps, from the step probe's stack samples: forward,
backward, optimizer, the DataLoader, and host code by the user's function. Batch construction that
sits inside a step (between forward and backward, say) shows here as time in a data-making function,
although no wait measures it."""

import re

#: A user function whose name says it makes data.
DATA_FUNCTION = re.compile(r"batch|data|load|sampl|fetch|read|augment|transform|collate|prepar|densif|shuffle|"
                           r"token|decode", re.IGNORECASE)
MIN_SAMPLES = 50


def analyse_samples(events, start=None, end=None) -> dict:
    """Shares of the sampled time in [start, end] (each event covers the second before it; its
    counts are the time each place stood for, or plain sample counts)."""
    counts = {}
    taken = 0
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
    kinds = {}
    functions = {}
    states = {}             # thread state while in data-making functions: R running, D disk, S sleeping
    for key, n in counts.items():
        place, _, state = key.partition("|")
        kind, _, function = place.partition(":")
        kinds[kind] = kinds.get(kind, 0) + n
        if kind == "host":
            functions[function or "?"] = functions.get(function or "?", 0) + n
            if DATA_FUNCTION.search((function or "").split(" (", 1)[0]):
                states[state or "?"] = states.get(state or "?", 0) + n
    ranked = sorted(functions.items(), key=lambda item: -item[1])
    data = [(name, n) for name, n in ranked if DATA_FUNCTION.search(name.split(" (", 1)[0])]
    in_data = sum(states.values())
    return {
        "samples": taken,
        "shares": {kind: round(n / total, 4) for kind, n in sorted(kinds.items())},
        "host_functions": [{"function": name, "share": round(n / total, 4)} for name, n in ranked[:8]],
        "data_functions": [{"function": name, "share": round(n / total, 4)} for name, n in data[:4]],
        "data_share": round(sum(n for _, n in data) / total, 4),
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
    if share <= (steps.get("data_wait_share") or 0.0) + 0.02:
        return
    top = (sampled.get("data_functions") or [{}])[0]
    states = sampled.get("data_states") or {}
    steps.update(data_wait_share=share, data_wait_source="sampled", data_wait_where=top.get("function"),
                 data_wait_cpu_share=states.get("running"), data_wait_disk_share=states.get("disk"),
                 data_wait_s=share * (steps.get("window_s") or 0.0))
