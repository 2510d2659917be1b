"""Run record -> Report. Pure: the same saved run always gives the same report."""

import math
import os

from gpuprof.package import __version__
from gpuprof.advise.by_verdict import advice_for
from gpuprof.judge.sections.ddp_syncs import syncs_per_step
from gpuprof.judge.sections.augmentation import with_augmentation
from gpuprof.judge.sections.image_sizes import with_image_sizes
from gpuprof.judge.verdict.classify import classify
from gpuprof.judge.sections.script_flags import program_options
from gpuprof.judge.sections import ray_reach
from gpuprof.judge.sections.machine_load import others_during, with_busy_machine
from gpuprof.judge.sections.loaders import analyse_loaders
from gpuprof.judge.verdict.evaluation import with_evaluation
from gpuprof.judge.sections.host_time import analyse_samples, training_cpu, use_sampled_batching
from gpuprof.judge.sections.loop import analyse_loop
from gpuprof.judge.sections.memory import analyse_memory
from gpuprof.advise.shm import shm_note
from gpuprof.judge.sections.processes import events_of_kind, registered_processes
from gpuprof.judge.verdict import ranks as rank_rules
from gpuprof.judge.sections.devices import analyse_devices
from gpuprof.judge.sections.transfers import analyse_copies, analyse_hdf5
from gpuprof.judge.sections.environment import analyse_environment
from gpuprof.judge.sections.eval_phases import outside_rollouts
from gpuprof.present.reporting import cut_short
from gpuprof.present.reporting.environment_note import environment_notes
from gpuprof.judge.sections.startup import startup_section
from gpuprof.judge.sections.spikes import describe as describe_spikes, memory_stalls_in_slow_steps, slow_step_function
from gpuprof.judge.sections import job_gpus as job_gpu_rules
from gpuprof.judge.sections import gpus as gpu_rules
from gpuprof.judge.sections.job_gpus import nvml_uuid
from gpuprof.judge.sections.system import cores_busy_between, summarize_system
from gpuprof.judge.sections.self_cost import self_cost_section
from gpuprof.record.schema import REPORT_FORMAT
from gpuprof.present.reporting.gpu_section import gpu_notes, job_gpu_figures, rank_system
from gpuprof.record import kinds, provenance


def exit_description(meta: dict) -> str:
    signal = meta.get("signal")
    code = meta.get("exit_code")
    short = cut_short.outcome(meta)
    if short:
        return short
    if meta.get("status") != "finished":
        return "unknown: gpuprof was stopped before the program ended"
    if meta.get("kind") == "notebook":
        if meta.get("interrupted"):
            return "the cell was interrupted"
        return f"the cell raised {meta['cell_error']}" if meta.get("cell_error") and code else "the cell finished"
    if meta.get("kind") == "attach":
        stopped = (meta.get("attach") or {}).get("stopped_by")
        return ("the job ended while gpuprof sampled it" if stopped == "job ended"
                else "still running when gpuprof detached")
    if signal == "SIGKILL":
        return "killed by signal 9 (SIGKILL): possibly the out-of-memory killer"
    if signal:
        return f"killed by {signal} (exit status {code})"
    if meta.get("interrupted"):
        return f"interrupted, exited with status {code}"
    return f"exited with status {code}"


def program_identity(meta: dict) -> dict:
    """What the gate compares runs by: the script (its file name), the module, or the launcher's script."""
    kind = meta.get("kind")
    target = meta.get("target") or ""
    if kind == "script":
        name = os.path.basename(os.path.normpath(target))
    elif kind == "module":
        name = target
    else:
        scripts = [a for a in meta.get("command") or [] if a.endswith(".py")]
        name = os.path.basename(scripts[0]) if scripts else os.path.basename(target)
    return {"kind": kind, "name": name}


THROTTLED_NOTABLE = 0.05     # share of the run the job's cgroup was throttled that the report names


