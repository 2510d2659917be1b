"""The facts `gpuprof doctor` prints, gathered from this machine: NVML, torch in a child process
(holding a CUDA context while NVML's process list is read, where torch has CUDA), the container,
py-spy and the limits a job started here gets."""

import os
import sys
import time

from gpuprof.commands.doctor import host_facts
from gpuprof.commands.doctor.nvml_facts import read_nvml, running_pids
from gpuprof.commands.doctor.torch_facts import TorchChild

PID_WAIT_S = 2.0        # a new context may take a moment to show in NVML's process list


def gather() -> dict:
    nvml = read_nvml()
    answers, pid_check = ask_torch_where_jobs_run(hold=bool(nvml.get("gpus")))
    return {"nvml": nvml, "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "order": os.environ.get("CUDA_DEVICE_ORDER"), "torch": answers, "pid_check": pid_check,
            "container": host_facts.container(), "pyspy": host_facts.pyspy(), "limits": host_facts.limits(),
            "peaks": peaks_with(answers)}


def peaks_with(answers: list) -> list:
    """The peak benchmark (commands/doctor/peak_check.py) in the first python whose torch answered."""
    from gpuprof.commands.doctor.peak_check import measure_peaks
    usable = next((a for a in answers if not a.get("error") and a.get("python")), None)
    return measure_peaks(usable["python"], bool(usable.get("count"))) if usable else []


def ask_torch_where_jobs_run(hold: bool = False) -> tuple:
    """([torch's answers], the PID check or None): torch in the python `gpuprof run` starts, then,
    where it has no torch, in gpuprof's own python. With `hold`, the PID check runs while a child
    whose torch has CUDA holds a context."""
    from gpuprof.capture.launch.command import default_python, same_environment
    answers, pid_check = [], None
    for python in (default_python(), sys.executable):
        if answers and (not answers[-1].get("error") or same_environment(python, answers[-1]["python"])):
            break
        before = listed_pids(running_pids()) if hold else None
        with TorchChild(python, hold=hold) as child:
            answers.append(child.facts)
            if hold:
                pid_check = check_pids(child.facts, before=before)
    return answers, pid_check


def listed_pids(listed) -> set:
    """The PIDs in a {uuid: [pids]} process list (None: none)."""
    return {p for found in (listed or {}).values() for p in found}


def check_pids(child: dict, read=running_pids, wait_s: float = PID_WAIT_S, sleep=time.sleep, before=None) -> dict:
    """Whether NVML's process list shows the PIDs of this namespace, read while `child` (a torch
    child's facts) holds a CUDA context: {"state": "ok" | "host" | "none" | "unchecked", "pid", "why"}.
    `before`, the PIDs listed before the child made its context: a PID new since then that is not
    the child's is its context under another namespace's number, so there is nothing to wait for."""
    pid = child.get("pid")
    if not child.get("holding"):
        why = child.get("cuda_error") or ("torch has no CUDA in " + str(child.get("python"))
                                          if not child.get("error") else child["error"])
        return {"state": "unchecked", "pid": pid, "why": why}
    state = "none"
    deadline = time.monotonic() + wait_s
    while True:
        pids = listed_pids(read())
        if pid in pids:
            return {"state": "ok", "pid": pid}
        if pids:
            state = "host"
            if before is not None and pids - set(before):
                return {"state": state, "pid": pid}
        if time.monotonic() >= deadline:
            return {"state": state, "pid": pid}
        sleep(0.2)
