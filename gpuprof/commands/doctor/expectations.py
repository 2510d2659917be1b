"""A scenario's `Expect` against the report gpuprof wrote: one check per thing expected, each with
what was expected and what was found, and the readings worth seeing beside the verdict."""

from dataclasses import dataclass

from gpuprof.commands.doctor import report_fields as fields
from gpuprof.commands.doctor.cuda_order import same_device


@dataclass
class Check:
    what: str
    expected: str
    found: str
    ok: bool


def compare(expect, report: dict, machine, expected_uuid=None) -> list:
    """The checks `expect` asks for. `machine` names the GPUs by NVML index (a simulated Machine, or
    one built from NVML for the GPU at hand); `expected_uuid` is the job's GPU (or MIG device)."""
    checks = []
    if expect.bottleneck is not None:
        found = fields.bottleneck(report)
        checks.append(Check("bottleneck", expect.bottleneck, str(found), found == expect.bottleneck))
    if expect.fixes:
        ids = fields.advice_ids(report)
        missing = [f for f in expect.fixes if f not in ids]
        checks.append(Check("fixes", ", ".join(expect.fixes), ", ".join(ids) or "no advice", not missing))
    if expect.no_fixes:
        ids = fields.advice_ids(report)
        present = [f for f in expect.no_fixes if f in ids]
        checks.append(Check("no fixes", "none of " + ", ".join(expect.no_fixes), ", ".join(present) or "none of them",
                            not present))
    if expect.straggler is not None:
        found = fields.straggler_rank(report)
        checks.append(Check("straggler", f"rank {expect.straggler}", "none named" if found is None else f"rank {found}",
                            found == expect.straggler))
    if expected_uuid:
        job = fields.job_gpus(report)
        checks.append(Check("job's GPU", label(machine, expected_uuid),
                            ", ".join(label(machine, g.get("uuid")) for g in job) or "none named",
                            any(same_device(g.get("uuid"), expected_uuid) for g in job)))
    if expect.gpus_per_rank:
        found = fields.rank_gpus(report)
        wanted = {int(rank): machine.uuid(index) for rank, index in expect.gpus_per_rank.items()}
        checks.append(Check("GPU per rank", _per_rank(machine, {r: [u] for r, u in wanted.items()}),
                            _per_rank(machine, found) or "none named",
                            all(any(same_device(f, uuid) for f in found.get(rank, [])) for rank, uuid in wanted.items())))
    if expect.sampled_gpus is not None:
        found = fields.sampled_indices(report)
        checks.append(Check("sampled GPUs", _indices(expect.sampled_gpus), _indices(found) or "none",
                            sorted(set(expect.sampled_gpus)) == found))
    if expect.sm_activity is not None:
        entries = fields.job_gpus(report) or fields.gpus(report)
        present = any(fields.sm_activity(g) is not None for g in entries)
        checks.append(Check("SM activity", "present" if expect.sm_activity else "absent",
                            "present" if present else "absent", present == bool(expect.sm_activity)))
    notes = fields.notes(report)
    if expect.note:
        hit = _note_with(notes, expect.note)
        checks.append(Check("note", f"a note with {expect.note!r}", hit or "no such note", hit is not None))
    if expect.no_note:
        hit = _note_with(notes, expect.no_note)
        checks.append(Check("no note", f"no note with {expect.no_note!r}", hit or "none", hit is None))
    return checks


def readings(report: dict, expected_uuid=None) -> dict:
    """The figures shown beside the verdict: the copies' device time against their host time, NVML
    utilisation over the steps against the whole run, and SM activity, on the job's GPU."""
    entries = fields.job_gpus(report)
    entry = (fields.entry_for(report, expected_uuid) if expected_uuid else None) or (entries or [None])[0]
    copies = fields.copy_times(report)
    gpu = entry or {}
    return {"copy_device_s": copies["device_s"], "copy_host_s": copies["host_s"], "copy_wait_s": copies["wait_s"],
            "util_window": fields.util_window(gpu), "util_run": fields.util_run(gpu),
            "sm_activity": fields.sm_activity(gpu), "job_gpus": [g.get("uuid") for g in entries]}


def label(machine, uuid) -> str:
    """"GPU 5" or "GPU 0 MIG 2" for a UUID of `machine`, else the UUID itself."""
    for i, gpu in enumerate(getattr(machine, "gpus", None) or []):
        if same_device(gpu.uuid, uuid):
            return f"GPU {i}"
        for inst in gpu.mig:
            if same_device(inst.uuid, uuid):
                return f"GPU {i} MIG {inst.gpu_instance_id}"
    return str(uuid)


def _per_rank(machine, uuids: dict) -> str:
    return ", ".join(f"rank {rank}: {' + '.join(label(machine, u) for u in found)}"
                     for rank, found in sorted(uuids.items()))


def _indices(indices) -> str:
    return ", ".join(f"GPU {i}" for i in sorted(set(indices)))


def _note_with(notes: list, phrase: str):
    return next((n for n in notes if phrase.lower() in n.lower()), None)
