"""input.cpu: waiting for data that the CPU is still preparing.

Contended: the loop hardly waits for data, yet the input is the limit. On a machine
where worker processes and the training itself share the CPU (every CPU-only machine, and GPU hosts
whose cores are all busy), making batches takes cores the training needs: the workers keep up only
by slowing compute, and the cost shows as CPU, not as a wait.

Evidence: workers that wait for a core a large part of their time (runqueue), no idle core on the
machine, and either a large share of the job's CPU spent making batches, or the training's own
threads waiting for a core a large part of the time they want one (schedstat, sampled once a
second): the workers need little CPU in all, yet whenever they run, compute waits. The input's
cost is the larger of the two: the producers' share of the CPU, or the loop's wait plus the share
of the rest that compute spent waiting for a core; with the input free the speed-up is
1 / (1 - share). Where the job computes on a GPU, a training thread slowed by the workers costs the
steps only while the GPU idles: the cost is at most the share of the steps no kernel ran."""

from gpuprof.priors.verdicts import CONTENDED_VERDICT_FROM
from gpuprof.judge.verdict.bottleneck import BY_SHARE, Bottleneck
from gpuprof.judge.verdict.evidence import INPUT_BOUND, TRAINING_QUEUED, Evidence
from gpuprof.judge.verdict.rules import Finding, clamp, rounded, step_confidence
from gpuprof.judge.verdict.rules.inputs import (input_evidence, kind_margin, margin_confidence,
                                          waits_on, waits_on_producers, who)

ID = "input.cpu"

QUEUED = 0.2            # workers waiting for a core at least this share of their producing time
INPUT_CPU_SHARE = 0.3   # ... and making batches at least this share of the job's CPU
#: A contended input's cost from which it is the verdict (not a side note): lower than a visible
#: wait's INPUT_BOUND, since compute here is slowed by the input, not free of it (prior
#: input.cpu.contended-bound, with the program it was set on and the second that agrees).
CONTENDED_BOUND = CONTENDED_VERDICT_FROM.value
#: A contended input's confidence: the base, a part for how long the workers queue for a core (full
#: at QUEUED_SPAN past QUEUED) and one for the strength of the CPU share or the training threads'
#: wait (full at STRENGTH_SPAN past its bound).
CONTENDED_CONFIDENCE_BASE = 0.5
CONTENDED_CONFIDENCE_PER_QUEUE = 0.25
CONTENDED_CONFIDENCE_PER_STRENGTH = 0.25
QUEUED_SPAN = 0.3
STRENGTH_SPAN = 0.4
#: A visible wait's confidence: the base, rising by the span as the producers' CPU over wall rises by
#: BUSY_CPU_SPAN past BUSY_CPU (full at 85%).
CONFIDENCE_BASE = 0.55
CONFIDENCE_SPAN = 0.45
BUSY_CPU = 0.35
BUSY_CPU_SPAN = 0.5


def input_cpu_share(ev: Evidence) -> float | None:
    """The share of the job's CPU (over the measured steps) spent making batches, or None."""
    if not ev.producer_cores or not ev.cores_busy:
        return None
    return clamp(ev.producer_cores / ev.cores_busy)


