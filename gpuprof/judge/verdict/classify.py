"""From evidence to a verdict: every rule speaks, the largest removable bottleneck wins, and
thin evidence gives a sampler-only guess with a low confidence that says so. How each bottleneck
wins is declared with it (gpuprof.judge.verdict.bottlenecks): leading ones (a memory failure, a rank
waiting on the others) replace the step verdict; then the removable ones by share; then the
fallbacks in registry order."""

from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.verdict.bottleneck import BY_SHARE, FALLBACK, LEADS
from gpuprof.judge.verdict.evidence import MIN_STEPS, gather
from gpuprof.judge.verdict.gpu_words import kernel_time
from gpuprof.judge.verdict.rules import Finding, rounded

FALLBACK_CONFIDENCE = 0.3   # compute by elimination: no rule's finding stood out
FINDING_LISTED = 0.1        # a finding's share from which it is listed beside the verdict


def no_verdict(why: str) -> dict:
    """The verdict of a run with nothing to judge: it names why, and nothing is advised."""
    return {"bottleneck": None, "share": None, "confidence": 0.0, "basis": "none", "evidence": {},
            "reason": why, "summary": f"No verdict: {why}."}


def classify(sections: dict, nothing_to_judge: str = None, steps_judged: dict = None) -> dict:
    """`{"verdict": {...}, "findings": [...], "evidence": ...}` for the report, its verdict final:
    a leading bottleneck, where one's rule fires, replaces the step verdict. `nothing_to_judge`
    (why there is nothing) gives the no-verdict step verdict; `steps_judged`, a step verdict
    already reached (a distributed job's, from its ranks)."""
    judged = steps_judged or _judge_steps(sections, nothing_to_judge)
    for bottleneck in bottlenecks.in_tier(LEADS):
        verdict = bottleneck.leads(sections, judged["verdict"])
        if verdict is not None:
            return dict(judged, verdict=verdict)
    return judged


def _judge_steps(sections: dict, nothing_to_judge: str = None) -> dict:
    ev = gather(sections)
    if nothing_to_judge:
        return {"verdict": no_verdict(nothing_to_judge), "findings": [], "evidence": ev}
    if not (ev.steps or ev.attached) or ev.wait_share is None:
        return {"verdict": _sampler_only(ev, sections), "findings": [], "evidence": ev}
    findings = [f for f in (rule(ev) for rule in bottlenecks.rules()) if f is not None]
    if any(f.evidence.get("contended") for f in findings):
        # One input.cpu finding: the contended one says what the input costs (CPU, and its wait).
        findings = [f for f in findings
                    if f.bottleneck != bottlenecks.INPUT_CPU.id or f.evidence.get("contended")]
    verdict = _choose(findings)
    if verdict is None:
        verdict = Finding(bottlenecks.COMPUTE.id, 1.0 - (ev.wait_share or 0.0), FALLBACK_CONFIDENCE,
                          {"data_wait_share": rounded(ev.wait_share)}, "no other bottleneck stands out")
    # A fallback only ever states that nothing else is the limit: it is a verdict, never a side note.
    others = sorted((f for f in findings if f is not verdict and f.share >= FINDING_LISTED
                     and f.bottleneck != bottlenecks.COMPUTE.id), key=lambda f: -f.share)
    out = verdict.to_dict()
    out["summary"] = summary(verdict)
    out["basis"] = "attached" if ev.attached else "probes"
    if ev.attached:
        out["caveat"] = "attached: sampled stacks, no probes (batch sizes, dtypes and copy sizes unknown)"
    elif ev.measured_steps < MIN_STEPS:
        out["summary"] += f" (only {ev.measured_steps} steps measured: treat as indicative)"
    return {"verdict": out, "findings": [f.to_dict() for f in others], "evidence": ev}


def _choose(findings):
    """The largest removable finding that clears its bound; else the first fallback found."""
    removable = [f for f in findings if _declared(f).tier == BY_SHARE and _declared(f).wins(f)]
    if removable:
        return max(removable, key=lambda f: f.share)
    for bottleneck in bottlenecks.in_tier(FALLBACK):
        for finding in findings:
            if finding.bottleneck == bottleneck.id:
                return finding
    return None