def limit_notes(limit) -> list:
    """What the job's CPU limits change in the figures, and a throttled cgroup with its fix."""
    if not limit:
        return []
    notes = []
    if limit.get("cpus") is not None and limit["cpus"] < limit.get("host_cpus", 0):
        notes.append(f"the job may use {limit['cpus']:g} of the host's {limit['host_cpus']} CPUs ({limit['source']}): "
                     "every core count and estimate here counts those")
    share = limit.get("throttled_share")
    if share is not None and share >= THROTTLED_NOTABLE:
        notes.append(f"the job's cgroup was throttled {share:.0%} of the run (its CPU quota of {limit.get('quota_cpus')} "
                     "cores ran out within periods): use fewer DataLoader workers or intra-op threads, or ask for a "
                     "larger CPU quota")
    return notes


def varying_step_notes(steps: dict, environment: dict = None) -> list:
    """Slow steps at a steady interval, and a slow start, which a median and a mean hide."""
    notes = []
    if steps.get("periodic_slow_steps"):
        notes.append(describe_spikes(steps["periodic_slow_steps"], ((environment or {}).get("phases") or {})))
    start = steps.get("slow_start")
    if start:
        notes.append(f"the first {start['steps']} measured steps ran {start['times']:.1f}x slower than the rest "
                     "(compilation, allocator or cache warm-up): the steady median leaves them out")
    return notes


def run_notes(meta: dict, system: dict, gpus: list, gpu_status: dict) -> list:
    """What the report says first about the run itself: an unfinished record, missing or lagging
    samples, the job's limits, the GPUs, a SIGKILL."""
    notes = [n for n in meta.get("record_notes") or [] if isinstance(n, str)]
    if meta.get("status") != "finished" and not meta.get("cut_short"):
        notes.append("the supervisor did not finish this run: figures are partial")
    if not gpu_status["available"] and gpu_status.get("reason"):
        notes.append(f"no GPU figures: {gpu_status['reason']}")
    if system.get("late_ticks"):
        notes.append(f"the sampler fell behind {system['late_ticks']} times; intervals were stretched")
    notes.extend(limit_notes(system.get("cpu_limit")))
    notes.extend(gpu_notes(gpus, gpu_status))
    if meta.get("signal") == "SIGKILL" and not cut_short.killed_after_interrupt(meta):
        notes.append("the job was killed by signal 9 (possible out-of-memory); the last second of events may be missing")
    return notes


def how_it_ended(meta: dict, stopped: list) -> tuple:
    """(exit code, outcome): a stop gpuprof made after --steps is planned, not a failure."""
    exit_code = meta.get("exit_code")
    outcome = exit_description(meta)
    if stopped and (exit_code == 0 or meta.get("signal") == "SIGINT"):
        exit_code = 0
        outcome = f"stopped by gpuprof at a step boundary after {stopped[0].get('steps')} measured steps (--steps)"
    return exit_code, outcome


def step_notes(record: dict, system: dict, probes: dict) -> list:
    """What the steps show beside the verdict: varying steps, the environment's share, slow steps
    that coincide with memory stalls, shared memory running short."""
    notes = varying_step_notes(probes["steps"], probes.get("environment")) + environment_notes(probes.get("environment"))
    stalls = memory_stalls_in_slow_steps((record.get("system") or {}).get("columns") or {},
                                         probes["steps"].get("slow_steps_at") or [])
    if stalls:
        swapped = ((system.get("memory") or {}).get("events") or {}).get("pswpin") or 0
        notes.append(f"the {stalls['steps']} slowest steps coincide with memory stalls: tasks waited on memory "
                     f"{stalls['during']:.0%} of their time ({stalls['overall']:.0%} over the run)"
                     + (f", and {swapped} pages were swapped in" if swapped else "")
                     + ": the machine is short of memory (fewer workers, a smaller prefetch_factor, or more memory)")
    tight = shm_note(system, probes.get("dataloaders") or [])
    if tight:
        notes.append(tight)
    return notes


