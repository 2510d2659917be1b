"""Which of the devices NVML sampled are the job's, and each rank's own.

Order of trust:
1. UUID: the probes note the UUID of every CUDA device torch opened in each process of the job
   (`cuda_devices`), and NVML names every device by UUID. This holds in a container (where NVML
   lists host PIDs, or none), under MPS (where NVML lists the MPS server) and with
   CUDA_VISIBLE_DEVICES reordering devices.
2. PIDs: NVML's per-process lists (nvmlDeviceGetComputeRunningProcesses) naming a process of the job.
3. Unknown: every device, stated in the report.

A MIG instance the job used stands for its GPU: the GPU's own entry (memory only, in MIG mode)
is left out when one of its instances is the job's."""

BY_UUID, BY_PIDS, UNKNOWN = "uuid", "pids", "unknown"
BASIS_WORDS = {BY_UUID: "by UUID, from the CUDA devices torch opened in the job",
               BY_PIDS: "by the job's process IDs in NVML's process lists",
               UNKNOWN: "unknown: no CUDA device was seen inside the job and NVML listed none of its processes"}


def nvml_uuid(value):
    """A UUID in NVML's spelling: "GPU-" or "MIG-" prefix, lower-case hex."""
    if not value:
        return None
    value = str(value).strip()
    for prefix in ("GPU-", "MIG-"):
        if value.upper().startswith(prefix):
            return prefix + value[len(prefix):].lower()
    return value.lower()


def select_job_gpus(gpus: list, cuda_devices=None, job_pids=()) -> dict | None:
    """Mark each summary with "job" (True or False) and say how they were chosen:
    {"basis", "labels": the job's devices, "words": the basis in words}. Nothing to mark: None."""
    if not gpus:
        return None
    wanted = {nvml_uuid(d.get("uuid")) for d in cuda_devices or [] if d.get("uuid")}
    chosen = [g for g in gpus if g.get("uuid") and nvml_uuid(g["uuid"]) in wanted]
    basis = BY_UUID
    if not chosen:
        pids = {int(p) for p in job_pids or ()}
        chosen = [g for g in gpus if g.get("job_memory_bytes")
                  or pids & {int(p) for p in (g.get("processes") or {})}]
        basis = BY_PIDS
    if not chosen:
        chosen, basis = list(gpus), UNKNOWN
    chosen = _instances_over_their_gpu(chosen)
    for gpu in gpus:
        gpu["job"] = any(gpu is c for c in chosen)
    return {"basis": basis, "labels": [g.get("label") for g in chosen], "words": BASIS_WORDS[basis]}


def _instances_over_their_gpu(chosen: list) -> list:
    with_instances = {g.get("index") for g in chosen if g.get("mig")}
    return [g for g in chosen if g.get("mig") or g.get("index") not in with_instances]


def job_gpus(gpus: list) -> list:
    """The job's devices: as marked by `select_job_gpus`; for summaries never marked (an older
    report), those where the job held memory, or all of them."""
    gpus = gpus or []
    if any(g.get("job") is not None for g in gpus):
        return [g for g in gpus if g.get("job")]
    used = [g for g in gpus if g.get("job_memory_bytes")]
    return used or gpus


def job_gpu_util(gpus: list):
    """Mean utilisation of the job's devices (0..1) over the measured steps, None without a figure."""
    values = [g["util_gpu"] for g in job_gpus(gpus) if g.get("util_gpu") is not None]
    return sum(values) / len(values) if values else None


def job_sm_active(gpus: list):
    """Mean SM activity (GPM) of the job's devices (0..1), None where no device has GPM."""
    values = [g["sm_active"] for g in job_gpus(gpus) if g.get("sm_active") is not None]
    return sum(values) / len(values) if values else None


def unknown_note(selection, gpus: list):
    """The report's word that the figures average every device, where there are several to choose from."""
    if not selection or selection["basis"] != UNKNOWN:
        return None
    measured = [g for g in gpus if g.get("util_gpu") is not None]
    if len(measured) < 2:
        return None
    return (f"which GPUs the job used is unknown (no CUDA device was seen inside the job and NVML listed none of its "
            f"processes): the GPU figures are the mean of all {len(measured)} GPUs")


def rank_devices(row: dict, cuda_devices) -> list:
    """UUIDs of the CUDA devices rank `row` opened (its rank, else its process ID, in `cuda_devices`)."""
    found = []
    for device in cuda_devices or []:
        pids = device.get("pids") or []
        ranks = device.get("ranks") or []
        for i, pid in enumerate(pids):
            rank = ranks[i] if i < len(ranks) else None
            if (rank is not None and rank == row.get("rank")) or (rank is None and pid == row.get("pid")):
                found.append(nvml_uuid(device.get("uuid")))
                break
    return [u for u in found if u]


def rank_gpus(row: dict, cuda_devices, gpus: list) -> list:
    """[{label, uuid, util_gpu, sm_active}] of the devices rank `row` opened, as NVML sampled them."""
    uuids = rank_devices(row, cuda_devices)
    by_uuid = {nvml_uuid(g.get("uuid")): g for g in gpus or [] if g.get("uuid")}
    return [{"label": by_uuid[u].get("label"), "uuid": u, "util_gpu": by_uuid[u].get("util_gpu"),
             "sm_active": by_uuid[u].get("sm_active")} for u in uuids if u in by_uuid]


def for_rank(gpus: list, uuids: list) -> list:
    """Copies of the summaries with the rank's own devices marked as the job's (all, when unknown)."""
    if not uuids:
        return gpus
    wanted = set(uuids)
    if not any(nvml_uuid(g.get("uuid")) in wanted for g in gpus or []):
        return gpus
    return [dict(g, job=nvml_uuid(g.get("uuid")) in wanted) for g in gpus]
