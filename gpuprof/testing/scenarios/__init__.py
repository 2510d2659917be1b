"""GPU scenarios: programs with a known GPU-side verdict, each on the machine it needs.

A scenario names a program in `programs/` (a plain torch program written for a real GPU, run
unchanged on the simulated one), the simulated machine it runs on, its environment, and what
gpuprof must find. `gpuprof doctor --simulated` runs every scenario on the simulated device and
`gpuprof doctor --verify` the ones marked `real` on the GPU at hand; CI runs the simulated ones."""

import os
from dataclasses import dataclass, field

from gpuprof.judge.verdict.bottlenecks import COMM, COMPUTE, HOST_OVERHEAD, INPUT_CPU, TRANSFER_H2D
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
    uuid: str = None                    # the job's GPU by UUID placeholder ("{mig:0:1}"), where `gpu` cannot say
    no_fixes: tuple = ()                # ids that must not be among the advice
    straggler: int = None               # the rank the report must name as the job's straggler


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

    def command(self, python: str) -> list:
        """What follows `gpuprof run`: the program and its arguments, after `--` and the launcher
        when there is one ("{python}" in the launcher is this interpreter)."""
        program = [self.program_path(), *self.args]
        if not self.launcher:
            return program
        return ["--", *(python if part == "{python}" else part for part in self.launcher), *program]

    def environment_for(self, machine: Machine) -> dict:
        """The scenario's env with each "{uuid:N}" replaced by that GPU's UUID."""
        return {key: resolve(value, machine) for key, value in self.env.items()}

    def expected_uuid(self, machine: Machine):
        """The UUID of the GPU (or MIG instance) the job must be found on, or None."""
        if self.expect.uuid:
            return resolve(self.expect.uuid, machine)
        return machine.uuid(self.expect.gpu) if self.expect.gpu is not None else None


def resolve(text: str, machine: Machine) -> str:
    """`text` with "{uuid:N}" as GPU N's UUID and "{mig:N:J}" as the UUID of its MIG instance J."""
    for i, gpu in enumerate(machine.gpus):
        text = text.replace("{uuid:%d}" % i, gpu.uuid)
        for j, inst in enumerate(gpu.mig):
            text = text.replace("{mig:%d:%d}" % (i, j), inst.uuid)
    return text


#: The bus bandwidth NCCL's all-reduce reaches between two GPUs joined only by PCIe 4.0 x16 through
#: the host (no NVLink), bytes/s: nccl-tests' all_reduce_perf there reaches about 20 GB/s
#: (NVIDIA/nccl-tests#178), below the link's 31.5 GB/s each way (PCI-SIG: 16 GT/s a lane, 128b/130b).
PCIE4_ALLREDUCE_BANDWIDTH = 20e9


def _gpus(n: int, **kwargs) -> list:
    from gpuprof.testing.simgpu.machine import Gpu
    return [Gpu(**kwargs) for _ in range(n)]