def build_report(record: dict, run_dir: str = None) -> dict:
    groups = record.get("processes", [])
    meta = record.get("meta", {})
    if cut_short.is_cut_short(meta):
        meta = cut_short.completed_meta(meta, groups)
        record = dict(record, meta=meta)
    processes = registered_processes(groups)
    attached = meta.get("kind") == "attach"
    probes, probe_notes = attached_sections(record) if attached else probe_sections(groups, meta)
    gpus, gpu_status = job_gpu_figures(record, probes, processes)
    system = dict(summarize_system(record.get("system", {})), gpus=gpus, gpu_status=gpu_status)
    notes = run_notes(meta, system, gpus, gpu_status)
    probes_on = (meta.get("settings") or {}).get("probes", True)
    probe_gap = None
    if probes_on and not processes and not attached:
        probe_gap, note = probes_could_not_load(meta.get("command") or [])
        notes.append(note)
    stopped = events_of_kind(groups, kinds.STEP_LIMIT)
    exit_code, outcome = how_it_ended(meta, stopped)
    system = _with_window_cores(system, record, probes["steps"])
    # Other processes' cores over the measured steps: the verdict weighs what they took from the job.
    others = others_during(record.get("system") or {}, probes["steps"].get("window_start"),
                           probes["steps"].get("window_end"))
    system = dict(system, others=others)
    memory = _memory_section(groups, probes, system, meta)
    sections = dict(probes, system=system, duration_s=meta.get("duration_s"), probes=probes_on,
                    probe_gap=probe_gap, memory=memory, program_options=program_options(meta),
                    counted_step=_counted_step(groups, probes))
    ranks = None if attached else _job_ranks(groups, meta, sections, memory, system, probes.get("cuda_devices"), gpus)
    if ranks is not None:
        probes = _with_headline_rank(probes, ranks)
    judged = classify(sections, nothing_to_judge(meta, sections["steps"], probes_on and bool(processes), system,
                                                 events_of_kind(groups, kinds.RAY_CLUSTER)),
                      steps_judged=ranks["judged"] if ranks is not None else None)
    verdict = with_busy_machine(judged["verdict"], others)
    advice = advice_for(judged, memory, probes)
    if ranks is not None:
        advice = cap_by_next_rank(advice, ranks["job"])
    notes.extend(step_notes(record, system, probes))
    short = cut_short.note(meta, probes["steps"], bool(record.get("system")))
    if short and verdict.get("bottleneck"):
        notes.insert(0, short)
    efficiency = efficiency_of(groups, probes, gpus, meta, advice)
    overhead = self_cost_section(meta, groups, record.get("system") or {}, others=system.get("others"))
    return {
        "format": REPORT_FORMAT,
        "gpuprof_version": __version__,
        "run_dir": run_dir,
        "command": meta.get("command", []),
        "started_at": meta.get("started_at"),
        "duration_s": meta.get("duration_s"),
        "exit_code": exit_code,
        "program": program_identity(meta),
        **interpreter_section(meta, groups),
        **provenance.report_section(meta),
        "stopped_after_steps": stopped[0].get("steps") if stopped else None,
        "signal": meta.get("signal"),
        "interrupted": bool(meta.get("interrupted")),
        "outcome": outcome,
        "verdict": verdict,
        "findings": judged["findings"],
        "advice": advice,
        "memory": memory,
        "system": system,
        "processes": {"python": len(processes), "list": processes},
        "ranks": ranks["rows"] if ranks is not None else [],
        "job": ranks["job"] if ranks is not None else None,
        **probes,
        **({"efficiency": efficiency} if efficiency is not None else {}),
        **({"overhead": overhead} if overhead is not None else {}),
        "notes": notes + probe_notes,
    }


def _counted_step(groups: list, probes: dict):
    from gpuprof.judge.sections.efficiency import counted_step
    return counted_step(events_of_kind(groups, kinds.FLOPS), probes["steps"])


def efficiency_of(groups: list, probes: dict, gpus: list, meta: dict, advice: list):
    """FLOPs, MFU, energy and money (judge/sections/efficiency.py), or None where none is known."""
    from gpuprof.judge.sections.efficiency import efficiency_section
    return efficiency_section(events_of_kind(groups, kinds.FLOPS), probes["steps"], job_gpu_rules.job_gpus(gpus),
                              meta.get("efficiency") or {}, advice, meta.get("duration_s"), probes.get("model"))


