"""From the runs of an experiment to the `gpuprof.try/1` record: per variant, each run's mean step
time over its window and their geometric mean over the rounds that count, the speed-up over the
baseline of the same round (gpuprof.commands.experiments.speedups: the same statistic, so the two agree)
with its 90% interval and what the interval says (faster, slower, the same, inconclusive),
gpuprof's own estimate for that change, and the verdict each ended with; the rounds a disturbance
spoiled, and whether the page cache warmed. Pure: works on plain dictionaries."""

import statistics

from gpuprof.advise import fixes
from gpuprof.advise.keeping import keep_line
from gpuprof.stats import noise
from gpuprof.commands.experiments import rounds as round_rules
from gpuprof.commands.experiments import speedups
from gpuprof.record import changes

TRY_FORMAT = "gpuprof.try/1"
SAME = noise.SAME    # speed-ups within 3% of 1.0 (or of each other) are "no measurable change"
_step = round_rules.step_of


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
    return (_advised_item(variant, baseline) or {}).get("estimated_speedup")


def estimate_range_for(variant: dict, baseline: dict):
    """The range ({"low", "high"}) of the baseline report's advice item for this change, as the
    report states it (advice.rank computes it once), or None."""
    return (_advised_item(variant, baseline) or {}).get("estimate")


def _advised_item(variant: dict, baseline: dict):
    """The baseline report's advice item this variant applies: by fix id, or for a --set value the
    item whose change it is (num-workers only when it is the advised value); None for the ceiling."""
    settings = variant.get("settings") or {}
    if settings.get("ceiling"):
        return None
    fix = variant.get("fix")
    for item in (baseline or {}).get("advice") or []:
        change = item.get("change") or {}
        if fix is not None and item.get("id") == fix:
            return item
        if fix is None and settings and change and all(change.get(k) == v for k, v in settings.items()):
            return item
    return None


