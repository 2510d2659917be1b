"""From evidence to a verdict: every rule speaks, the largest removable bottleneck wins, and
thin evidence gives a sampler-only guess with a low confidence that says so."""

from gpuprof.analysis.evidence import INPUT_BOUND, TRANSFER_NOTABLE, gather
from gpuprof.analysis.gpu_words import kernel_time
from gpuprof.analysis.rules import Finding, rounded
from gpuprof.analysis.rules import (compute, host_overhead, input_contended, input_cpu, input_disk, input_latency,
                                    transfer_h2d)

RULES = (input_cpu, input_disk, input_latency, input_contended, transfer_h2d, host_overhead, compute)
INPUT_IDS = ("input.cpu", "input.disk", "input.latency")
LABELS = {"input.cpu": "Input-bound", "input.disk": "Input-bound (disk)", "input.latency": "Input-bound (latency)",
          "transfer.h2d": "Transfer-bound", "compute": "Compute-bound", "host.overhead": "Host-bound",
          "comm": "Communication-bound"}


def no_verdict(why: str) -> dict:
    """The verdict of a run with nothing to judge: it names why, and nothing is advised."""
    return {"bottleneck": None, "share": None, "confidence": 0.0, "basis": "none", "evidence": {},
            "reason": why, "summary": f"No verdict: {why}."}


def classify(sections: dict, nothing_to_judge: str = None) -> dict:
    """`{"verdict": {...}, "findings": [...]}` for the report; `nothing_to_judge` (why there is
    nothing) gives the no-verdict verdict."""
    ev = gather(sections)
    if nothing_to_judge:
        return {"verdict": no_verdict(nothing_to_judge), "findings": [], "evidence": ev}
    if not (ev.steps or ev.attached) or ev.wait_share is None:
        verdict = _sampler_only(ev, sections)
        return {"verdict": verdict, "findings": [], "evidence": ev}
    findings = [f for f in (rule.evaluate(ev) for rule in RULES) if f is not None]
    if any(f.evidence.get("contended") for f in findings):
        # One input.cpu finding: the contended one says what the input costs (CPU, and its wait).
        findings = [f for f in findings if f.bottleneck != "input.cpu" or f.evidence.get("contended")]
    verdict = _choose(findings)
    if verdict is None:
        verdict = Finding("compute", 1.0 - (ev.wait_share or 0.0), 0.3, {"data_wait_share": rounded(ev.wait_share)},
                          "no other bottleneck stands out")
    # "compute" only ever states that nothing else is the limit: it is a verdict, never a side note.
    others = sorted((f for f in findings if f is not verdict and f.share >= 0.1 and f.bottleneck != "compute"),
                    key=lambda f: -f.share)
    out = verdict.to_dict()
    out["summary"] = summary(verdict)
    out["basis"] = "attached" if ev.attached else "probes"
    if ev.attached:
        out["caveat"] = "attached: sampled stacks, no probes (batch sizes, dtypes and copy sizes unknown)"
    elif ev.measured_steps < 20:
        out["summary"] += f" (only {ev.measured_steps} steps measured: treat as indicative)"
    return {"verdict": out, "findings": [f.to_dict() for f in others], "evidence": ev}


def _choose(findings):
    removable = [f for f in findings if (f.bottleneck in INPUT_IDS and f.share >= INPUT_BOUND)
                 or (f.evidence.get("contended") and f.share >= input_contended.CONTENDED_BOUND)
                 or (f.bottleneck == "transfer.h2d" and f.share >= TRANSFER_NOTABLE)]
    if removable:
        return max(removable, key=lambda f: f.share)
    for name in ("host.overhead", "compute"):
        for finding in findings:
            if finding.bottleneck == name:
                return finding
    return None


def summary(finding: Finding) -> str:
    label = LABELS.get(finding.bottleneck, finding.bottleneck)
    if finding.evidence.get("contended"):
        return f"Input-bound (contended): {finding.reason}."
    if finding.bottleneck in INPUT_IDS:
        return f"{label}: {finding.share:.0%} of each step waits on {finding.reason}."
    if finding.bottleneck == "compute":
        wait = finding.evidence.get("data_wait_share")
        if wait is None:
            tail = ""
        elif wait < 0.005:
            tail = "; steps almost never wait for data (under 1% of step time)"
        else:
            tail = f"; only {wait:.0%} of each step waits for data"
        return f"{label}: {finding.reason}{tail}."
    return f"{label}: {finding.reason}."


def _sampler_only(ev, sections) -> dict:
    """No training steps were seen (probes off, no torch, a launcher gpuprof cannot see into):
    a guess from the system figures alone, with a confidence to match."""
    io_busy = (ev.iowait or 0) > 0.2 or (ev.io_pressure or 0) > 0.3
    busy = ev.cores_busy or 0.0
    if ev.gpu and ev.gpu_util is not None:
        low = kernel_time(ev.gpu_util, ev.gpu_sm_active, only=True)
        if ev.gpu_util >= 0.7:
            name, conf, why = "compute", 0.45, kernel_time(ev.gpu_util, ev.gpu_sm_active)
        elif io_busy:
            name, conf, why = "input.disk", 0.3, f"{low} while the disk is the bottleneck of the machine"
        elif busy >= 0.8 * ev.cpu_count:
            name, conf, why = "input.cpu", 0.3, f"{low} while every core is busy"
        else:
            name, conf, why = "host.overhead", 0.25, f"{low} and the CPUs are not saturated"
        share = ev.gpu_util if name == "compute" else 1.0 - ev.gpu_util
    elif io_busy:
        name, conf, why, share = "input.disk", 0.3, f"the machine waits on I/O {max(ev.iowait or 0, ev.io_pressure or 0):.0%} of the time", None
    elif busy >= 0.5:
        name, conf, why, share = "compute", 0.2, f"the job keeps {busy:.1f} of {ev.cpu_count} cores busy; without step figures, preparing data and computing cannot be told apart", None
    else:
        name, conf, why, share = "input.latency", 0.15, f"the job is mostly idle ({busy:.1f} cores busy, little disk)", None
    reason = sections.get("probe_gap") or ("no training steps were observed" if ev.probes else "probes were off")
    evidence = {"gpu_util": rounded(ev.gpu_util), "cores_busy": rounded(busy), "cpu_count": ev.cpu_count,
                "iowait": rounded(ev.iowait), "io_pressure": rounded(ev.io_pressure)}
    if ev.gpu and ev.gpu_sm_active is not None:
        evidence["gpu_sm_active"] = rounded(ev.gpu_sm_active)
    return {
        "bottleneck": name, "share": rounded(share), "confidence": conf, "basis": "sampler",
        "evidence": evidence,
        "reason": why,
        "summary": f"{LABELS[name]} (a guess: {reason}, so only system figures were used): {why}.",
    }