def _with_window_cores(system: dict, record: dict, steps: dict) -> dict:
    """The system section with the job's cores busy over the measured steps alone (start-up and imports left out)."""
    return dict(system, job=dict(system["job"], cores_busy_in_window=cores_busy_between(
        record.get("system", {}), steps.get("window_start"), steps.get("window_end"))))


def _memory_section(groups: list, probes: dict, system: dict, meta: dict) -> dict:
    """The memory section, from the processes' memory events, the steps and the devices they ran on."""
    return analyse_memory(events_of_kind(groups, kinds.MEMORY_ANATOMY), events_of_kind(groups, kinds.MEM),
                          events_of_kind(groups, kinds.EXCEPTION), probes["steps"], events_of_kind(groups, kinds.WORKER_MEM),
                          system, meta, probes.get("cuda_devices"))


def _job_ranks(groups: list, meta: dict, sections: dict, memory: dict, system: dict, cuda_devices, gpus: list):
    """A distributed job's ranks judged each on its own sections, rows naming their GPUs (None for one process)."""
    ranks = judge_ranks(groups, meta, lambda trainer: dict(
        sections, probe_gap=None, memory=rank_memory(memory), system=rank_system(system, trainer, cuda_devices),
        one_rank_of_many=True))
    if ranks is not None and cuda_devices:
        ranks["rows"] = [dict(row, gpus=job_gpu_rules.rank_gpus(row, cuda_devices, gpus)) for row in ranks["rows"]]
        straggler = (ranks.get("job") or {}).get("straggler")
        if straggler:
            slow = _straggler_gpu_slowdown(straggler, ranks["rows"], gpus)
            if slow:
                straggler["gpu_slowdown"] = slow
    return ranks


def _straggler_gpu_slowdown(straggler: dict, rows: list, gpus: list):
    """The straggler's GPU held below its top clock (a power cap, heat): the likely cause, or None."""
    row: dict = next((r for r in rows if r["rank"] == straggler["rank"]), {})
    mine = {g.get("uuid") for g in row.get("gpus") or []}
    for gpu in gpus or []:
        if nvml_uuid(gpu.get("uuid")) in mine:
            slow = gpu_rules.slowdown(gpu)
            if slow:
                return slow
    return None


def _with_headline_rank(probes: dict, ranks: dict) -> dict:
    """The probe sections of the rank that sets a distributed job's pace, with the job's count of processes."""
    headline = ranks["sections"]
    stepped = dict(headline["steps"], processes=probes["steps"].get("processes"))
    probes = dict(dict(probes, **headline), steps=stepped)
    if ranks["copies"]:
        probes["copies"] = dict(probes["copies"], ranks=ranks["copies"])
    return probes


def interpreter_section(meta: dict, groups: list) -> dict:
    """{"interpreter": ...} for a SCRIPT or -m MODULE run recorded by a gpuprof that notes it: the
    interpreter that ran the program, gpuprof's own, whether they see the same packages, and the
    module the program failed to import, if it ended so. Empty for other runs."""
    interpreter = meta.get("interpreter")
    if not isinstance(interpreter, dict):
        return {}
    failed = events_of_kind(groups, kinds.IMPORT_ERROR)
    root = [e for e in failed if e.get("pid") == meta.get("pid")]
    missing = (root or failed or [{}])[0].get("module")
    return {"interpreter": dict(interpreter, missing_module=missing)}


def rank_memory(memory: dict) -> dict:
    """A rank's view of the memory section: how the job ended (out of memory, out of shared memory)
    is the job's verdict, not each rank's."""
    return dict(memory, oom=None, shm=None)


MIN_SAMPLES_TO_GUESS = 5     # system samples a sampler-only guess needs


