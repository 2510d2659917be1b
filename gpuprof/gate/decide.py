"""The gate decision: a pure function from reports and thresholds to pass or fail.

Limits are inclusive: a measured value equal to its limit passes. A threshold whose measure is
missing from the report fails (a gate that cannot check must not pass quietly), except on a run
with no verdict (it never trained, it crashed at once, gpuprof was stopped), which cannot be gated
at all: bad input, exit 2, unless every threshold has its measure. A regression threshold without a
baseline is skipped and says so."""

from dataclasses import dataclass, field
from typing import Mapping, Optional

from gpuprof.judge.sections.job_gpus import job_gpu_util
from gpuprof.gate.errors import GateInputError

from gpuprof.gate.statuses import DISTURBED, FAIL, MISSING, PASS, SKIPPED  # noqa: F401  (the gate's words)
from gpuprof.gate.busy_machine import judge_on_busy_machine
from gpuprof.record.report_format import Report


@dataclass
class Check:
    name: str
    label: str
    measured: Optional[float] = None
    limit: Optional[float] = None
    status: str = PASS
    detail: str = ""


@dataclass
class GateResult:
    checks: list = field(default_factory=list)
    summary: str = ""            # the report's verdict, for failure messages

    disturbed: str = ""          # what other processes did, when the run measured a busy machine

    @property
    def passed(self) -> bool:
        return all(c.status in (PASS, SKIPPED) for c in self.checks)

    @property
    def undecided(self) -> bool:
        """Not decided: some threshold could not be judged on a busy machine, none failed on a quiet one."""
        return not self.passed and all(c.status in (PASS, SKIPPED, DISTURBED) for c in self.checks)


def gpu_util(report: Report):
    """The job's GPUs' mean utilisation over the measured steps (the report's figure, which already
    leaves start-up out and picks the job's GPUs); an older report's summaries otherwise."""
    system = report.get("system") or {}
    status = system.get("gpu_status") or {}
    if "job_util" in status:
        return status["job_util"]
    return job_gpu_util(system.get("gpus") or [])


def gpu_util_detail(report: Report) -> str:
    """Which GPUs and which span the GPU figure covers, or why there is none."""
    status = (report.get("system") or {}).get("gpu_status") or {}
    reason = status.get("reason")
    if reason and gpu_util(report) is None:
        return reason
    chosen = status.get("job_gpus") or {}
    if not chosen:
        return status.get("reason") or ""
    span = {"steps": "over the measured steps", "run": "over the whole run (no samples inside the steps)"}.get(
        status.get("job_util_over") or "", "")
    gpus = ", ".join(label for label in chosen.get("labels") or [] if label)
    return f"{gpus} ({chosen.get('words')}) {span}".strip()


def mfu(report: Report):
    return (report.get("efficiency") or {}).get("mfu")


def mfu_detail(report: Report) -> str:
    """The MFU's inputs, or why there is none (the step not counted, the peak unknown)."""
    section = report.get("efficiency") or {}
    if not section.get("flops_per_step"):
        return "FLOPs per step not counted" + (f" ({section['counted']['skipped']})"
                                               if (section.get("counted") or {}).get("skipped") else "")
    peak = section.get("peak") or {}
    if not peak.get("tflops"):
        return "the device's peak is unknown (give --peak-tflops to gpuprof run)"
    return f"against {peak['tflops']:g} TFLOPS {str(peak.get('dtype') or '').upper()}, {peak.get('source')}"


def program_of(report: Mapping) -> str:
    program = report.get("program") or {}
    return program.get("name") or " ".join(report.get("command") or [])


