"""From the runs of an experiment to the `gpuprof.try/1` record: per variant, each run's mean step
time over its window and their median over rounds, the speed-up over the baseline of the same round with its spread, gpuprof's own
estimate for that change, and the verdict each ended with. Pure: works on plain dictionaries."""

import statistics

TRY_FORMAT = "gpuprof.try/1"
SAME = 0.03          # speed-ups within 3% of 1.0 (or of each other) are "no measurable change"


def _step(report):
    """A run's mean step time over its measured window (window / steps): throughput, which a
    median would misjudge for variants whose steps alternate fast and slow (echoing, a stall
    every few batches)."""
    steps = (report or {}).get("steps") or {}
    return steps.get("mean_step_s")


def _verdict(report):
    verdict = (report or {}).get("verdict") or {}
    return verdict.get("bottleneck")


def estimate_for(variant: dict, baseline: dict):
    """gpuprof's estimate for this change from the baseline's report, or None where it has none:
    the ceiling is 1 / (1 - data wait); an advised fix carries its own; a --set value carries the
    num-workers estimate only when it is the advised value."""
    settings = variant.get("settings") or {}
    if settings.get("ceiling"):
        verdict = (baseline or {}).get("verdict") or {}
        if (verdict.get("evidence") or {}).get("contended"):
            share = verdict.get("share")       # the input's share of the CPU, not a wait
        else:
            share = ((baseline or {}).get("steps") or {}).get("data_wait_share")
        return round(1.0 / max(1.0 - share, 1e-6), 2) if share is not None else None
    fix = variant.get("fix")
    for item in (baseline or {}).get("advice") or []:
        change = item.get("change") or {}
        if fix is not None and item.get("id") == fix:
            return item.get("estimated_speedup")
        if fix is None and settings and change and all(change.get(k) == v for k, v in settings.items()):
            return item.get("estimated_speedup")
    return None


def summarise(experiment) -> dict:
    """The try record for an Experiment (gpuprof.experiments.runner) after it ran."""
    baselines = {r["round"]: r for r in experiment.runs if r["variant"] is None}
    baseline_report = experiment.baseline_report or {}
    rows = [_baseline_row(baselines)]
    for index, variant in enumerate(experiment.variants):
        runs = [r for r in experiment.runs if r["variant"] == index]
        rows.append(_variant_row(index, variant.to_dict(), runs, baselines, baseline_report))
    record = {
        "format": TRY_FORMAT,
        "command": baseline_report.get("command") or [],
        "folder": experiment.folder,
        "settings": {"steps": experiment.settings.steps, "warmup_steps": experiment.settings.warmup_steps,
                     "rounds": experiment.settings.rounds, "loader": experiment.loader},
        "baseline": {"verdict": (baseline_report.get("verdict") or {}).get("bottleneck"),
                     "summary": (baseline_report.get("verdict") or {}).get("summary"),
                     "data_wait_share": (baseline_report.get("steps") or {}).get("data_wait_share")},
        "rows": rows,
        "best": _best(rows),
        "sweeps": _sweeps(rows),
        "input_check": _input_check(rows, baseline_report),
        "notes": list(experiment.notes),
        "interrupted": experiment.interrupted is not None,
        "exit_code": _exit_code(experiment),
    }
    return record


def _exit_code(experiment) -> int:
    """The program's own failure status when the baseline failed; 128+N when a signal stopped the
    experiment; else 0 (a variant that crashed is reported in its row)."""
    if experiment.interrupted is not None:
        return 128 + int(experiment.interrupted)
    first = next((r for r in experiment.runs if r["variant"] is None), None)
    if first is not None and first["failed"]:
        return first["exit_code"] if first["exit_code"] not in (0, None) else 1
    return 0


def _baseline_row(baselines: dict) -> dict:
    steps = [s for s in (_step(r["report"]) for r in baselines.values()) if s]
    median = statistics.median(steps) if steps else None
    return {"label": "baseline", "same_as_baseline": True, "settings": {}, "fix": None, "caution": None,
            "rounds": len(baselines), "step_s": [round(s, 6) for s in steps],
            "step_time_s": median, "steps_per_s": (1.0 / median) if median else None,
            "speedup": 1.0 if median else None, "speedup_min": None, "speedup_max": None, "estimate": None,
            "verdicts": [_verdict(r["report"]) for r in baselines.values()],
            "failed": [r["exit_code"] for r in baselines.values() if r["failed"]],
            "applied": None, "error": None, "run_dirs": [r["run_dir"] for r in baselines.values()]}


