"""Each thread's CPU and run-queue wait in the job's Python processes, read from /proc at the start
and the end of an attach: the training thread's own CPU is what tells a batch made on a CPU from
one waited for (its stack alone cannot)."""

import os

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def snapshot(pids, proc: str = "/proc") -> dict:
    """{tid: {"pid", "run_ns", "wait_ns", "user_s", "system_s"}} for every thread of `pids`."""
    out = {}
    for pid in pids:
        try:
            tids = os.listdir(f"{proc}/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            reading = _thread(proc, pid, tid)
            if reading is not None:
                out[int(tid)] = reading
    return out


def _thread(proc: str, pid: int, tid: str):
    base = f"{proc}/{pid}/task/{tid}"
    try:
        with open(f"{base}/schedstat", "rb") as handle:
            run_ns, wait_ns = (int(v) for v in handle.read().split()[:2])
        with open(f"{base}/stat", "rb") as handle:
            stat = handle.read()
        fields = stat[stat.rfind(b")") + 2:].split()
        return {"pid": pid, "run_ns": run_ns, "wait_ns": wait_ns,
                "user_s": int(fields[11]) / _CLK_TCK, "system_s": int(fields[12]) / _CLK_TCK}
    except (OSError, ValueError, IndexError):
        return None


def grown(before: dict, after: dict) -> dict:
    """{str(tid): {"pid", "run_s", "wait_s", "user_s", "system_s"}} used between two snapshots; a
    thread born meanwhile counts from zero, one that ended meanwhile is not known."""
    out = {}
    for tid, end in after.items():
        start = before.get(tid) if before.get(tid, {}).get("pid") == end["pid"] else None
        start = start or {"run_ns": 0, "wait_ns": 0, "user_s": 0.0, "system_s": 0.0}
        out[str(tid)] = {"pid": end["pid"],
                         "run_s": round(max(end["run_ns"] - start["run_ns"], 0) / 1e9, 4),
                         "wait_s": round(max(end["wait_ns"] - start["wait_ns"], 0) / 1e9, 4),
                         "user_s": round(max(end["user_s"] - start["user_s"], 0.0), 3),
                         "system_s": round(max(end["system_s"] - start["system_s"], 0.0), 3)}
    return out
