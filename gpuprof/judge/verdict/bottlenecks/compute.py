"""compute: the device is the limit; the input pipeline keeps up.

On a GPU the figure is NVML's utilisation over the measured steps: the share of time at least one
kernel ran, not how many SMs it kept busy (GPM's SM activity says that, where the GPU has it)."""

import math

from gpuprof.judge.verdict.bottleneck import FALLBACK, Bottleneck
from gpuprof.judge.verdict.evidence import INPUT_BOUND, Evidence
from gpuprof.judge.verdict.input_cost import input_cpu_cost, speedup
from gpuprof.judge.verdict.rules import Finding, clamp, rounded, step_confidence

ID = "compute"

GPU_UTIL_COMPUTE = 0.4      # NVML utilisation from which the GPU may be the limit ...
GPU_UTIL_SPAN = 0.5         # ... counting as ever busier over this much above it (fully at 90%)
#: Confidence: the base, plus a part for how busy the device is and one for how calm the input is.
CONFIDENCE_BASE = 0.4
CONFIDENCE_PER_BUSY = 0.3
CONFIDENCE_PER_CALM = 0.3
NO_WAIT_CONFIDENCE = 0.3    # no data-wait figure: compute is the verdict only by elimination


def evaluate(ev: Evidence):
    wait = ev.wait_share or 0.0
    copy = ev.copy_share or 0.0
    share = clamp(1.0 - wait - copy)
    if ev.gpu:
        if ev.gpu_util is None or ev.gpu_util < GPU_UTIL_COMPUTE:
            return None
        busy = clamp((ev.gpu_util - GPU_UTIL_COMPUTE) / GPU_UTIL_SPAN)
        device = f"a kernel was running on the GPU {ev.gpu_util:.0%} of the time{_sm_activity(ev)}"
    else:
        busy = clamp((ev.cores_busy or 0.0) / 1.0)
        device = f"{_who_keeps(ev)} (no GPU: the CPU is the device)"
    calm_input = clamp((INPUT_BOUND - wait) / INPUT_BOUND)
    confidence = (step_confidence(ev)
                  * (CONFIDENCE_BASE + CONFIDENCE_PER_BUSY * busy + CONFIDENCE_PER_CALM * calm_input)
                  if ev.wait_share is not None else NO_WAIT_CONFIDENCE)
    # The wait unrounded: words() rounds it once, as every output rounds the steps' data wait.
    evidence = {"data_wait_share": ev.wait_share, "gpu_util": rounded(ev.gpu_util),
                "cores_busy": rounded(ev.cores_busy), "cpu_count": ev.cpu_count, "copy_share": rounded(ev.copy_share)}
    if ev.gpu_sm_active is not None:
        evidence["gpu_sm_active"] = rounded(ev.gpu_sm_active)
    evidence.update(_input_cost_evidence(ev))
    return Finding(ID, share, confidence, evidence, f"data is ready in time and {device}")


def _input_cost_evidence(ev: Evidence) -> dict:
    """The input's CPU cost, where its producers take a notable share of the cores the step uses
    (gpuprof.judge.verdict.input_cost): the advice reads it to offer the fixes that shrink the input."""
    cost = input_cpu_cost(ev)
    if cost is None:
        return {}
    return {"input_cpu_share": rounded(cost["share"]), "producer_cores": rounded(cost["producer_cores"]),
            "input_cost_share": rounded(cost["saved"]),
            "input_free_low": math.floor(speedup(cost["saved_low"]) * 100) / 100,
            "input_free_high": math.ceil(speedup(cost["saved_high"]) * 100) / 100}


def _sm_activity(ev: Evidence) -> str:
    """GPM's SM activity beside NVML's utilisation, where the GPU has GPM."""
    if ev.gpu_sm_active is None:
        return ""
    return f" ({ev.gpu_sm_active:.0%} of its SMs active, GPM)"


def _who_keeps(ev: Evidence) -> str:
    """Whose CPU the figure is: the training process's own where its threads were read, else the
    job's, naming the workers that share it (the job's figure counts them too)."""
    if ev.training_cores is not None:
        return f"the training process keeps {ev.training_cores:.1f} of {ev.cpu_count} cores busy"
    workers = (ev.loader or {}).get("num_workers") or 0
    if workers:
        return (f"the job (the training process and {workers} DataLoader worker{'s' if workers != 1 else ''}) keeps "
                f"{ev.cores_busy or 0:.1f} of {ev.cpu_count} cores busy")
    return f"the training process keeps {ev.cores_busy or 0:.1f} of {ev.cpu_count} cores busy"


def words(label: str, finding) -> str:
    """The compute verdict names how rarely the steps waited for data: the reason it is compute."""
    wait = finding.evidence.get("data_wait_share")
    if wait is None:
        tail = ""
    elif f"{wait:.0%}" == "0%":
        tail = "; steps almost never wait for data (under 1% of step time)"
    else:
        tail = f"; only {wait:.0%} of each step waits for data"
    return f"{label}: {finding.reason}{tail}.{input_cost_words(finding.evidence)}"


def input_cost_words(evidence: dict) -> str:
    """What the input costs although no step waits for it: the producers' cores, against the
    cores the step uses, and the speed-up the input made free would buy ("" where it is small)."""
    if evidence.get("input_cpu_share") is None:
        return ""
    taken = (f" Yet making batches is not free: the DataLoader's workers use {evidence['producer_cores']:.1f} of the "
             f"{evidence['cores_busy']:.1f} cores the job keeps busy ({evidence['input_cpu_share']:.0%})")
    if evidence.get("gpu_util") is not None:
        whom = ", and the thread that launches the GPU's kernels waits for a core while they run"
    else:
        whom = ", cores the training's own threads would otherwise compute on"
    return (f"{taken}{whom}; with the input free, steps would run an estimated "
            f"{evidence['input_free_low']:.2f}–{evidence['input_free_high']:.2f}x faster.")


BOTTLENECK = Bottleneck(id=ID, label="Compute-bound", tier=FALLBACK, rules=(evaluate,), words=words)