def _variant_row(index: int, variant: dict, runs: list, baselines: dict, baseline_report: dict) -> dict:
    steps, ratios = [], []
    for run in runs:
        step = _step(run["report"])
        base = _step((baselines.get(run["round"]) or {}).get("report"))
        if step and not run["failed"]:
            steps.append(step)
            if base:
                ratios.append(base / step)
    median = statistics.median(steps) if steps else None
    applied, error = _application(runs)
    as_now = _as_now(variant.get("settings") or {}, baseline_report)
    return {
        "label": variant["label"] + (" (as now)" if as_now else ""), "same_as_baseline": as_now, "settings": variant["settings"], "fix": variant.get("fix"),
        "caution": variant.get("caution"), "rounds": len(runs), "step_s": [round(s, 6) for s in steps],
        "step_time_s": median, "steps_per_s": (1.0 / median) if median else None,
        "speedup": statistics.median(ratios) if ratios else None,
        "speedup_min": min(ratios) if ratios else None, "speedup_max": max(ratios) if ratios else None,
        "estimate": estimate_for(variant, baseline_report),
        "verdicts": [_verdict(r["report"]) for r in runs],
        "failed": [r["exit_code"] for r in runs if r["failed"]],
        "applied": applied, "error": error,
        "run_dirs": [r["run_dir"] for r in runs],
    }


LOADER_KEYS = ("num_workers", "pin_memory", "persistent_workers", "prefetch_factor", "batch_size")


def _as_now(settings: dict, baseline_report: dict) -> bool:
    """A --set value the program already uses: the row measures noise, not a change."""
    loaders = (baseline_report or {}).get("dataloaders") or []
    if not settings or not loaders or not set(settings) <= set(LOADER_KEYS):
        return False
    return all(loaders[0].get(k) == v for k, v in settings.items())


def _application(runs: list):
    """What the probes report they changed, and why not where they could not."""
    applied, error = None, None
    for run in runs:
        for event in run.get("events") or []:
            if event.get("error"):
                error = event["error"]
            elif event.get("applied") is not None:
                applied = dict(applied or {}, **event["applied"])
    return applied, error


def _best(rows: list):
    """The fastest variant whose gain is more than noise, else None."""
    candidates = [r for r in rows[1:] if r.get("speedup") and not r["failed"] and r["speedup"] > 1 + SAME
                  and not (r["settings"] or {}).get("ceiling") and not r.get("same_as_baseline")]
    if not candidates:
        return None
    return max(candidates, key=lambda r: r["speedup"])["label"]


def _sweeps(rows: list) -> list:
    """For each key swept with --set over several values: the best value, and which values are
    within the best one's spread (as good, as far as these rounds can tell)."""
    by_key = {}
    for row in rows[1:]:
        settings = row["settings"] or {}
        if len(settings) == 1 and row.get("fix") is None:
            (key, value), = settings.items()
            by_key.setdefault(key, []).append((value, row))
    out = []
    for key, entries in by_key.items():
        measured = [(v, r) for v, r in entries if r.get("speedup")]
        if len(entries) < 2 or not measured:
            continue
        value, best = max(measured, key=lambda e: e[1]["speedup"])
        low = best.get("speedup_min") or best["speedup"]
        ties = [v for v, r in measured if (r.get("speedup_max") or r["speedup"]) >= low]
        out.append({"key": key, "best": value, "speedup": best["speedup"], "as_good": ties})
    return out


def _input_check(rows: list, baseline_report: dict):
    """What the measured input ceiling says about the verdict: the share of step time the input
    costs is 1 - 1/ceiling speed-up; a verdict that disagrees is corrected, with the reason."""
    ceiling = next((r for r in rows[1:] if (r["settings"] or {}).get("ceiling") and r.get("speedup")), None)
    if ceiling is None:
        return None
    share = max(0.0, 1.0 - 1.0 / ceiling["speedup"])
    verdict = (baseline_report.get("verdict") or {}).get("bottleneck")
    wait = (baseline_report.get("steps") or {}).get("data_wait_share")
    input_bound = share >= 0.3
    said_input = bool(verdict) and verdict.startswith("input.")
    corrected = None
    if input_bound and not said_input:
        corrected = (f"input-bound, not {verdict}: with the input made free steps were {ceiling['speedup']:.2f}x "
                     f"faster, so the input costs {share:.0%} of each step although the loop waited only "
                     f"{(wait or 0):.0%} (producers competing with compute for the CPU cost time without a wait)")
    elif said_input and share < 0.1:
        faster = (f"only {ceiling['speedup']:.2f}x faster" if ceiling["speedup"] >= 1 + SAME else
                  f"no faster ({ceiling['speedup']:.2f}x)")
        corrected = (f"not input-bound: with the input made free steps were {faster} (the input costs "
                     f"{share:.0%} of each step), so fixes to the input pipeline cannot buy more")
    return {"measured_input_share": round(share, 3), "ceiling_speedup": round(ceiling["speedup"], 3),
            "verdict": verdict, "data_wait_share": wait, "corrected": corrected}