def _declared(finding):
    return bottlenecks.get(finding.bottleneck)


def summary(finding: Finding) -> str:
    return _declared(finding).summary(finding)


#: A guess from the system's figures alone (no training steps seen): where each figure decides ...
IOWAIT_BUSY = 0.2           # the machine's iowait share from which its disk is busy
IO_PRESSURE_BUSY = 0.3      # ... or its I/O pressure (some)
GPU_UTIL_BUSY = 0.7         # NVML utilisation from which the GPU is the guess
CORES_SATURATED = 0.8       # share of the cores the job keeps busy from which every core counts as in use
CORES_COMPUTING = 0.5       # without a GPU: cores kept busy from which compute is the guess
#: ... and how sure each guess is: none is sure, the busy GPU least unsure.
GPU_GUESS_CONFIDENCE = 0.45
DISK_GUESS_CONFIDENCE = 0.3
CPU_GUESS_CONFIDENCE = 0.3
HOST_GUESS_CONFIDENCE = 0.25
COMPUTE_GUESS_CONFIDENCE = 0.2
IDLE_GUESS_CONFIDENCE = 0.15


def _sampler_only(ev, sections) -> dict:
    """No training steps were seen (probes off, no torch, a launcher gpuprof cannot see into):
    a guess from the system figures alone, with a confidence to match."""
    io_busy = (ev.iowait or 0) > IOWAIT_BUSY or (ev.io_pressure or 0) > IO_PRESSURE_BUSY
    busy = ev.cores_busy or 0.0
    if ev.gpu and ev.gpu_util is not None:
        low = kernel_time(ev.gpu_util, ev.gpu_sm_active, only=True)
        if ev.gpu_util >= GPU_UTIL_BUSY:
            name, conf, why = bottlenecks.COMPUTE.id, GPU_GUESS_CONFIDENCE, kernel_time(ev.gpu_util, ev.gpu_sm_active)
        elif io_busy:
            name, conf, why = bottlenecks.INPUT_DISK.id, DISK_GUESS_CONFIDENCE, f"{low} while the disk is the bottleneck of the machine"
        elif busy >= CORES_SATURATED * ev.cpu_count:
            name, conf, why = bottlenecks.INPUT_CPU.id, CPU_GUESS_CONFIDENCE, f"{low} while every core is busy"
        else:
            name, conf, why = bottlenecks.HOST_OVERHEAD.id, HOST_GUESS_CONFIDENCE, f"{low} and the CPUs are not saturated"
        share = ev.gpu_util if name == bottlenecks.COMPUTE.id else 1.0 - ev.gpu_util
    elif io_busy:
        name, conf, why, share = bottlenecks.INPUT_DISK.id, DISK_GUESS_CONFIDENCE, f"the machine waits on I/O {max(ev.iowait or 0, ev.io_pressure or 0):.0%} of the time", None
    elif busy >= CORES_COMPUTING:
        name, conf, why, share = bottlenecks.COMPUTE.id, COMPUTE_GUESS_CONFIDENCE, f"the job keeps {busy:.1f} of {ev.cpu_count} cores busy; without step figures, preparing data and computing cannot be told apart", None
    else:
        name, conf, why, share = bottlenecks.INPUT_LATENCY.id, IDLE_GUESS_CONFIDENCE, f"the job is mostly idle ({busy:.1f} cores busy, little disk)", None
    reason = sections.get("probe_gap") or ("no training steps were observed" if ev.probes else "probes were off")
    evidence = {"gpu_util": rounded(ev.gpu_util), "cores_busy": rounded(busy), "cpu_count": ev.cpu_count,
                "iowait": rounded(ev.iowait), "io_pressure": rounded(ev.io_pressure)}
    if ev.gpu and ev.gpu_sm_active is not None:
        evidence["gpu_sm_active"] = rounded(ev.gpu_sm_active)
    return {
        "bottleneck": name, "share": rounded(share), "confidence": conf, "basis": "sampler",
        "evidence": evidence,
        "reason": why,
        "summary": f"{bottlenecks.get(name).label} (a guess: {reason}, so only system figures were used): {why}.",
    }
