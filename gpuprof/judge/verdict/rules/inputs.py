"""What the producers of the data were doing while the training loop waited: shared by the three
input rules so that exactly one of them claims a given wait."""

from gpuprof.judge.verdict.evidence import DISK_RATE, INPUT_NOTABLE, Evidence
from gpuprof.judge.verdict.rules import clamp, rounded

#: A producer reads the disk where at least this share of the bytes it read came from the device
#: (the rest from the page cache).
REAL_READ_SHARE = 0.3
#: A verdict's confidence by how far the winning part of the time leads the next: the base at a tie,
#: rising by the span to full at a lead of MARGIN_FULL.
MARGIN_CONFIDENCE_BASE = 0.6
MARGIN_CONFIDENCE_SPAN = 0.4
MARGIN_FULL = 0.3


def producer_split(ev: Evidence):
    """How the producers' time divides, as shares of their wall time: `reading` (kernel time and
    blocked time of a producer that reads real disk bytes), `computing` (CPU work, its own and, while
    it is blocked, that of its process's other threads: torch's intra-op threads doing its tensor
    work), `waiting_for_cpu` (runnable, no core free) and `other` (blocked on something that is not
    the disk: a remote store, a lock, a sleep). None without producer figures."""
    ratio = ev.producer_cpu_ratio
    if ratio is None:
        return None
    user = ev.producer_user_ratio if ev.producer_user_ratio is not None else ratio
    kernel = max(ratio - user, 0.0)
    queued = max((ev.producer_runnable_ratio if ev.producer_runnable_ratio is not None else ratio) - ratio, 0.0)
    blocked = max(1.0 - ratio - queued, 0.0)
    helped = min(blocked, ev.producer_helped_ratio or 0.0)    # blocked while its own helpers computed
    blocked -= helped
    reads_disk = (ev.producer_disk_rate or 0.0) >= DISK_RATE and \
        (ev.producer_real_read_ratio is None or ev.producer_real_read_ratio >= REAL_READ_SHARE)
    if reads_disk:
        return {"reading": kernel + blocked, "computing": user + helped, "waiting_for_cpu": queued, "other": 0.0}
    return {"reading": 0.0, "computing": ratio + helped, "waiting_for_cpu": queued, "other": blocked}


def producer_kind(ev: Evidence):
    """'disk', 'cpu' or 'latency' (None without any producer figure): whichever part of the
    producers' time is largest. Waiting for a CPU counts as CPU-bound (oversubscribed producers run
    only part of the time). Deciding by the larger part keeps one program's verdict stable where
    fixed thresholds flipped with small changes in user time."""
    split = producer_split(ev)
    if split is None:
        return None
    parts = {"disk": split["reading"], "cpu": split["computing"] + split["waiting_for_cpu"],
             "latency": split["other"]}
    return max(parts, key=lambda k: parts[k])


def waits_on_producers(ev: Evidence, kind: str):
    """(the share of each step that waits, the producers' CPU over wall) where that share is notable
    and the producers are of this kind ('disk', 'cpu' or 'latency'); None otherwise: the guard each
    input rule starts with."""
    wait, ratio = ev.wait_share, ev.producer_cpu_ratio
    if wait is None or wait < INPUT_NOTABLE or ratio is None or producer_kind(ev) != kind:
        return None
    return wait, ratio


def kind_margin(ev: Evidence) -> float:
    """How far the winning part of the producers' time is ahead of the next (0..1): confidence
    falls near the boundary."""
    split = producer_split(ev)
    if split is None:
        return 0.0
    parts = sorted([split["reading"], split["computing"] + split["waiting_for_cpu"], split["other"]], reverse=True)
    return parts[0] - parts[1]


def margin_confidence(margin: float) -> float:
    """The factor a verdict's confidence takes from its part's lead over the next (0..1): near the
    boundary of two kinds, less sure."""
    return MARGIN_CONFIDENCE_BASE + MARGIN_CONFIDENCE_SPAN * clamp(margin / MARGIN_FULL)


def input_evidence(ev: Evidence) -> dict:
    loader = ev.loader or {}
    return {
        "data_wait_share": rounded(ev.wait_share),
        "data_wait_source": ev.wait_source,
        "producer_cpu_over_wall": rounded(ev.producer_cpu_ratio),
        "producer_user_cpu_over_wall": rounded(ev.producer_user_ratio),
        "producer_cpu_or_waiting_for_cpu_over_wall": rounded(ev.producer_runnable_ratio),
        "producer_disk_mb_s": rounded((ev.producer_disk_rate or 0.0) / 1e6, 2) if ev.producer_disk_rate is not None else None,
        "producer_cores": rounded(ev.producer_cores),
        "num_workers": loader.get("num_workers"),
        "where": loader.get("where"),
        "cores_busy": rounded(ev.cores_busy),
        "cpu_count": ev.cpu_count,
        "machine_idle": rounded(ev.machine_idle),
        "iowait": rounded(ev.iowait),
        "io_pressure": rounded(ev.io_pressure),
        "cpu_pressure": rounded(ev.cpu_pressure),
        "producer_time_split": {k: rounded(v) for k, v in (producer_split(ev) or {}).items()} or None,
    }


def who(ev: Evidence, state: str) -> str:
    """'the DataLoader at train.py:42, whose single process is <state>', '... whose 4 workers are <state>'."""
    if ev.wait_source == "sampled":
        return (f"the batch construction inside each step, in {ev.data_where or 'host code'} (sampled; no "
                f"DataLoader), which is {state}")
    if ev.wait_source == "before-first-forward" or not ev.loader:
        return f"the batch preparation before each forward (no DataLoader), which is {state}"
    where = ev.loader.get("where") or "?"
    workers = ev.loader.get("num_workers") or 0
    if not workers:
        return f"the DataLoader at {where}, whose single process is {state}"
    return f"the DataLoader at {where}, whose {workers} worker{'s are' if workers != 1 else ' is'} {state}"


def waits_on(label: str, finding) -> str:
    """An input verdict's words: the share of each step that waits, and on whom; a contended input
    costs CPU rather than a wait, and says so."""
    if finding.evidence.get("contended"):
        return f"Input-bound (contended): {finding.reason}."
    if finding.evidence.get("wait_share_job_alone") is not None:     # a busy machine: the wait as measured
        return f"{label}: {finding.evidence['data_wait_share']:.0%} of each step waits on {finding.reason}."
    return f"{label}: {finding.share:.0%} of each step waits on {finding.reason}."