def nothing_to_judge(meta: dict, steps: dict, probes_ran: bool, system: dict, ray_clusters=()):
    """Why this run gives no verdict, or None when it has something to judge. `ray_clusters`: the
    driver's notes of a Ray cluster it joined, whose workers gpuprof may not have reached."""
    if meta.get("status") != "finished" and not meta.get("cut_short"):
        return "gpuprof was stopped before the program ended, so the run record is incomplete"
    if steps.get("basis") == "attached":
        if steps.get("data_wait_share") is None:
            error = (meta.get("attach") or {}).get("sampler_error")
            return (f"no Python stacks could be read ({error})" if error else
                    "no training thread was seen in the sampled stacks (no forward, backward, optimizer step "
                    "or DataLoader batch): attach while the job trains, or for longer")
        return None
    if not probes_ran:
        # Probes off or unable to load: the system figures still give a labelled guess, if any.
        if (system.get("samples") or 0) < MIN_SAMPLES_TO_GUESS:
            return "the run was too short to judge from system figures alone"
        return None
    count = steps.get("count") or 0
    if count == 0 and ray_reach.why_no_step(ray_clusters):
        return ray_reach.why_no_step(ray_clusters)
    if count == 0:
        return "the program ran no training step (no optimizer step, no backward pass and no DataLoader batch)"
    if not steps.get("measured"):
        return (f"the program ended after {count} step{'s' if count != 1 else ''}, and the first step "
                "(start-up) is never measured")
    return None


PYTHON_FLAGS_THAT_SKIP_THE_BOOTSTRAP = {"I": "-I", "E": "-E", "S": "-S"}


def probes_could_not_load(command: list) -> tuple:
    """(short reason, note) for why no Python process of the job registered: a python flag that
    skips PYTHONPATH or site, or no Python process at all."""
    for i, arg in enumerate(command):
        if os.path.basename(str(arg)).startswith("python"):
            for flag in command[i + 1:]:
                if not flag.startswith("-") or flag in ("-m", "-c") or flag.startswith("--"):
                    break
                for letter, name in PYTHON_FLAGS_THAT_SKIP_THE_BOOTSTRAP.items():
                    if letter in flag[1:]:
                        return (f"probes could not load (python {name})",
                                f"probes could not load: the job's python runs with {name}, which skips "
                                "PYTHONPATH or site customisation, where gpuprof's bootstrap is; figures come "
                                "from the system sampler alone")
    return ("no Python process registered",
            "no Python process of the job registered gpuprof's probes (not a Python program, or a python "
            "started with -I, -E or -S); figures come from the system sampler alone")


def probe_sections(groups: list, meta: dict) -> tuple:
    """(steps, dataloaders, copies and hdf5 from the probes' events; notes about them)."""
    def kind(name):
        return events_of_kind(groups, name)

    probes_on = (meta.get("settings") or {}).get("probes", True)

    loaders = kind(kinds.LOADER)
    batches = kind(kinds.BATCH)
    warmup = (meta.get("settings") or {}).get("warmup_steps") or 0
    steps = analyse_loop(kind(kinds.STEP), batches, loaders, warmup_steps=warmup, backward_steps=kind(kinds.BSTEP),
                         eval_phases=outside_rollouts(kind(kinds.EVAL_PHASE), kind(kinds.ROLLOUT)))
    samples = [e for e in kind(kinds.STACK_SAMPLES) if e.get("pid") == steps.get("pid")]
    steps["sampled"] = analyse_samples(samples, steps.get("window_start"), steps.get("window_end"))
    if steps.get("periodic_slow_steps"):
        steps["periodic_slow_steps"]["where"] = slow_step_function(samples)
    threads = training_cpu([e for e in kind(kinds.THREAD_CPU) if e.get("pid") == steps.get("pid")],
                           steps.get("window_start"), steps.get("window_end"))
    if threads is not None:
        steps["training_cpu"] = threads
    use_sampled_batching(steps)
    steps, dataloaders = with_evaluation(steps, analyse_loaders(loaders, batches, kind(kinds.FETCH), kind(kinds.BATCH_FACTS),
                                                                kind(kinds.EPOCH)), meta.get("duration_s"))
    dataloaders = with_augmentation(dataloaders, kind(kinds.AUGMENTATION))
    dataloaders = with_image_sizes(dataloaders, kind(kinds.IMAGE_SIZES))
    notes = []
    if not probes_on:
        notes.append("probes were off (--no-probes): figures come from the system sampler alone")
    return ({
        "steps": steps,
        "dataloaders": dataloaders,
        "copies": analyse_copies(kind(kinds.COPIES), steps, kind(kinds.COPY_VALUES)),
        "cuda_devices": analyse_devices(groups),
        "hdf5": analyse_hdf5(kind(kinds.H5DATASET), kind(kinds.H5READ)),
        **analyse_environment(kind(kinds.ENV), kind(kinds.ENV_STEPS), steps, kind(kinds.ROLLOUT)),
        **_ddp_section(kind(kinds.DDP_COMM), steps, on_gpu=_model_on_gpu(kind(kinds.MODEL), steps)),
        **startup_section(kind(kinds.STARTUP_SAMPLES), meta, steps),
        "model": _model_section(kind(kinds.MODEL), steps),
        "frameworks": {"data_parallel": bool(kind(kinds.DATA_PARALLEL)),
                       "data_parallel_where": next((e.get("where") for e in kind(kinds.DATA_PARALLEL) if e.get("where")), None)},
    }, notes)