def _scenarios() -> list:
    from gpuprof.testing.simgpu.machine import Gpu, MigInstance
    torchrun = ("{python}", "-m", "torch.distributed.run", "--nproc-per-node", "2")
    return [
        Scenario("compute-pageable", "compute_pageable.py", Expect(COMPUTE.id, gpu=0), real=True,
                 args=("--batch", "8192"),
                 what="a compute-bound job whose plain .to('cuda') copies wait for the previous step's kernels"),
        Scenario("copy-bound", "copy_bound.py", Expect(TRANSFER_H2D.id, fixes=("pin-memory", "uint8-transfer"), gpu=0),
                 real=True, what="large pageable float32 batches of uint8 values into a tiny model"),
        Scenario("starved", "starved.py", Expect(INPUT_CPU.id, fixes=("num-workers",), gpu=0), real=True,
                 what="per-sample CPU work in the training process feeding a small GPU model"),
        Scenario("launch-bound", "launch_bound.py", Expect(HOST_OVERHEAD.id, gpu=0), real=True,
                 what="well over a thousand tiny kernels and an .item() sync per step"),
        Scenario("container-8-gpus-by-uuid", "compute_pageable.py", Expect(COMPUTE.id, gpu=5),
                 machine=Machine(gpus=_gpus(8), pid_mode="none"), env={"CUDA_VISIBLE_DEVICES": "{uuid:5}"},
                 args=("--steps", "30", "--batch", "8192"),
                 what="8 GPUs in a container whose NVML lists no process; the job on GPU 5 named by UUID"),
        Scenario("host-pids-mps", "compute_pageable.py", Expect(COMPUTE.id, gpu=1),
                 machine=Machine(gpus=_gpus(2), pid_mode="host", mps=True, used_memory_known=False),
                 env={"CUDA_VISIBLE_DEVICES": "1"}, args=("--steps", "30", "--batch", "8192"),
                 what="NVML lists host PIDs (an MPS server), usedGpuMemory unknown; the job on GPU 1"),
        Scenario("fastest-first", "compute_pageable.py", Expect(COMPUTE.id, gpu=2),
                 machine=Machine(gpus=_gpus(2, name="NVIDIA A100-SXM4-80GB", sm_count=108, compute_capability=(8, 0),
                                            tflops={"float32": 19.5, "tf32": 156.0, "bfloat16": 312.0, "float16": 312.0})
                                 + _gpus(1) + _gpus(1, name="NVIDIA A100-SXM4-80GB", sm_count=108,
                                                    compute_capability=(8, 0),
                                                    tflops={"float32": 19.5, "tf32": 156.0, "bfloat16": 312.0,
                                                            "float16": 312.0})),
                 args=("--steps", "30", "--batch", "8192"),
                 what="CUDA numbers the fastest GPU first: cuda:0 is NVML's GPU 2"),
        Scenario("mig-slice", "compute_pageable.py", Expect(COMPUTE.id, sm_activity=True, uuid="{mig:0:1}"),
                 machine=Machine(gpus=[Gpu(mig=[MigInstance(), MigInstance()])]),
                 env={"CUDA_VISIBLE_DEVICES": "{mig:0:1}"}, args=("--steps", "15", "--batch", "2048"),
                 what="a MIG slice: utilisation is not supported there, SM activity comes from GPM"),
        Scenario("one-gpu-lost", "compute_pageable.py", Expect(COMPUTE.id, gpu=0, sampled_gpus=(0,)),
                 machine=Machine(gpus=[Gpu(), Gpu(fail_after_reads=3)]), args=("--steps", "30", "--batch", "8192"),
                 what="the other GPU stops answering NVML early in the run; GPU 0 is still sampled"),
        Scenario("power-cap-idle-gaps", "paused_compute.py", Expect(no_note="check cooling"),
                 machine=Machine(gpus=[Gpu(busy_sm_clock_mhz=1900, busy_clock_reasons=0x4)]),
                 args=("--steps", "30"),
                 what="a power cap that trims the busy clock 4% and idle gaps at the idle clock: no cooling note"),
        Scenario("thermal-throttle", "paused_compute.py", Expect(note="check cooling"),
                 machine=Machine(gpus=[Gpu(busy_sm_clock_mhz=1300, busy_clock_reasons=0x40)]),
                 args=("--steps", "30"),
                 what="a GPU that runs busy at two thirds of its top clock under thermal slowdown: the note"),
        Scenario("two-ranks-two-gpus", "two_ranks.py", Expect(COMPUTE.id, gpus_per_rank={0: 0, 1: 1}),
                 machine=Machine(gpus=_gpus(2)), launcher=torchrun, args=("--steps", "20"),
                 what="torchrun with two ranks, each on its own GPU"),
        # Programs as users write them; each docstring argues what a real H100 shows.
        # Two workers, as the H200 run had: one worker's per-sample numpy on a CPU without AVX-512 (55-60 ms
        # a batch of 512 on an AVX2 EPYC) is about the simulated step and left the job input-bound; with
        # two the wait is 10-15% of a step.
        Scenario("resnet-workers-pinned", "resnet_workers.py", Expect(COMPUTE.id), real=True,
                 args=("--workers", "2"),
                 what="a ResNet-18 on CIFAR-size images, two workers, pinned non-blocking copies"),
        Scenario("resnet-heavy-augmentation", "resnet_workers.py", Expect(INPUT_CPU.id),
                 args=("--augment", "heavy", "--steps", "12"),
                 what="the same with per-sample colour jitter and blur in numpy"),
        Scenario("mlp-adam-item", "mlp_adam_item.py", Expect(HOST_OVERHEAD.id, fixes=("compile",)), real=True,
                 what="a small MLP with Adam and .item() every step: launch-bound"),
        Scenario("float-pixels-pageable", "float_pixels_pageable.py",
                 Expect(TRANSFER_H2D.id, fixes=("uint8-transfer", "pin-memory")), real=True,
                 what="8-bit pixels held as float32, sliced and copied pageable without a DataLoader"),
        Scenario("wide-mlp-item", "wide_mlp_item.py", Expect(COMPUTE.id, fixes=("tf32", "mixed-precision")), real=True,
                 args=("--steps", "10"),
                 what="a wide float32 MLP with .item() every step: the sync costs nothing notable"),
        Scenario("ddp-power-capped", "ddp_ranks.py", Expect(straggler=1, no_fixes=("ddp",)),
                 machine=Machine(gpus=[Gpu(), Gpu(busy_sm_clock_mhz=1400, busy_clock_reasons=0x4)]),
                 launcher=torchrun,
                 what="two DDP ranks over NCCL, the second GPU power-capped: that rank is the straggler"),
        # 16 steps: on a loaded 2-core machine one rank's host can fall a few hundred ms behind once,
        # which over 7 measured steps of ~0.29 s left the other waiting a fifth of the window (comm).
        Scenario("fsdp-two-ranks", "fsdp_ranks.py", Expect(COMPUTE.id, gpus_per_rank={0: 0, 1: 1}, no_fixes=("ddp",)),
                 machine=Machine(gpus=_gpus(2)), launcher=torchrun, args=("--steps", "16"),
                 what="two ranks training a wide float32 MLP sharded with FSDP2 (fully_shard) over NCCL"),
        Scenario("ddp-pcie-no-nvlink", "ddp_pcie.py",
                 Expect(COMM.id, fixes=("ddp-buckets", "ddp-no-sync"), gpus_per_rank={0: 0, 1: 1}, no_fixes=("ddp",)),
                 machine=Machine(gpus=_gpus(2, pcie_generation=4, link_bandwidth=PCIE4_ALLREDUCE_BANDWIDTH)),
                 launcher=torchrun, args=("--steps", "20"),
                 what="two DDP ranks over PCIe 4.0 without NVLink, 67M parameters and 64 rows a step: the all-reduce"),
        Scenario("gpt-fp32", "gpt.py", Expect(COMPUTE.id, fixes=("tf32", "mixed-precision")), real=True,
                 args=("--steps", "8"),
                 what="a 134M-parameter GPT in float32"),
        Scenario("gpt-bf16", "gpt.py", Expect(COMPUTE.id), args=("--precision", "bf16", "--batch", "64", "--steps", "8"),
                 real=True, what="the same GPT under bf16 autocast, 64 sequences a step"),
    ]


#: Every scenario, in the order `gpuprof doctor --simulated` runs them.
SCENARIOS = _scenarios()


def by_name(name: str):
    """The scenario called `name`, or None."""
    return next((s for s in SCENARIOS if s.name == name), None)
