"""What the producers of the data were doing while the training loop waited: shared by the three
input rules so that exactly one of them claims a given wait."""

from gpuprof.analysis.evidence import CPU_BOUND_RATIO, CPU_CONTENDED_RATIO, DISK_RATE, USER_BOUND_RATIO
from gpuprof.analysis.rules import rounded


def producer_kind(ev):
    """'disk', 'cpu' or 'latency' (None without any producer figure)."""
    ratio = ev.producer_cpu_ratio
    if ratio is None:
        return None
    user = ev.producer_user_ratio if ev.producer_user_ratio is not None else ratio
    reads_disk = (ev.producer_disk_rate or 0.0) >= DISK_RATE and \
        (ev.producer_real_read_ratio is None or ev.producer_real_read_ratio >= 0.3)
    # Reading costs kernel time (and, on a fast or virtual disk, much of it): a producer that
    # reads from the disk and spends little user time preparing is waiting on storage.
    if reads_disk and (ratio < CPU_BOUND_RATIO or user < USER_BOUND_RATIO):
        return "disk"
    # Waiting for a CPU is being CPU-bound too: oversubscribed workers run only part of the time.
    runnable = ev.producer_runnable_ratio if ev.producer_runnable_ratio is not None else ratio
    if runnable >= CPU_BOUND_RATIO or (ratio >= CPU_CONTENDED_RATIO and ev.contended):
        return "cpu"
    return "latency"


def input_evidence(ev) -> dict:
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
    }


def who(ev, state: str) -> str:
    """'the DataLoader at train.py:42, whose single process is <state>', '... whose 4 workers are <state>'."""
    if ev.wait_source == "before-first-forward" or not ev.loader:
        return f"the batch preparation before each forward (no DataLoader), which is {state}"
    where = ev.loader.get("where") or "?"
    workers = ev.loader.get("num_workers") or 0
    if not workers:
        return f"the DataLoader at {where}, whose single process is {state}"
    return f"the DataLoader at {where}, whose {workers} worker{'s are' if workers != 1 else ' is'} {state}"