ATTACHED_NOTE = ("attached: the figures come from stacks sampled from outside the job and from /proc, with no probes; "
                 "batch sizes, dtypes, copies to the GPU, HDF5 chunking and the model's precision are not seen, so "
                 "fixes that need them are left to `gpuprof run`")


def attached_sections(record: dict) -> tuple:
    """(the probe sections, as far as stacks sampled from outside give them; notes) for an attach."""
    from gpuprof.judge.sections.attached import analyse_attached
    found = analyse_attached(record.get("stacks") or {}, record.get("system") or {})
    return ({
        "steps": found["steps"],
        "dataloaders": found["dataloaders"],
        "copies": analyse_copies([]),
        "cuda_devices": [],
        "hdf5": [],
        "model": None,
        "frameworks": {"data_parallel": False, "data_parallel_where": None},
        "attached": found["attached"],
    }, [ATTACHED_NOTE])


def _model_section(events: list, steps: dict):
    """The trained model of the stepping process, as the probes noted it, or None."""
    mine = [e for e in events if e.get("pid") == steps.get("pid")] or events
    if not mine:
        return None
    return {k: v for k, v in mine[0].items() if k not in ("k", "t", "pid")}


def _model_on_gpu(events: list, steps: dict) -> bool:
    model = _model_section(events, steps) or {}
    return str(model.get("device") or "").startswith("cuda")


def _ddp_section(events: list, steps: dict, on_gpu: bool = False) -> dict:
    """{"ddp_comm": DDP's own timing of its gradient all-reduce, per step} for the stepping process,
    when DDP noted it; empty otherwise. On a GPU DDP times the device with CUDA events while the host
    runs ahead and waits at its syncs, so the exposed all-reduce is a share of the mean step itself."""
    mine = [e for e in events if e.get("pid") == steps.get("pid")] or events
    if not mine:
        return {}
    event = max(mine, key=lambda e: e.get("t") or 0.0)
    comm, overlap = event.get("comm_s") or 0.0, event.get("overlap_s") or 0.0
    exposed = max(comm - overlap, 0.0)
    # DDP times a sampled iteration's forward, backward compute and all-reduce; their sum is the part
    # of a step the sampled stacks put in forward and backward, so the all-reduce's share of a step is
    # its share of that sum times that part (the optimizer and the data are the rest).
    model_part = exposed + (event.get("forward_s") or 0.0) + (event.get("backward_compute_s") or 0.0)
    shares = (steps.get("sampled") or {}).get("shares") or {}
    in_model = (shares.get("forward") or 0.0) + (shares.get("backward") or 0.0)
    share = exposed / model_part * (in_model or 1.0) if model_part > 0 else None
    device_timed = bool(on_gpu and steps.get("mean_step_s"))
    if device_timed:
        share = exposed / steps["mean_step_s"]
    syncs = syncs_per_step(mine)
    return {"ddp_comm": {"comm_s": comm, "overlap_s": overlap, "exposed_comm_s": round(exposed, 6),
                         "forward_s": event.get("forward_s"), "backward_compute_s": event.get("backward_compute_s"),
                         "exposed_comm_share": round(min(share, 1.0), 4) if share is not None else None,
                         **({"syncs_per_step": syncs} if syncs else {}),
                         **({"device_timed": True} if device_timed else {})}}