def decide(report: Report, thresholds: dict, baseline: dict = None, force: bool = False, rounds=(),
           baseline_rounds=()) -> GateResult:
    steps = report.get("steps") or {}
    result = GateResult(summary=(report.get("verdict") or {}).get("summary", ""))
    if "max_data_wait" in thresholds:
        result.checks.append(_at_most("max_data_wait", "data wait share of step time",
                                      steps.get("data_wait_share"), thresholds["max_data_wait"],
                                      f"over {steps.get('measured', 0)} steps"))
    if "min_samples_per_second" in thresholds:
        result.checks.append(_at_least("min_samples_per_second", "samples per second",
                                       steps.get("samples_per_second"), thresholds["min_samples_per_second"],
                                       f"over {steps.get('measured', 0)} steps"))
    if "max_p90_step" in thresholds:
        result.checks.append(_at_most("max_p90_step", "90th percentile step time (s)", steps.get("p90_step_s"),
                                      thresholds["max_p90_step"], f"over {steps.get('measured', 0)} steps"))
    if "min_gpu_util" in thresholds:
        status = (report.get("system") or {}).get("gpu_status") or {}
        result.checks.append(_at_least("min_gpu_util", "GPU utilisation", gpu_util(report),
                                       thresholds["min_gpu_util"], gpu_util_detail(report)))
    if "min_mfu" in thresholds:
        result.checks.append(_at_least("min_mfu", "model FLOPs utilisation (MFU)", mfu(report),
                                       thresholds["min_mfu"], mfu_detail(report)))
    if "max_regression" in thresholds:
        result.checks.append(_regression(report, baseline, thresholds["max_regression"], force, rounds,
                                         baseline_rounds))
    if not thresholds.get("judge_busy_machine"):
        judge_on_busy_machine(result, report, baseline)
    verdict = report.get("verdict") or {}
    if verdict.get("basis") == "none" and any(c.status == MISSING for c in result.checks):
        # Nothing was measured that these thresholds need: not a failure of the code under test,
        # a run that cannot be gated (exit 2).
        raise GateInputError(f"nothing to judge: {verdict.get('reason') or 'the run has no verdict'}")
    return result


def _at_most(name, label, measured, limit, detail) -> Check:
    if measured is None:
        return Check(name, label, None, limit, MISSING, f"not measured {detail}".strip())
    return Check(name, label, measured, limit, PASS if measured <= limit else FAIL, detail)


def _at_least(name, label, measured, limit, detail) -> Check:
    if measured is None:
        return Check(name, label, None, limit, MISSING, ("not measured: " + detail) if detail else "not measured")
    return Check(name, label, measured, limit, PASS if measured >= limit else FAIL, detail)


def comparable(report: Report, baseline: dict) -> None:
    """Refuse to compare different programs or batch sizes (GateInputError)."""
    mine, theirs = program_of(report), program_of(baseline)
    if mine != theirs:
        raise GateInputError(f"the baseline is a run of a different program ({theirs!r}, this is {mine!r}); "
                             "use --force to compare anyway")
    size, base_size = (report.get("steps") or {}).get("batch_size"), (baseline.get("steps") or {}).get("batch_size")
    if size != base_size:
        raise GateInputError(f"the baseline used batch size {base_size}, this run {size}; use --force to compare anyway")


NOISE_Z = 2.0      # a change counts only beyond twice the combined noise of the two sides


def _steady(report):
    return ((report or {}).get("steps") or {}).get("steady") or {}


#: A single run's median-based noise above this means its steps split into groups (instant steps and
#: ones that wait on prefetching workers): the median then sits in one group, so the mean is used.
SPLIT_NOISE = 0.25


def step_statistic(reports: list, kind: str = None):
    """(step time, its relative noise, "median" or "mean"). Several rounds: the median over rounds of
    each round's steady step time, with half their range over that median as noise, after leaving out
    a round far from the others when the rest agree (gpuprof.stats.noise, as `try` does). One run:
    its steady median with the standard error of a median from the spread of its steady steps
    (IQR / 1.349 as sigma, x 1.2533 / sqrt(n)), or its steady mean with the mean's standard error.
    `kind` (step_kind of both sides compared) picks the measure; by default these runs' own."""
    from gpuprof.stats.noise import disturbed
    kind = kind or step_kind(reports)
    values = [m for m in (_steady(r).get(f"{kind}_step_s") for r in reports) if m]
    left_out = set(disturbed(values))
    values = sorted(m for i, m in enumerate(values) if i not in left_out)
    if not values:
        return None, None, kind
    middle = values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
    if len(values) >= 2:
        return middle, (values[-1] - values[0]) / 2 / middle, kind
    if kind == "mean":
        mean_se = _steady(reports[0]).get("mean_se_s")
        return middle, (mean_se / middle if mean_se is not None else 0.0), kind
    return middle, _median_noise(_steady(reports[0])) or 0.0, kind


