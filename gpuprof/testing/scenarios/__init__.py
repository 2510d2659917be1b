"""GPU scenarios: programs with a known GPU-side verdict, each on the machine it needs.

A scenario names a program in `programs/` (a plain torch program written for a real GPU, run
unchanged on the simulated one), the simulated machine it runs on, its environment, and what
gpuprof must find. `gpuprof doctor --simulated` runs every scenario on the simulated device and
`gpuprof doctor --verify` the ones marked `real` on the GPU at hand; CI runs the simulated ones."""

import os
from dataclasses import dataclass, field

from gpuprof.testing.simgpu.machine import Machine

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")


@dataclass
class Expect:
    """What gpuprof must find. `gpu` is the NVML index of the GPU the job used (its UUID is
    checked, read from the machine); fixes are ids that must be among the advice."""
    bottleneck: str = None
    fixes: tuple = ()
    gpu: int = None
    gpus_per_rank: dict = None          # {rank: NVML index}
    sampled_gpus: tuple = None          # NVML indices still sampled at the end (fault isolation)
    sm_activity: bool = None            # an SM-activity (GPM) figure present
    no_note: str = None                 # a phrase no report note may contain
    note: str = None                    # a phrase some report note must contain


@dataclass
class Scenario:
    name: str
    program: str                        # a file in PROGRAMS, or an absolute path
    expect: Expect
    machine: Machine = field(default_factory=Machine)
    env: dict = field(default_factory=dict)    # "{uuid:N}" is replaced by GPU N's UUID
    args: tuple = ()
    launcher: tuple = ()                # e.g. ("torchrun", "--nproc-per-node", "2"): run as `-- launcher program`
    real: bool = False                  # also meaningful on a real single GPU (`doctor --verify`)
    what: str = ""                      # one line: what it exercises

    def program_path(self) -> str:
        return self.program if os.path.isabs(self.program) else os.path.join(PROGRAMS, self.program)

    def environment_for(self, machine: Machine) -> dict:
        """The scenario's env with each "{uuid:N}" replaced by that GPU's UUID."""
        out = {}
        for key, value in self.env.items():
            for i, gpu in enumerate(machine.gpus):
                value = value.replace("{uuid:%d}" % i, gpu.uuid)
                for j, inst in enumerate(gpu.mig):
                    value = value.replace("{mig:%d:%d}" % (i, j), inst.uuid)
            out[key] = value
        return out
