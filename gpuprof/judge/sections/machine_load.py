"""Other processes on the machine during the measured steps: the cores they kept busy, from the
machine's CPU columns less the job's own. A run beside them measures a slower machine than the
job will get on a quiet one — its waits and shares shift, and a gate or a comparison would judge it
on time the job did not cause — so the report says how busy the others were, and when that is
notable the verdict says so and its confidence is lowered. Pure: reads the system record."""

#: Other processes' cores worth saying beside the verdict (and calling a gated or compared run
#: disturbed): at least half a core, and a quarter of the machine's cores.
NOTABLE_MIN_CORES = 0.5
NOTABLE_CORE_SHARE = 0.25
#: The verdict's confidence is scaled by the share of the machine left to the job, at most this far.
CONFIDENCE_FLOOR = 0.5
CORES_SLACK = 1e-9      # float error in the cores' sums: others exactly at the job's spare cores do not encroach


def notable(other_cores, cpu_count) -> bool:
    """Other processes held enough of the machine to change what a run measures."""
    return other_cores is not None and other_cores >= max(NOTABLE_MIN_CORES, NOTABLE_CORE_SHARE * (cpu_count or 1))


def machine_during(report) -> dict:
    """What a report's system summary says the machine did over its run: cores other processes kept
    busy (the machine's busy share of its cores less the job's own), steal, disk reads, and what the
    job itself read from disk. The cores are the report's `system.others` (over the measured steps)
    where it has them, so that `try`, `compare` and the report give one figure; for a report saved
    before `system.others`, the run's averages."""
    system = (report or {}).get("system") or {}
    cpu = system.get("cpu") or {}
    job = system.get("job") or {}
    cores = system.get("cpu_count") or 1
    others = system.get("others") or {}
    busy = None
    if cpu.get("idle") is not None:
        busy = max(0.0, 1.0 - (cpu.get("idle") or 0.0) - (cpu.get("iowait") or 0.0)) * cores
    other = max(0.0, busy - (job.get("cores_busy") or 0.0)) if busy is not None else None
    if others.get("other_cores") is not None:
        other, cores = others["other_cores"], others.get("cpu_count") or cores
    return {"other_cores": round(other, 2) if other is not None else None, "cpu_count": cores,
            "steal": cpu.get("steal"), "disk_read_mb_s": (system.get("disk") or {}).get("read_mb_s"),
            "job_read_bytes": job.get("read_bytes")}


def others_during(system_record: dict, start, end) -> dict | None:
    """{"other_cores", "cpu_count", "share", "notable", "over"}: the mean cores busy outside the job
    over the samples inside [start, end] (the measured steps), or over the whole run when fewer than
    two samples fall there; None without the machine's CPU columns."""
    columns = (system_record or {}).get("columns") or {}
    allowed = system_record.get("cpu_count") or 1
    # The machine's CPU columns count every core of the host, the job's limit (affinity, quota) aside.
    cores = ((system_record.get("cpu_limit") or {}).get("host_cpus")) or allowed
    samples = _samples(columns, cores, start, end)
    over = "steps"
    if len(samples) < 2:
        samples, over = _samples(columns, cores, None, None), "run"
    span = sum(dt for dt, _ in samples)
    if not samples or span <= 0:
        return None
    other = sum(dt * value for dt, value in samples) / span
    # Under a limit, others count only as far as they reach into the cores the job may use.
    encroach = other > cores - allowed + CORES_SLACK
    out = {"other_cores": round(other, 2), "cpu_count": cores, "share": round(other / cores, 3),
           "notable": notable(other, cores) and encroach, "over": over}
    if allowed < cores:
        out["job_cores"] = allowed          # the job's limit: the host's cores are not all its own
    return out


def _samples(columns: dict, cores: int, start, end) -> list:
    """(dt, cores busy outside the job) per sample in the window (all samples without one)."""
    times, dts = columns.get("t") or [], columns.get("dt") or []
    idle, iowait = columns.get("cpu_idle") or [], columns.get("cpu_iowait") or []
    users, systems = columns.get("job_user_s") or [], columns.get("job_system_s") or []
    out = []
    for i, dt in enumerate(dts):
        t = times[i] if i < len(times) else None
        if not dt or i >= len(idle) or idle[i] is None:
            continue
        if start is not None and end is not None and (t is None or t - dt < start or t > end):
            continue
        busy = max(0.0, 1.0 - idle[i] - ((iowait[i] if i < len(iowait) else 0.0) or 0.0)) * cores
        job = ((users[i] if i < len(users) else 0.0) or 0.0) + ((systems[i] if i < len(systems) else 0.0) or 0.0)
        out.append((dt, max(0.0, busy - job / dt)))
    return out


def busy_words(others: dict) -> str:
    """"other processes kept 1.2 of 2 cores busy", as every output says it (the host's cores under a
    limit)."""
    host = "the host's " if others.get("job_cores") else ""
    return f"other processes kept {others['other_cores']:.1f} of {host}{others['cpu_count']} cores busy"


def with_busy_machine(verdict: dict, others: dict | None) -> dict:
    """The verdict with the busy machine said beside it and its confidence lowered, when other
    processes held a notable share of the cores during the steps; as it was otherwise."""
    if not others or not others.get("notable") or not verdict.get("bottleneck"):
        return verdict
    left = max(CONFIDENCE_FLOOR, 1.0 - others["share"])
    note = (f"{busy_words(others)} during the "
            f"{'measured steps' if others['over'] == 'steps' else 'run'}: this run measured a busier machine than "
            "the job alone would get, so its shares and times are less certain")
    out = dict(verdict, busy_machine=note)
    if out.get("confidence") is not None:
        out["confidence"] = round(out["confidence"] * left, 2)
    return out