def evaluate_contended(ev: Evidence):
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
    if queued < QUEUED or not ev.contended:
        return None
    by_producers = share is not None and share >= INPUT_CPU_SHARE
    training = ev.training_cpu_wait
    by_training = training is not None and training >= TRAINING_QUEUED
    if not by_producers and not by_training:
        return None
    waited = ev.wait_share + (1 - ev.wait_share) * training if by_training and training is not None else None
    cost = max(share or 0.0, waited or 0.0)
    if ev.gpu and ev.gpu_util is not None:
        # compute runs on the GPU: the training thread slowed by the workers costs the steps only
        # the time the GPU then idles
        cost = min(cost, max(0.0, 1.0 - ev.gpu_util))
    strength = max(clamp((share - INPUT_CPU_SHARE) / STRENGTH_SPAN) if by_producers and share is not None else 0.0,
                   clamp((training - TRAINING_QUEUED) / STRENGTH_SPAN) if by_training and training is not None else 0.0)
    confidence = step_confidence(ev) * (CONTENDED_CONFIDENCE_BASE
                                        + CONTENDED_CONFIDENCE_PER_QUEUE * clamp((queued - QUEUED) / QUEUED_SPAN)
                                        + CONTENDED_CONFIDENCE_PER_STRENGTH * strength)
    evidence = dict(input_evidence(ev), contended=True, input_cpu_share=rounded(cost),
                    producer_waiting_for_cpu=rounded(queued))
    if training is not None:
        evidence["training_waiting_for_cpu"] = rounded(training)
    workers = loader.get("num_workers")
    where = loader.get("where") or "?"
    they = f"its {workers} worker{'s wait' if workers != 1 else ' waits'} for a core {queued:.0%} of the time"
    if by_producers and share is not None and (waited is None or share >= waited):
        reason = (f"the DataLoader at {where} takes {share:.0%} of the job's CPU to make batches and {they}; the loop "
                  f"waits for data only {ev.wait_share:.0%} of each step, but compute runs on the cores the workers "
                  "leave")
    else:
        reason = (f"while the DataLoader at {where} makes batches ({they}), the training's own threads wait for a "
                  f"core {training:.0%} of the time they want one: compute slows although the loop waits for data "
                  f"only {ev.wait_share:.0%} of each step, so the input costs about {cost:.0%} of each step")
    if ev.gpu and ev.gpu_util is not None:
        reason += f"; the GPU idled {1 - ev.gpu_util:.0%} of the steps"
    return Finding(ID, cost, confidence, evidence, reason)


def job_alone_wait(ev: Evidence):
    """On a machine where other processes held notable cores, the data wait's share of a step
    without the time the training threads waited for the cores those processes held, or None.

    A busy machine slows compute more than the input: each op of an intra-op-parallel step waits for
    its slowest thread, and a thread that another process keeps off a core holds up the op, while a
    single-threaded worker only runs slower. The training threads' wait for a core (schedstat) is
    split between the job's producers and the other processes by the cores each kept busy; the
    others' part is taken out of the compute time, as it is no work of the job's."""
    others, wanted = ev.other_cores, ev.training_cpu_wait
    if not others or not wanted or ev.wait_share is None:
        return None
    by_others = others / (others + (ev.producer_cores or 0.0))
    compute = max(1.0 - ev.wait_share - (ev.copy_share or 0.0), 0.0)
    own_compute = compute * (1.0 - wanted * by_others)
    alone = ev.wait_share / (ev.wait_share + own_compute) if ev.wait_share + own_compute > 0 else None
    return alone if alone is not None and alone > ev.wait_share else None


def evaluate(ev: Evidence):
    found = waits_on_producers(ev, "cpu")
    if found is None:
        return None
    wait, ratio = found
    clarity = clamp((ratio - BUSY_CPU) / BUSY_CPU_SPAN)
    confidence = step_confidence(ev) * (CONFIDENCE_BASE + CONFIDENCE_SPAN * clarity)
    confidence *= margin_confidence(kind_margin(ev))   # near the boundary of two kinds: less sure
    state = "CPU-bound"
    if ev.no_idle_core:
        state = f"CPU-bound with every core in use ({ev.idle_cores:.1f} of {ev.cpu_count} idle)"
    elif ev.contended:
        state = (f"CPU-bound, with threads waiting for a core {ev.cpu_pressure:.0%} of the time though "
                 f"{ev.idle_cores:.1f} of {ev.cpu_count} cores are idle")
    alone = job_alone_wait(ev)
    if alone is None:
        return Finding(ID, wait, confidence, input_evidence(ev), who(ev, state))
    evidence = dict(input_evidence(ev), wait_share_job_alone=rounded(alone),
                    training_waiting_for_cpu=rounded(ev.training_cpu_wait))
    reason = (f"{who(ev, state)}; other processes held {ev.other_cores:.1f} of {ev.cpu_count} cores and the "
              f"training's threads waited for a core {ev.training_cpu_wait:.0%} of the time they wanted one: "
              f"without the time those processes took, about {alone:.0%} of each step would be the wait")
    return Finding(ID, alone, confidence, evidence, reason)


def wins(finding) -> bool:
    """A visible wait from INPUT_BOUND; a contended input's cost from CONTENDED_BOUND."""
    return finding.share >= INPUT_BOUND or bool(finding.evidence.get("contended") and finding.share >= CONTENDED_BOUND)


BOTTLENECK = Bottleneck(id=ID, label="Input-bound", tier=BY_SHARE, rules=(evaluate, evaluate_contended),
                        wins=wins, words=waits_on)