def step_kind(*sides: list) -> str:
    """The one measure two sides (each a list of runs) are compared by: "mean" where any run's steps
    split into instant ones and waiting ones (its median sits in one group and says nothing of the
    throughput) and every run kept its mean (a side of one run: and the mean's error); else "median"
    (an older report without the mean keeps its median). One measure for both, so their ratio is a
    speed-up the throughputs bear out, not a mean over a median."""
    runs = [report for reports in sides for report in reports]
    means = all(_steady(r).get("mean_step_s") for r in runs) and all(
        _steady(reports[0]).get("mean_se_s") is not None for reports in sides if len(reports) == 1)
    return "mean" if means and any(_split(r) for r in runs) else "median"


def _median_noise(steady: dict):
    """The relative standard error of a run's steady median, from its quartiles (None: too few steps)."""
    p25, p75, n, median = steady.get("p25_step_s"), steady.get("p75_step_s"), steady.get("steps") or 0, \
        steady.get("median_step_s")
    if p25 is None or p75 is None or n < 2 or not median:
        return None
    return 1.2533 * ((p75 - p25) / 1.349) / (n ** 0.5) / median


#: Steady quartiles further apart than this factor: the steps split into instant ones and ones that
#: wait, and the median sits in one group whatever its error (a round of many steps has a small one).
SPLIT_SPREAD = 4.0


def _split(report: Report) -> bool:
    """Whether a run's steady steps split into instant ones and waiting ones: its quartiles lie more
    than SPLIT_SPREAD apart, or its median's error is wider than SPLIT_NOISE."""
    steady = _steady(report)
    p25, p75 = steady.get("p25_step_s"), steady.get("p75_step_s")
    if p25 is not None and p75 is not None and p75 > SPLIT_SPREAD * p25:
        return True
    noise = _median_noise(steady)
    return noise is not None and noise > SPLIT_NOISE


def _regression(report, baseline, limit, force, rounds=(), baseline_rounds=()) -> Check:
    """The steady median step time against the baseline's, over rounds where given: a change larger
    than the limit fails only when it is also beyond the noise of the two sides (docs/ci.md)."""
    label = "step time change vs baseline"
    if baseline is None:
        return Check("max_regression", label, None, limit, SKIPPED, "no baseline given")
    if not force:
        comparable(report, baseline)
    kind = step_kind([report] + list(rounds), [baseline] + list(baseline_rounds))
    now, now_noise, _ = step_statistic([report] + list(rounds), kind)
    before, before_noise, _ = step_statistic([baseline] + list(baseline_rounds), kind)
    if not now or not before:
        return Check("max_regression", label, None, limit, MISSING, "a median step time is missing")
    change = now / before - 1.0
    noise = ((now_noise or 0.0) ** 2 + (before_noise or 0.0) ** 2) ** 0.5
    runs = f"{1 + len(rounds)} run{'s' if rounds else ''} vs {1 + len(baseline_rounds)}"
    detail = (f"{kind} step {now * 1e3:.2f} ms vs {before * 1e3:.2f} ms ({runs}; "
              f"{_steady(report).get('steps')} and {_steady(baseline).get('steps')} steady steps); noise ±{noise:.1%}")
    rate, base_rate = (report.get("steps") or {}).get("samples_per_second"), (baseline.get("steps") or {}).get("samples_per_second")
    if rate and base_rate:
        detail += f"; samples/s {rate:.1f} vs {base_rate:.1f} ({rate / base_rate - 1:+.1%})"
    if change <= limit:
        return Check("max_regression", label, change, limit, PASS, detail)
    if change <= NOISE_Z * noise:
        return Check("max_regression", label, change, limit, PASS,
                     detail + f"; above the limit but within the noise (a change counts beyond {NOISE_Z:.0f} x "
                     f"±{noise:.1%}): run more rounds to decide")
    return Check("max_regression", label, change, limit, FAIL, detail)
