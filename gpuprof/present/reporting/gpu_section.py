"""The report's GPU section: the sampled devices summarised over the measured steps, the job's own
devices picked out (by UUID from inside the job, else by NVML's process lists), the notes GPU figures
justify, and the system section each rank of a distributed job is judged with."""

from gpuprof.judge.sections import job_gpus as job_gpu_rules
from gpuprof.judge.sections.gpus import lost_notes, sm_activity_notes, slowdown_notes, summarize_gpus


def job_gpu_figures(record: dict, probes: dict, processes: list) -> tuple:
    """(per-device summaries over the measured steps, with the job's devices marked; the GPU status,
    with how the job's devices were found and their mean utilisation)."""
    steps = probes.get("steps") or {}
    gpus, status = summarize_gpus(record.get("gpu", {}), (steps.get("window_start"), steps.get("window_end")))
    if not gpus:
        return gpus, status
    pids = {p.get("pid") for p in processes if p.get("pid") is not None}
    pids |= {p.get("pid") for p in (record.get("system") or {}).get("processes") or [] if p.get("pid") is not None}
    selection = job_gpu_rules.select_job_gpus(gpus, probes.get("cuda_devices"), pids)
    chosen = job_gpu_rules.job_gpus(gpus)
    over = {g.get("figures_over") for g in chosen if g.get("util_gpu") is not None}
    return gpus, dict(status, job_gpus=selection, job_util=job_gpu_rules.job_gpu_util(gpus),
                      job_util_run=_mean([g.get("util_gpu_run") for g in chosen]),
                      job_sm_active=job_gpu_rules.job_sm_active(gpus),
                      job_util_over="steps" if over == {"steps"} else "run" if over else None,
                      late_ticks=(record.get("gpu") or {}).get("late_ticks") or 0)


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def gpu_notes(gpus: list, status: dict) -> list:
    """The GPU notes: devices lost mid-run, which GPUs are the job's where that is unknown, clocks
    held down while busy, and kernels that keep few SMs busy."""
    if not gpus:
        return []
    notes = lost_notes(gpus)
    if status.get("late_ticks"):
        notes.append(f"the NVML sampler fell behind {status['late_ticks']} times; its intervals were stretched")
    unknown = job_gpu_rules.unknown_note(status.get("job_gpus"), gpus)
    return notes + ([unknown] if unknown else []) + slowdown_notes(gpus) + sm_activity_notes(gpus)


def rank_system(system: dict, trainer: dict, cuda_devices) -> dict:
    """The system section a rank is judged with: its own GPUs marked as the job's, where the CUDA
    devices it opened say which they are."""
    uuids = job_gpu_rules.rank_devices(trainer, cuda_devices)
    gpus = system.get("gpus") or []
    mine = job_gpu_rules.for_rank(gpus, uuids)
    return system if mine is gpus else dict(system, gpus=mine)
