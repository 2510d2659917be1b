"""Tests' access to the simulated GPU's NVML face: a machine in a tmp folder, the activity a job would
leave there (kernels at a duty cycle, copies at a steady rate, memory held), and the `pynvml` module
reading it on the test's clock. Every figure a test asserts comes from that activity, as a real
driver's figures come from the device."""

import os
import subprocess
import time

from gpuprof.testing.simgpu import state
from gpuprof.testing.simgpu.machine import Machine, device_dir, mig_dir
from gpuprof.testing.simgpu.nvml_face import simulated_pynvml

PERIOD_S = 0.01       # one kernel per 10 ms: any 200 ms utilisation window holds whole periods


def open_machine(folder, machine: Machine, clock=time.monotonic):
    """(the `pynvml` module over `machine` written into `folder`, the folder), on `clock` (and its
    `sleep`, where it has one)."""
    path = machine.create(str(folder))
    return simulated_pynvml(path, clock=clock, sleep=getattr(clock, "sleep", time.sleep)), path


def activity_dir(folder, gpu: int, instance=None) -> str:
    return device_dir(folder, gpu) if instance is None else mig_dir(folder, gpu, instance)


def keep_busy(folder, gpu: int, start: float, end: float, util: float, sm_active: float = 1.0,
              instance=None, pid=None, period: float = PERIOD_S) -> None:
    """Kernels on GPU `gpu` (or its MIG instance) from `start` to `end`: running `util` of every
    `period`, each keeping `sm_active` of the SMs busy."""
    if util <= 0:
        return
    writer = state.ActivityWriter(activity_dir(folder, gpu, instance), pid or os.getpid())
    if util >= 1:
        writer.add(start, end, sm_active, state.KERNEL)
    else:
        count = int(round((end - start) / period))
        writer.add_many([(start + k * period, start + (k + util) * period, sm_active, state.KERNEL, 0)
                         for k in range(count)])
    writer.close()


def copy_steadily(folder, gpu: int, start: float, end: float, kb_per_s: float, kind=state.H2D) -> None:
    """One copy from `start` to `end` that NVML's PCIe counter reads as `kb_per_s` (RX for host to
    device): half a KB/s above it, as NVML answers whole KB/s, rounded down."""
    writer = state.ActivityWriter(activity_dir(folder, gpu), os.getpid())
    writer.add(start, end, 0.0, kind, int(round((kb_per_s + 0.5) * 1024 * (end - start))))
    writer.close()


def hold_memory(folder, gpu: int, pid: int, nbytes: int, instance=None) -> None:
    """Process `pid` (alive: NVML lists live processes only) holds `nbytes` on the device."""
    writer = state.ActivityWriter(activity_dir(folder, gpu, instance), pid)
    writer.memory(nbytes, nbytes)
    writer.close()


def spy(module, name: str) -> list:
    """Record what `module.name` answers, call by call (a failing call records nothing)."""
    answered = []
    function = getattr(module, name)

    def recorded(*args, **kwargs):
        value = function(*args, **kwargs)
        answered.append(value)
        return value
    setattr(module, name, recorded)
    return answered


class LiveProcesses:
    """Processes that stay alive while a test lists them on simulated GPUs."""

    def __init__(self, count: int):
        self.children = [subprocess.Popen(["sleep", "120"]) for _ in range(count)]
        self.pids = [child.pid for child in self.children]

    def __enter__(self):
        return self.pids

    def __exit__(self, *exc):
        for child in self.children:
            child.kill()
            child.wait()
