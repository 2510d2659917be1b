"""The doctor's checks as sections of marked lines, from facts gathered elsewhere (pure: tests hand
in facts for a machine without NVML, one with two GPUs and MIG, a container...).

`facts` holds: "nvml" (nvml_facts.read_nvml), "visible" and "order" (CUDA_VISIBLE_DEVICES and
CUDA_DEVICE_ORDER, None when unset), "torch" (torch_facts answers: the interpreter `gpuprof run`
starts first, then gpuprof's own when it differs), "pid_check" ({"state": "ok" | "host" | "none" |
"unchecked", "pid", "why"}), "container" (host_facts.container), "pyspy" and "limits"."""

from gpuprof.commands.doctor.cuda_order import cuda_devices, same_device
from gpuprof.commands.doctor.lines import BAD, NONE, OK, Line, Section

CPU_ONLY = "no NVIDIA driver or GPU here: gpuprof will profile CPU training"
SMALL_SHM = 1 << 30        # below this /dev/shm holds few batches of DataLoader workers (Docker's default: 64 MiB)
NO_DRIVER = ("LibraryNotFound", "DriverNotLoaded", "NotFound")


def sections(facts: dict) -> list:
    nvml = facts.get("nvml") or {}
    out = [nvml_section(nvml)]
    if nvml.get("gpus"):
        out.append(gpus_section(nvml["gpus"]))
        out.append(usable_section(nvml["gpus"], facts.get("visible"), facts.get("order"), _cuda_torch(facts)))
    out.append(container_section(facts.get("container") or [], facts.get("pid_check"), bool(nvml.get("gpus"))))
    out.append(torch_section(facts.get("torch") or [], len(nvml.get("gpus") or [])))
    out.append(pyspy_section(facts.get("pyspy") or {}))
    out.append(limits_section(facts.get("limits") or {}))
    if "peaks" in facts:
        from gpuprof.commands.doctor.peak_check import peaks_section
        out.append(peaks_section(facts["peaks"]))
    return out


def cuda_python(facts: dict):
    """The python whose torch can use a GPU NVML sees (what --verify runs the scenarios in), or None."""
    torch = _cuda_torch(facts)
    return torch["python"] if torch and (facts.get("nvml") or {}).get("gpus") else None


def nvml_section(nvml: dict) -> Section:
    title = "NVML (GPU figures)"
    if not nvml.get("importable", True):
        return Section(title, [Line(BAD, f"{nvml.get('import_error')}: gpuprof cannot read any GPU; "
                                         "pip install nvidia-ml-py")])
    error = nvml.get("init_error")
    if error:
        if any(kind in error for kind in NO_DRIVER):
            return Section(title, [Line(NONE, f"nvmlInit: {error}"), Line(NONE, CPU_ONLY)])
        return Section(title, [Line(BAD, f"nvmlInit failed ({error}): GPU figures will be missing; "
                                         "check the driver with nvidia-smi")])
    lines = [Line(OK, f"NVML works: driver {nvml.get('driver') or 'unknown'}, "
                      f"CUDA driver {nvml.get('cuda_driver') or 'unknown'}")]
    if nvml.get("error"):
        lines.append(Line(BAD, nvml["error"]))
    elif not nvml.get("gpus"):
        lines.append(Line(NONE, "NVML sees no GPU: gpuprof will profile CPU training"))
    return Section(title, lines)


def gpus_section(gpus: list) -> Section:
    lines = []
    for gpu in gpus:
        if gpu.get("error"):
            lines.append(Line(BAD, f"GPU {gpu['index']}: {gpu['error']}: gpuprof samples the others"))
            continue
        detail = ["MIG mode: off"]
        if gpu.get("mig"):
            detail = [f"MIG mode: on, {len(gpu.get('mig_instances') or [])} MIG device(s), each sampled on its own"]
            detail.extend(f"  GPU instance {m.get('gpu_instance_id')}: {m.get('uuid')}  {_size(m.get('memory_bytes'))}"
                          for m in gpu.get("mig_instances") or [])
        detail.append("SM activity (GPM): yes" if gpu.get("gpm") else
                      "SM activity (GPM): not supported (before Hopper): utilisation says when kernels ran, "
                      "not how many SMs they kept busy")
        lines.append(Line(OK, f"GPU {gpu['index']}: {gpu.get('name')}  {gpu.get('uuid')}  {_size(gpu.get('memory_bytes'))}",
                          detail))
    return Section("GPUs NVML sees (nvidia-smi's numbering)", lines)


