"""Counters that say how a job's memory ended: the kernel's out-of-memory kills (machine-wide in
/proc/vmstat, and the job's own cgroup where readable, v2 or v1) and pages swapped in and out.
Read when sampling starts and when the run is saved; the report uses the difference."""


def _vmstat() -> dict:
    out = {}
    try:
        with open("/proc/vmstat", "rb") as handle:
            for line in handle:
                name, _, value = line.partition(b" ")
                if name in (b"oom_kill", b"pswpin", b"pswpout"):
                    out[name.decode()] = int(value)
    except (OSError, ValueError):
        pass
    return out


def _cgroup_oom_kills():
    """oom_kill of this process's memory cgroup (the job's, which inherits it), or None."""
    try:
        with open("/proc/self/cgroup") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2) if line.count(":") >= 2 else ("", "", "")
        if controllers == "":
            candidate = f"/sys/fs/cgroup{path}/memory.events"
        elif "memory" in controllers.split(","):
            candidate = f"/sys/fs/cgroup/memory{path}/memory.oom_control"
        else:
            continue
        try:
            with open(candidate) as handle:
                for entry in handle:
                    name, _, value = entry.partition(" ")
                    if name == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def read_counters() -> dict:
    counters = _vmstat()
    counters["cgroup_oom_kill"] = _cgroup_oom_kills()
    return counters


def difference(before: dict, after: dict) -> dict:
    """after - before for every counter both have (None where either lacks it)."""
    keys = ("oom_kill", "cgroup_oom_kill", "pswpin", "pswpout")
    return {k: (after[k] - before[k]) if before.get(k) is not None and after.get(k) is not None else None
            for k in keys}