def judge_ranks(groups: list, meta: dict, context_of):
    """For a job with two or more trainers: each rank analysed as a run of its own (its process and
    its workers, judged against `context_of(trainer)`: its machine's system and memory sections),
    the straggler named, and the headline rank's sections and verdict. None otherwise."""
    found = rank_rules.trainers(groups)
    if len(found) < 2:
        return None
    analysed = []
    for trainer in found:
        sections, _ = probe_sections([groups[i] for i in trainer["group_indices"]], meta)
        sections.pop("cuda_devices", None)     # the job's devices stay the whole job's
        context = context_of(trainer)
        judged = classify(dict(context, **sections),
                          nothing_to_judge(meta, sections["steps"], True, context.get("system") or {}))
        analysed.append((trainer, sections, judged))
    rows = [rank_rules.rank_row(t, s, j["verdict"]) for t, s, j in analysed]
    picture = rank_rules.judge(rows)
    straggler = picture["straggler"]
    waited_rows, waited = [], []
    for row, (trainer, sections, judged) in zip(rows, analysed):
        # A rank's place in the job (its wait on the others) is data for the comm bottleneck's rule.
        context = dict(context_of(trainer), ddp_comm=None)
        context.update(sections, rank={"rank": row["rank"], "waiting_share": row.get("waiting_share"),
                                       "straggler": straggler})
        final = classify(context, steps_judged=judged)
        if final["verdict"] is not judged["verdict"]:
            row = dict(row, verdict={k: final["verdict"].get(k) for k in row["verdict"]})
        waited_rows.append(row)
        waited.append((trainer, sections, final))
    rows, analysed = waited_rows, waited
    headline = next(i for i, row in enumerate(rows) if row["rank"] == picture["headline_rank"])
    _, sections, judged = analysed[headline]
    verdict = dict(judged["verdict"])
    if verdict.get("bottleneck"):
        verdict["summary"] = rank_rules.job_summary(verdict, rows, picture)
        verdict["rank"] = rows[headline]["rank"]
    hosts = sorted({row["host"] for row in rows if row.get("host")})
    job = dict(picture, ranks=len(rows), hosts=hosts, pace_bound=_pace_bound(rows, picture))
    return {"rows": rows, "job": job, "sections": sections, "copies": copies_by_rank(analysed),
            "judged": dict(judged, verdict=verdict)}


def copies_by_rank(analysed: list) -> list:
    """Each rank's copies against its own steps' window (never summed over ranks): the verdict
    follows the rank that sets the job's pace, with its own share."""
    out = []
    for trainer, sections, _ in analysed:
        copies = sections.get("copies") or {}
        if copies.get("count"):
            out.append({"rank": trainer["rank"], "pid": trainer["pid"], "count": copies["count"],
                        "seconds": copies.get("seconds"), "share": copies.get("share"),
                        "device_wait_share": copies.get("device_wait_share")})
    return out


def _pace_bound(rows: list, picture: dict):
    """How much faster the job can get by speeding up its slowest rank alone: the next slowest rank
    then sets the pace."""
    own = sorted((r["own_step_s"] for r in rows if r.get("own_step_s")), reverse=True)
    if len(own) < 2 or not picture.get("straggler") or own[1] <= 0:
        return None
    return round(own[0] / own[1], 3)


def cap_by_next_rank(advice: list, job: dict) -> list:
    """A fix for the straggler alone speeds the job up only until the next slowest rank sets the pace."""
    bound = job.get("pace_bound")
    straggler = job.get("straggler")
    if not bound or not straggler:
        return advice
    from gpuprof.advise.rank import capped
    bound = math.floor(bound * 100) / 100
    return [dict(capped(item, bound), why=(item.get("why") or "") + (
                f"; for the job, at most {bound:.2f}x: once rank {straggler['rank']} keeps up, the next slowest rank "
                "sets the pace"))
            if capped(item, bound) is not item else item
            for item in advice]