def usable_section(gpus: list, visible, order, torch) -> Section:
    """The GPUs a job started here may use, numbered as CUDA numbers them: torch's own list when it
    has CUDA, else worked out from NVML and CUDA_VISIBLE_DEVICES."""
    title = "GPUs a job started here may use (CUDA's numbering)"
    setting = (f"CUDA_VISIBLE_DEVICES={visible!r}" if visible is not None else "CUDA_VISIBLE_DEVICES unset") + \
        (f", CUDA_DEVICE_ORDER={order}" if order else "")
    if torch:
        devices = [dict(d, **_in_nvml(d.get("uuid"), gpus)) for d in torch.get("devices") or []]
        source, notes = f"from torch in {torch.get('python')}", []
    else:
        devices, notes = cuda_devices(gpus, visible, order)
        source = "from NVML and the environment (torch here has no CUDA)"
    lines = [Line(NONE, f"{setting}; {source}")]
    for device in devices:
        where = f"NVML GPU {device['nvml_index']}" if device.get("nvml_index") is not None else "not in NVML's list"
        lines.append(Line(OK, f"cuda:{device['cuda_index']} = {where}: {device.get('name')}  {device.get('uuid')}"))
    if not devices:
        lines.append(Line(BAD, "no GPU is visible to CUDA here: a job started here trains on the CPU"))
    lines.extend(Line(NONE, note) for note in notes)
    return Section(title, lines)


def container_section(signs: list, pid_check, have_gpus: bool) -> Section:
    lines = [Line(NONE, f"looks like a container ({'; '.join(signs)})") if signs else
             Line(OK, "not a container, as far as /.dockerenv, /run/.containerenv and the cgroup path tell")]
    if have_gpus:
        lines.append(_pid_line(pid_check or {"state": "unchecked"}))
    return Section("Container and PID namespace", lines)


def _pid_line(check: dict) -> Line:
    state, pid = check.get("state"), check.get("pid")
    by_uuid = ["gpuprof finds the job's GPUs by UUID from inside the job, so its GPU figures stay the job's own; "
               "only the per-process GPU memory is missing"]
    if state == "ok":
        return Line(OK, f"NVML's process list: ok (it shows this namespace's PIDs: a CUDA process, PID {pid}, was found)")
    if state == "host":
        return Line(NONE, f"NVML's process list: host PIDs (a CUDA process, PID {pid} here, is listed under another "
                          "PID: the driver reports the host's PID namespace)", by_uuid)
    if state == "none":
        return Line(NONE, f"NVML's process list: no process list (empty while a CUDA process, PID {pid}, held a "
                          "context: the driver cannot map this namespace's PIDs)", by_uuid)
    return Line(NONE, "NVML's process list: not checked (it needs a CUDA process: torch with CUDA, or --verify)"
                + (f": {check['why']}" if check.get("why") else ""))


def torch_section(answers: list, nvml_gpus: int) -> Section:
    lines = []
    for i, answer in enumerate(answers):
        role = "the python `gpuprof run` starts" if i == 0 else "gpuprof's own python"
        lines.append(_torch_line(answer, role, nvml_gpus))
    if len(answers) > 1 and answers[0].get("error") and not answers[1].get("error"):
        lines.append(Line(NONE, f"to profile with that torch: gpuprof run --python {answers[1].get('python')} train.py"))
    return Section("torch", lines)


