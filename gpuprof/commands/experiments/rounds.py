"""What the rounds of an experiment say about their own noise: runs disturbed by something else on
the machine (named with what the samplers saw then), the page cache warming between runs, and
whether every variant's speed-up is clear yet. Pure: works on the runs' reports."""

from gpuprof.stats import noise
from gpuprof.judge.sections.machine_load import machine_during

#: A first run that read at least this much from disk, and later runs less than half of it: the
#: page cache warmed between runs.
WARM_READ_BYTES = 32 * 2**20
WARM_RATIO = 0.5


def step_of(report):
    """A run's mean step time over its measured window (window / steps): throughput, which a
    median would misjudge for variants whose steps alternate fast and slow (echoing, a stall
    every few batches)."""
    return ((report or {}).get("steps") or {}).get("mean_step_s")


def disturbed_runs(runs: list, label: str) -> list:
    """The runs of one series (the baseline, or one variant) far from the others, with what the
    machine did meanwhile."""
    usable = [r for r in runs if not r["failed"] and step_of(r["report"])]
    steps = [step_of(r["report"]) for r in usable]
    out = []
    for index in noise.disturbed(steps):
        run = usable[index]
        others = sorted(s for i, s in enumerate(steps) if i != index)
        out.append({"round": run["round"], "label": label, "step_s": steps[index],
                    "others_step_s": others[len(others) // 2], "machine": machine_during(run["report"]),
                    "run_dir": run["run_dir"]})
    return out


def paired_ratios(runs: list, baselines: dict, left_out: set) -> list:
    """(round, baseline step / variant step) for each round whose two runs both count."""
    out = []
    for run in runs:
        if run["failed"] or run["round"] in left_out or (run["round"], run["variant"]) in left_out:
            continue
        step = step_of(run["report"])
        base = step_of((baselines.get(run["round"]) or {}).get("report"))
        if step and base:
            out.append((run["round"], base / step))
    return out


def cache_state(runs: list, cold: bool) -> dict:
    """What each baseline run read from disk, in order, and whether the page cache warmed after the
    first (variants may read less by design: the input ceiling replays batches)."""
    baselines = sorted((r for r in runs if r["variant"] is None), key=lambda r: r["round"])
    reads = [((r.get("report") or {}).get("system") or {}).get("job", {}).get("read_bytes") for r in baselines]
    known = [b for b in reads if b is not None]
    warmed = False
    if not cold and len(known) >= 2 and known[0] >= WARM_READ_BYTES:
        later = sorted(known[1:])[len(known[1:]) // 2]
        warmed = later < WARM_RATIO * known[0]
    return {"read_bytes": reads, "warmed": warmed, "cold": cold}


def clear(rows: list) -> bool:
    """Whether the rounds so far answer the question: every measured variant's interval says
    faster, slower or the same, and the fastest is apart from the next fastest."""
    measured = [r for r in rows[1:] if r.get("speedup") and not r.get("same_as_baseline")]
    if not measured:
        return True
    if any(r.get("conclusion") == "inconclusive" for r in measured):
        return False
    faster = sorted((r for r in measured if r.get("conclusion") == "faster"), key=lambda r: -r["speedup"])
    if len(faster) >= 2:
        return noise.separated(_span(faster[0]), _span(faster[1])) or tied(faster[0], faster[1])
    return True


def tied(a: dict, b: dict) -> bool:
    """Two variants each measured inside the other's interval: as good as each other, as far as
    any number of rounds is likely to tell."""
    return _inside(a["speedup"], _span(b)) and _inside(b["speedup"], _span(a))


def _inside(value, span) -> bool:
    return None not in span and span[0] <= value <= span[1]


def _span(row: dict) -> tuple:
    return row.get("interval_low"), row.get("interval_high")
