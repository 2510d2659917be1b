"""`gpuprof run --verify`: after the report, `gpuprof try` measures the input ceiling and the top fix
in short windows, and the measurements are kept in the run's report."""

import os

from gpuprof.errors import UsageProblem
from gpuprof.commands.workflows.messages import error
from gpuprof.commands.workflows.options import RunRequest, TryRequest


VERIFY_ROUNDS, VERIFY_MAX_ROUNDS, VERIFY_BUDGET_S, VERIFY_STEPS, VERIFY_WARMUP = 2, 4, 180.0, 20, 3


def verify_estimates(run_dir, report, request: RunRequest) -> dict:
    """`run --verify`: the input ceiling and the top fix measured by `gpuprof try` in short windows,
    printed next to the estimates; returns the report with the measurements (the one given when
    nothing was measured). It never changes the run's exit status; what cannot be measured is said
    in one line."""
    from gpuprof.commands.workflows.trying import try_changes

    advice = report.get("advice") or []
    applicable = [a for a in advice if a.get("change")]
    has_loader = bool(report.get("dataloaders"))
    if not has_loader and not applicable:
        error("--verify: nothing to measure: the program builds no DataLoader and every fix it advises needs a "
              "code change")
        return report
    records = []
    try:
        # --top 1 as `try` reads it: a fix ranked above it that needs a code change is named as not tried.
        try_changes(TryRequest(target=request.target, module=request.module, command_mode=request.command_mode,
                               python=request.python, gpu=request.gpu, quiet=bool(request.quiet),
                               out=os.path.join(run_dir, "verify"), input_ceiling=has_loader,
                               top=1 if advice else 0, rounds=VERIFY_ROUNDS, max_rounds=VERIFY_MAX_ROUNDS,
                               budget=VERIFY_BUDGET_S, steps=VERIFY_STEPS, warmup_steps=VERIFY_WARMUP,
                               on_record=records.append))
    except UsageProblem as exc:
        error(f"--verify: {exc}")
    return with_measurements(report, records[0], run_dir) if records else report


def with_measurements(report: dict, record: dict, run_dir: str) -> dict:
    """The report with the measured input share and the top fix's measured speed-up; a verdict the
    ceiling contradicts says so."""
    from gpuprof.advise.measured import with_measurements as ranked_by_measurement
    rows = [_with_report_estimate({k: row.get(k) for k in ("label", "fix", "speedup", "speedup_min", "speedup_max",
                                                           "interval_low", "interval_high", "conclusion", "estimate",
                                                           "estimate_range", "error")}, report)
            for row in record.get("rows", [])[1:]]
    verified = {"try": os.path.join(run_dir, "verify", "try.json"), "input_check": record.get("input_check"),
                "rows": rows}
    out = dict(report, verified=verified, advice=ranked_by_measurement(report.get("advice") or [], rows))
    check = record.get("input_check") or {}
    if check.get("corrected") and report.get("verdict"):
        out["verdict"] = dict(report["verdict"], corrected=check["corrected"])
    return out


def _with_report_estimate(row: dict, report: dict) -> dict:
    """A measured fix's row with the estimate of the run's own report (try's baseline run gives its
    own), so that the run's report states one estimate per fix."""
    item = next((a for a in report.get("advice") or [] if row.get("fix") and a.get("id") == row["fix"]), None)
    if item is None:
        return row
    return dict(row, estimate=item.get("estimated_speedup"), estimate_range=item.get("estimate"))