def _torch_line(answer: dict, role: str, nvml_gpus: int) -> Line:
    where = f"in {answer.get('python')} ({role})"
    if answer.get("error"):
        return Line(BAD, f"torch is not importable {where}: {answer['error']}")
    head = f"torch {answer.get('version')} {where}"
    if not answer.get("cuda"):
        status = BAD if nvml_gpus else NONE
        tail = f"but NVML sees {nvml_gpus} GPU(s): install a CUDA build" if nvml_gpus else "gpuprof will profile CPU training"
        return Line(status, f"{head}: a CPU build (torch.version.cuda is None); {tail}")
    if answer.get("cuda_error"):
        return Line(BAD, f"{head}: CUDA build {answer['cuda']}, but asking CUDA failed: {answer['cuda_error']}")
    if not answer.get("available"):
        return Line(BAD if nvml_gpus else NONE,
                    f"{head}: CUDA build {answer['cuda']}, torch.cuda.is_available() is False "
                    "(no GPU visible, or a driver older than this CUDA)")
    return Line(OK, f"{head}: CUDA build {answer['cuda']}, CUDA available, {answer.get('count')} device(s)")


def pyspy_section(spy: dict) -> Section:
    lines = [Line(OK, f"py-spy at {spy['path']}") if spy.get("path") else
             Line(NONE, "py-spy is not installed: gpuprof attach needs it (pip install py-spy)")]
    scope, root = spy.get("ptrace_scope"), spy.get("root")
    if scope is None:
        lines.append(Line(NONE, "no Yama ptrace_scope here: attach may read the processes of your own user"))
    elif scope == 0:
        lines.append(Line(OK, "ptrace_scope 0: attach may read any process of your own user"))
    elif scope == 3:
        lines.append(Line(BAD, "ptrace_scope 3: no process may read another's memory until a reboot: "
                               "gpuprof attach cannot work here"))
    elif root:
        lines.append(Line(OK, f"ptrace_scope {scope}, but gpuprof runs as root: attach may read any process"))
    else:
        who = "only a process's parent" if scope == 1 else "only root"
        lines.append(Line(BAD, f"ptrace_scope {scope}: {who} may read a process's memory: run gpuprof attach with "
                               "sudo, or as root set /proc/sys/kernel/yama/ptrace_scope to 0"))
    return Section("py-spy (gpuprof attach)", lines)


def limits_section(limits: dict) -> Section:
    lines = []
    cpus, host = limits.get("cpus"), limits.get("host_cpus")
    if cpus is not None:
        share = f"{cpus:g} of the host's {host} CPUs" if host and cpus < host else f"{cpus:g} CPUs"
        lines.append(Line(OK, f"{share} ({limits.get('source')}): gpuprof's worker advice counts these"))
    memory = limits.get("memory_limit_bytes")
    lines.append(Line(NONE, f"cgroup memory limit {_size(memory)}") if memory else
                 Line(OK, "no cgroup memory limit"))
    shm = limits.get("shm_bytes")
    if not shm:
        lines.append(Line(NONE, "/dev/shm not found: DataLoader workers hand batches over through it"))
    elif shm < SMALL_SHM:
        lines.append(Line(BAD, f"/dev/shm is {_size(shm)}: DataLoader workers hand batches over through it and "
                               "few fit; run the container with --shm-size=8g (or --ipc=host)"))
    else:
        free = limits.get("shm_free_bytes")
        lines.append(Line(OK, f"/dev/shm {_size(shm)}" + (f" ({_size(free)} free)" if free is not None else "")))
    return Section("Limits a job started here gets", lines)


def _cuda_torch(facts: dict):
    """The first torch answer that can use a GPU, or None."""
    return next((a for a in facts.get("torch") or [] if a.get("count")), None)


def _in_nvml(uuid, gpus: list) -> dict:
    """{"nvml_index", "uuid"} of the NVML device torch's UUID names (NVML's spelling), or the UUID
    as torch gave it with no index."""
    for gpu in gpus:
        for device in [gpu] + list(gpu.get("mig_instances") or []):
            if same_device(uuid, device.get("uuid")):
                return {"nvml_index": gpu["index"], "uuid": device["uuid"]}
    return {"nvml_index": None, "uuid": uuid}


def _size(n) -> str:
    if n is None:
        return "size unknown"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
