"""input.cpu, contended: the loop hardly waits for data, yet the input is the limit. On a machine
where worker processes and the training itself share the CPU (every CPU-only machine, and GPU hosts
whose cores are all busy), making batches takes cores the training needs: the workers keep up only
by slowing compute, and the cost shows as CPU, not as a wait.

Evidence: workers that wait for a core a large part of their time (runqueue), no idle core on the
machine, and a large share of the job's CPU spent making batches. That share is the input's cost:
with the input free, the whole CPU would go to training, so the speed-up is 1 / (1 - share)."""

from gpuprof.analysis.evidence import INPUT_BOUND
from gpuprof.analysis.rules import Finding, clamp, rounded, step_confidence
from gpuprof.analysis.rules.inputs import input_evidence

QUEUED = 0.2            # workers waiting for a core at least this share of their producing time
INPUT_CPU_SHARE = 0.3   # ... and making batches at least this share of the job's CPU


def input_cpu_share(ev):
    """The share of the job's CPU (over the measured steps) spent making batches, or None."""
    if not ev.producer_cores or not ev.cores_busy:
        return None
    return clamp(ev.producer_cores / ev.cores_busy)


def evaluate(ev):
    loader = ev.loader or {}
    if not loader.get("num_workers") or ev.wait_source != "dataloader" or ev.wait_share is None:
        return None
    if ev.wait_share >= INPUT_BOUND:
        return None          # a large visible wait: the ordinary input rules speak
    runnable, ratio = ev.producer_runnable_ratio, ev.producer_cpu_ratio
    if runnable is None or ratio is None:
        return None
    queued = runnable - ratio
    share = input_cpu_share(ev)
    share = max(share, ev.wait_share) if share is not None else None
    if queued < QUEUED or share is None or share < INPUT_CPU_SHARE or not ev.contended:
        return None
    confidence = step_confidence(ev) * (0.5 + 0.25 * clamp((queued - QUEUED) / 0.3)
                                        + 0.25 * clamp((share - INPUT_CPU_SHARE) / 0.4))
    evidence = dict(input_evidence(ev), contended=True, input_cpu_share=rounded(share),
                    producer_waiting_for_cpu=rounded(queued))
    workers = loader.get("num_workers")
    return Finding("input.cpu", share, confidence, evidence,
                   f"the DataLoader at {loader.get('where') or '?'} takes {share:.0%} of the job's CPU to make batches "
                   f"and its {workers} worker{'s wait' if workers != 1 else ' waits'} for a core {queued:.0%} of the "
                   f"time; the loop waits for data only {ev.wait_share:.0%} of each step, but compute runs on the "
                   "cores the workers leave")