def summarise(experiment) -> dict:
    """The try record for an Experiment (gpuprof.commands.experiments.runner) after it ran."""
    baselines = {r["round"]: r for r in experiment.runs if r["variant"] is None}
    baseline_report = experiment.baseline_report or {}
    runs_of = [[r for r in experiment.runs if r["variant"] == index] for index in range(len(experiment.variants))]
    disturbed = round_rules.disturbed_runs(list(baselines.values()), "baseline")
    left_out = {d["round"] for d in disturbed}          # a disturbed baseline spoils its whole round
    for index, (variant, runs) in enumerate(zip(experiment.variants, runs_of)):
        found = round_rules.disturbed_runs(runs, variant.label)
        disturbed += found
        left_out |= {(d["round"], index) for d in found}
    loader, framework = experiment.loader, _framework(baseline_report)
    rows = [_baseline_row(baselines, left_out)] + [
        _variant_row(index, variant.to_dict(), runs, baselines, baseline_report, left_out, (loader, framework))
        for index, (variant, runs) in enumerate(zip(experiment.variants, runs_of))]
    best, passed_over = _best(rows)
    s = experiment.settings
    record = {
        "format": TRY_FORMAT,
        "command": baseline_report.get("command") or [],
        "folder": experiment.folder,
        "settings": {"steps": s.steps, "warmup_steps": s.warmup_steps, "rounds": len(baselines),
                     "min_rounds": s.rounds, "max_rounds": s.max_rounds,
                     "loader": loader, "loader_framework": framework},
        "baseline": {"verdict": (baseline_report.get("verdict") or {}).get("bottleneck"),
                     "summary": (baseline_report.get("verdict") or {}).get("summary"),
                     "data_wait_share": (baseline_report.get("steps") or {}).get("data_wait_share")},
        "rows": rows,
        "best": best["label"] if best else None,
        "best_because": (f"{passed_over['label']} measured {passed_over['speedup']:.2f}x, within this one's spread, "
                         "and changes what the model trains on") if passed_over else None,
        "clear": round_rules.clear(rows),
        "disturbed": disturbed,
        "cache": round_rules.cache_state(experiment.runs, s.cold),
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


def _framework(report: dict):
    loaders = (report or {}).get("dataloaders") or []
    return loaders[0].get("framework") if loaders else None


def _baseline_row(baselines: dict, left_out: set = frozenset()) -> dict:
    """The baseline's row: its step time is the geometric mean over the rounds that count (a
    disturbed baseline's round is left out), as each variant's is, so the table's two step times
    give the speed-up printed beside them."""
    steps = [s for s in (_step(r["report"]) for r in baselines.values()) if s]
    counted = [_step(r["report"]) for n, r in baselines.items() if not r["failed"] and n not in left_out]
    step = speedups.geometric_mean(counted)
    return {"label": "baseline", "same_as_baseline": True, "settings": {}, "fix": None, "caution": None,
            "rounds": len(baselines), "step_s": [round(s, 6) for s in steps],
            "step_time_s": step, "steps_per_s": (1.0 / step) if step else None,
            "speedup": 1.0 if step else None, "speedup_min": None, "speedup_max": None, "estimate": None,
            "verdicts": [_verdict(r["report"]) for r in baselines.values()],
            **_efficiency([r["report"] for r in baselines.values() if not r["failed"]]),
            "failed": [r["exit_code"] for r in baselines.values() if r["failed"]],
            "applied": None, "error": None, "run_dirs": [r["run_dir"] for r in baselines.values()]}


def _variant_row(index: int, variant: dict, runs: list, baselines: dict, baseline_report: dict,
                 left_out: set = frozenset(), keeping: tuple = (None, None)) -> dict:
    """One variant's row. `keeping` is (the loader's line, the framework that built it): the
    row stores how to keep its change in the words of the fixes it was measured with."""
    steps = [s for s in (_step(r["report"]) for r in runs if not r["failed"]) if s]
    ratios = [ratio for _, ratio in round_rules.paired_ratios(runs, baselines, left_out)]
    measured = speedups.judge(ratios)
    centre, low, high = measured.centre, measured.low, measured.high
    step = speedups.geometric_mean(_step(r["report"]) for r in runs if not r["failed"] and _counts(r, index, left_out))
    applied, error, broke, compile_s = _application(runs)
    as_now = _as_now(variant.get("settings") or {}, baseline_report)
    return {
        "label": variant["label"] + (" (as now)" if as_now else ""), "same_as_baseline": as_now, "settings": variant["settings"], "fix": variant.get("fix"),
        "caution": variant.get("caution"), "rounds": len(runs), "step_s": [round(s, 6) for s in steps],
        "step_time_s": step, "steps_per_s": (1.0 / step) if step else None,
        "speedup": centre,
        "speedup_min": min(ratios) if ratios else None, "speedup_max": max(ratios) if ratios else None,
        "interval_low": low, "interval_high": high, "paired_rounds": len(ratios), "too_wide": measured.too_wide,
        "conclusion": "failed" if broke else ("not applied" if error else measured.conclusion) if ratios else None,
        "changes_training": _changes_training(variant),
        "keep": keep_line(variant.get("settings") or {}, variant.get("fix"), *keeping),
        "estimate": estimate_for(variant, baseline_report),
        "estimate_range": estimate_range_for(variant, baseline_report),
        "verdicts": [_verdict(r["report"]) for r in runs],
        **_efficiency([r["report"] for r in runs if not r["failed"]]),
        "failed": [r["exit_code"] for r in runs if r["failed"]],
        "applied": applied, "error": error, "broke_training": broke,
        "compile_s": compile_s,
        "run_dirs": [r["run_dir"] for r in runs],
    }


def _counts(run: dict, index: int, left_out: set) -> bool:
    """Whether a variant's run counts: neither its round (a disturbed baseline) nor the run itself
    (disturbed) was left out."""
    return run["round"] not in left_out and (run["round"], index) not in left_out


def _efficiency(reports: list) -> dict:
    """{"achieved_tflops", "mfu"}: the medians over the runs whose step was counted (none: {})."""
    found = [(r or {}).get("efficiency") or {} for r in reports]
    achieved = [e["achieved_tflops"] for e in found if e.get("achieved_tflops")]
    mfu = [e["mfu"] for e in found if e.get("mfu")]
    if not achieved:
        return {}
    return {"achieved_tflops": statistics.median(achieved), "mfu": statistics.median(mfu) if mfu else None}


def _as_now(settings: dict, baseline_report: dict) -> bool:
    """A --set value the program already uses: the row measures noise, not a change."""
    loaders = (baseline_report or {}).get("dataloaders") or []
    if not settings or not loaders or not set(settings) <= set(changes.LOADER_KEYS):
        return False
    return all(loaders[0].get(k) == v for k, v in settings.items())


def _application(runs: list):
    """(what the probes report they changed, why not where they could not, whether the change broke
    training (a compile that raised, a loss that became NaN), the median compile time where the
    change compiled the model)."""
    applied, error, broke, compiles = None, None, False, []
    for run in runs:
        for event in run.get("events") or []:
            if event.get("error"):
                error = event["error"]
                broke = broke or bool(event.get("failed"))
            elif event.get("applied") is not None:
                applied = dict(applied or {}, **event["applied"])
            if event.get("compile_s") is not None:
                compiles.append(event["compile_s"])
    return applied, error, broke, (statistics.median(compiles) if compiles else None)


def _changes_training(variant: dict) -> bool:
    """Whether keeping this change changes what the model trains on (echoing, another batch size)."""
    fix = fixes.get(variant.get("fix"))
    if fix is not None:
        return fix.changes_training
    return any(changes.KEYS[k].caution for k in (variant.get("settings") or {}) if k in changes.KEYS)


def _faster(rows: list) -> list:
    """Variants measurably faster than the baseline (over their rounds' interval where there are
    several, else beyond 3%), fastest first; never the input ceiling, which is no fix."""
    out = [r for r in rows[1:] if r.get("speedup") and not r["failed"] and not r.get("error") and _measurably_faster(r)
           and not (r["settings"] or {}).get("ceiling") and not r.get("same_as_baseline")]
    return sorted(out, key=lambda r: -r["speedup"])


def _measurably_faster(row: dict) -> bool:
    """Its interval over rounds clears 1.0 where there are two rounds or more; a single round has
    only its 3% threshold."""
    if row.get("interval_low") is not None:
        return row.get("conclusion") == "faster"
    return row["speedup"] > 1 + SAME


def _best(rows: list) -> tuple:
    """(the variant a person can keep, the faster one passed over for it, or None): the fastest,
    unless it changes what the model trains on and a variant that keeps training the same is within
    its spread. (None, None) when none is measurably faster."""
    faster = _faster(rows)
    if not faster:
        return None, None
    top = faster[0]
    if top.get("changes_training"):
        keeps = [r for r in faster if not r.get("changes_training")
                 and not noise.separated((r.get("interval_low"), r.get("interval_high")),
                                         (top.get("interval_low"), top.get("interval_high")))
                 and r.get("interval_low") is not None]
        if keeps:
            return keeps[0], top
    return top, None


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


def decided(row: dict) -> bool:
    """Whether a row's speed-up may be stated as a finding: its interval decided it (faster,
    slower, the same), or it has no interval (one round: judged by its 3% threshold alone, and
    its line says so). An inconclusive interval leaves it a point estimate only."""
    return row.get("interval_low") is None or row.get("conclusion") != "inconclusive"


def _input_check(rows: list, baseline_report: dict):
    """What the measured input ceiling says about the verdict: the share of step time the input
    costs is 1 - 1/ceiling speed-up; a verdict that disagrees is corrected, with the reason, but
    only by a ceiling its rounds decided (`decided`: else the share is a point estimate only)."""
    ceiling = next((r for r in rows[1:] if (r["settings"] or {}).get("ceiling") and r.get("speedup")), None)
    if ceiling is None:
        return None
    share = max(0.0, 1.0 - 1.0 / ceiling["speedup"])
    verdict = (baseline_report.get("verdict") or {}).get("bottleneck")
    wait = (baseline_report.get("steps") or {}).get("data_wait_share")
    corrected = _correction(ceiling["speedup"], share, verdict, wait) if decided(ceiling) else None
    return {"measured_input_share": round(share, 3), "ceiling_speedup": round(ceiling["speedup"], 3),
            "decided": decided(ceiling), "verdict": verdict, "data_wait_share": wait, "corrected": corrected}


def _correction(speedup: float, share: float, verdict, wait):
    """Why the verdict is wrong, where a decided ceiling contradicts it; else None."""
    said_input = bool(verdict) and verdict.startswith("input.")
    if share >= 0.3 and not said_input:
        return (f"input-bound, not {verdict}: with the input made free steps were {speedup:.2f}x "
                f"faster, so the input costs {share:.0%} of each step although the loop waited only "
                f"{(wait or 0):.0%} (producers competing with compute for the CPU cost time without a wait)")
    if said_input and share < 0.1:
        faster = f"only {speedup:.2f}x faster" if speedup >= 1 + SAME else f"no faster ({speedup:.2f}x)"
        return (f"not input-bound: with the input made free steps were {faster} (the input costs "
                f"{share:.0%} of each step), so fixes to the input pipeline cannot buy more")
    return None
