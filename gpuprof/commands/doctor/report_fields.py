"""Every field of a `gpuprof.report/1` the scenario runner reads, in one place: the report's GPU
parts are still growing, so each reader tolerates a missing section and each name is spelt once."""

from gpuprof.commands.doctor.cuda_order import same_device

SM_ACTIVITY = ("sm_active", "sm_activity")                 # the GPM figure of a GPU entry, 0..1
WHOLE_RUN_UTIL = ("util_gpu_run", "util_gpu_whole_run", "util_gpu_all")   # utilisation over the whole run


def bottleneck(report: dict):
    return (report.get("verdict") or {}).get("bottleneck")


def advice_ids(report: dict) -> list:
    return [a.get("id") for a in report.get("advice") or [] if a.get("id")]


def straggler_rank(report: dict):
    """The rank a distributed job's report names as holding the others back, or None."""
    straggler = (report.get("job") or {}).get("straggler") or {}
    return straggler.get("rank")


def notes(report: dict) -> list:
    return [n for n in report.get("notes") or [] if isinstance(n, str)]


def gpus(report: dict) -> list:
    """The report's GPU entries (whole GPUs and MIG devices)."""
    found = report.get("gpus")
    if found is None:
        found = (report.get("system") or {}).get("gpus")
    return [g for g in found or [] if isinstance(g, dict)]


def job_gpus(report: dict) -> list:
    """The GPU entries the report names as the job's."""
    return [g for g in gpus(report) if g.get("job")]


def is_mig(entry: dict) -> bool:
    return str(entry.get("uuid") or "").upper().startswith("MIG-") or bool(entry.get("mig"))


def sampled_indices(report: dict) -> list:
    """NVML indices of the whole GPUs still sampled at the run's end (not lost)."""
    return sorted({g.get("index") for g in gpus(report) if not is_mig(g) and not g.get("lost")})


def rank_gpus(report: dict) -> dict:
    """{rank: [UUIDs of its GPUs]}: from each rank's row (`ranks[].gpus`), else from the devices the
    job's processes opened (`cuda_devices`, with the ranks that used each)."""
    out = {}
    for row in report.get("ranks") or []:
        uuids = [g.get("uuid") for g in row.get("gpus") or [] if isinstance(g, dict) and g.get("uuid")]
        if uuids and row.get("rank") is not None:
            out[int(row["rank"])] = uuids
    for device in report.get("cuda_devices") or []:
        for rank in device.get("ranks") or []:
            if rank is not None and int(rank) not in out:
                out.setdefault(int(rank), []).append(device.get("uuid"))
    return out


def entry_for(report: dict, uuid):
    return next((g for g in gpus(report) if same_device(g.get("uuid"), uuid)), None)


def sm_activity(entry: dict):
    return _first(entry, SM_ACTIVITY)


def util_window(entry: dict):
    """NVML utilisation over the measured steps."""
    return entry.get("util_gpu")


def util_run(entry: dict):
    """NVML utilisation over the whole run, start-up included."""
    return _first(entry, WHOLE_RUN_UTIL)


def copy_times(report: dict) -> dict:
    """{"device_s": the copies' device time (CUDA events), "host_s": their host time, "wait_s": the host
    time spent waiting for earlier work on the device}, None where the report has no figure."""
    copies = report.get("copies") or {}
    return {"device_s": copies.get("gpu_s"), "host_s": copies.get("host_s"), "wait_s": copies.get("device_wait_s"),
            "observed": bool(copies.get("observed"))}


def _first(entry: dict, names: tuple):
    for name in names:
        if entry.get(name) is not None:
            return entry[name]
    return None
