"""The `gpuprof.tune/1` record: what was searched, each combination measured (against the unchanged
program and against the reference of its stage), the best with its interval, how the search ended,
the patch and its check. Pure: reads the search, try's summary of the runs and the patch."""

from gpuprof.commands.experiments.results import summarise
from gpuprof.commands.tune import candidates as cand
from gpuprof.commands.tune import knobs
from gpuprof.commands.tune.search import COMPLETE

TUNE_FORMAT = "gpuprof.tune/1"


def record(experiment, search, facts, allowed, spent_s: float, budget_s: float, left_out: list) -> dict:
    tried = summarise(experiment) if experiment.runs else {"rows": [], "disturbed": [], "notes": []}
    by_label = {row["label"]: row for row in tried["rows"]}
    baseline = by_label.get("baseline") or {}
    report = experiment.baseline_report or {}
    best = search.best
    return {
        "format": TUNE_FORMAT,
        "command": report.get("command") or list(experiment.command.argv),
        "folder": experiment.folder,
        "settings": {"budget_s": budget_s, "steps": experiment.settings.steps,
                     "warmup_steps": experiment.settings.warmup_steps, "allowed": sorted(allowed),
                     "loader": experiment.loader, "cores": facts.cores, "gpu": facts.gpu},
        "searched": sorted(search.searched),
        "not_searched": list(left_out),
        "baseline": {"verdict": (report.get("verdict") or {}).get("bottleneck"),
                     "summary": (report.get("verdict") or {}).get("summary"),
                     "step_time_s": baseline.get("step_time_s"), "rounds": baseline.get("rounds"),
                     "run_dirs": baseline.get("run_dirs") or []},
        "rows": [_row(search, key, by_label.get(cand.label_of(combination)) or {})
                 for key, combination in search.combinations.items() if key != cand.UNCHANGED_KEY],
        "stages": [{"number": s.number, "reference": cand.label_of(s.reference), "why": s.why, "rounds": s.rounds,
                    "candidates": [cand.label_of(search.combinations[k]) for k in s.candidates]}
                   for s in search.stages],
        "best": _best(search, best) if best else None,
        "rounds": search.round,
        "search_ended": search.search_ended,
        "stopped_because": None if search.finished_because == COMPLETE else search.finished_because,
        "spent_s": round(spent_s, 1),
        "disturbed": tried.get("disturbed") or [],
        "notes": list(experiment.notes),
        "patch": None,
        "applied": False,
        "check": None,
        "interrupted": experiment.interrupted is not None,
        "exit_code": 0,
    }


def _figures(speedup) -> dict:
    return {"speedup": speedup.centre, "interval_low": speedup.low, "interval_high": speedup.high,
            "conclusion": speedup.conclusion, "too_wide": speedup.too_wide}


def _row(search, key: tuple, tried: dict) -> dict:
    combination = search.combinations[key]
    stage = next((s for s in search.stages if key in s.candidates), None)
    against = search.versus(combination, stage.reference) if stage is not None else None
    return {
        "label": cand.label_of(combination),
        "settings": combination,
        "stage": stage.number if stage else None,
        "reference": cand.label_of(stage.reference) if stage else None,
        "rounds": len(search.times.get(key) or {}),
        "step_time_s": tried.get("step_time_s"),
        **_figures(search.versus(combination, {})),
        "versus_reference": _figures(against) if against is not None else None,
        "outcome": _outcome(search, key, stage),
        "changes": [{"key": k.key, "what": k.why} for k in knobs.unsafe_in(combination)],
        "failed": tried.get("failed") or ([search.failures[key]] if search.failures.get(key) else []),
        "applied": tried.get("applied"),
        "error": tried.get("error"),
        "run_dirs": tried.get("run_dirs") or [],
    }


def _outcome(search, key: tuple, stage) -> str:
    if key == cand.key_of(search.best):
        return "best"
    if stage is None:
        return "measured"
    found = stage.outcome.get(key) or "not decided"
    return {"faster": "faster: a winner", "inconclusive": "not decided"}.get(found, found)


def _best(search, best: dict) -> dict:
    measured = search.versus(best, {})
    return {"label": cand.label_of(best), "settings": best, **_figures(measured),
            "paired_rounds": search.paired_rounds(best, {}),
            "faster": measured.conclusion == "faster",
            "changes": [{"key": k.key, "what": k.why} for k in knobs.unsafe_in(best)]}


def patch_section(patch, path) -> dict:
    return {"file": path, "root": patch.root, "files": [f.shown for f in patch.files], "diff": patch.text,
            "by_hand": list(patch.by_hand), "command_line": patch.command_line}


def check_section(result, applied: bool) -> dict:
    return {"on": "your files" if applied else "a copy in a temporary folder", **_figures(result.speedup),
            "compare_call": result.call, "gain_holds": result.gain_holds, "same_output": result.same_output,
            "same_status": result.same_status, "difference": result.difference, "passed": result.passed,
            "run_dirs": result.run_dirs}
