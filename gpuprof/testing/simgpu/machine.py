"""A simulated machine's GPUs and driver, as one JSON file every process of a run reads.

The machine folder (GPUPROF_SIMGPU names it) holds `machine.json` and one sub-folder per GPU in
NVML's order (PCI bus order), where each process that uses that GPU keeps its activity
(`gpuprof.testing.simgpu.state`). The job's side (the CUDA face inside torch) and the supervisor's
side (the NVML face behind `pynvml`) both read the machine from here, as a real driver is shared."""

import dataclasses
import json
import os
import uuid as uuidlib
from dataclasses import dataclass, field

from . import measured

ENV = "GPUPROF_SIMGPU"
MACHINE_FILE = "machine.json"
GIB = 1 << 30


@dataclass
class MigInstance:
    """One MIG GPU instance (with one compute instance) on a GPU in MIG mode."""
    profile: str = "1g.10gb"
    sm_count: int = 16
    memory_bytes: int = 10 * GIB
    gpu_instance_id: int = 0
    uuid: str = ""
    slot: int = -1          # its MIG device index on the GPU (-1: the next one); a slot may stay empty


def _measured(key):
    """A default taken from the real GPU's table (`measured.H200`), copied so no Gpu shares it."""
    value = measured.H200[key]
    return field(default_factory=lambda: dict(value)) if isinstance(value, dict) else value


@dataclass
class Gpu:
    """One GPU. Defaults describe an H100 SXM; the speeds decide how long each kernel and copy takes.
    Efficiencies, launch and copy costs, the context's memory are what an H200 measured
    (`measured.py`: the same GH100 chip); the memory bandwidth is that H200's scaled to HBM3."""
    name: str = "NVIDIA H100 80GB HBM3"
    uuid: str = ""                         # filled by Machine: "GPU-xxxxxxxx-xxxx-..."
    pci_bus_id: str = ""                   # filled by Machine: NVML's order is PCI bus order
    memory_bytes: int = 80 * GIB
    sm_count: int = 132
    compute_capability: tuple = (9, 0)
    max_sm_clock_mhz: int = 1980
    idle_sm_clock_mhz: int = 345
    busy_sm_clock_mhz: int = 0             # 0: the top clock; lower with `clock_reasons` set while busy
    busy_clock_reasons: int = 0            # nvmlClocksEventReasons bits held while busy (0x4 sw power cap)
    idle_clock_reasons: int = 0            # bits reported beside GpuIdle once idle (0x4: a power cap set low)
    idle_after_s: float = 0.25             # the clocks drop to idle once no kernel ran for this long
    tflops: dict = field(default_factory=lambda: {"float32": 67.0, "tf32": 494.0, "bfloat16": 989.0,
                                                  "float16": 989.0, "int8": 1979.0})
    # share of the peak a large matmul reaches, by math mode (one number: every mode)
    efficiency: object = _measured("matmul_efficiency")
    conv_efficiency: object = _measured("conv_efficiency")     # the same for convolutions
    # how a matmul's efficiency falls when its work fills fewer than all the SMs (device.matmul_fill)
    small_matmul_exponent: float = _measured("small_matmul_exponent")
    # fused scaled_dot_product_attention (forward and backward) by dtype, TFLOPS: torch's default
    # kernel for each (cuDNN or flash in bf16/fp16, memory-efficient in float32)
    attention_tflops: dict = field(default_factory=lambda: dict(measured.H200["attention_tflops"],
                                                                float16=measured.H200["attention_tflops"]["bfloat16"]))
    memory_bandwidth: float = round(measured.H200["memory_bandwidth"] * measured.H100_MEMORY_SCALE, -9)
    pinned_copy_bandwidth: float = _measured("pinned_copy_bandwidth")       # bytes/s, page-locked host memory
    pageable_copy_bandwidth: float = _measured("pageable_copy_bandwidth")   # host to device, staged by the driver
    pageable_d2h_bandwidth: float = _measured("pageable_d2h_bandwidth")     # device to pageable host memory
    copy_latency_s: float = _measured("copy_latency_s")     # each copy's fixed cost on its engine
    copy_engines: int = 2
    min_kernel_s: float = _measured("min_kernel_s")         # a kernel's device time is never less
    kernel_gap_s: float = _measured("kernel_gap_s")         # the device's idle gap between queued kernels
    idle_power_w: float = 70.0
    busy_power_w: float = 700.0
    context_bytes: int = _measured("context_bytes")         # a process's CUDA context and libraries
    mig: list = field(default_factory=list)   # [MigInstance]: non-empty puts the GPU in MIG mode
    gpm: bool = True                       # GPU Performance Monitoring (Hopper and later)
    # GPM SM occupancy is SM activity times this: the share of an active SM's warp slots its kernels
    # fill (the records hold no warp counts; 1.0 is the upper bound)
    active_sm_occupancy: float = 1.0
    # NVML queries this board answers NotSupported (a GeForce or older board: "nvmlDeviceGetPcieThroughput",
    # "nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetTotalEnergyConsumption", ...)
    unsupported: list = field(default_factory=list)
    fail_after_reads: int = -1             # NVML answers so many utilisation reads, then the GPU is lost
    pcie_generation: int = 5               # 3 or 4: copy bandwidths left at their defaults follow the link
    # Collectives among GPUs (simulated NCCL, collectives.py): the bus bandwidth an all-reduce reaches
    # through each GPU's NVLink, an assumption: 80% of NVLink 4's 450 GB/s each way (the H100 SXM data
    # sheet's 900 GB/s is both directions), nccl-tests' "bus bandwidth" measure; and a fixed cost each
    link_bandwidth: float = 360e9
    collective_latency_s: float = 15e-6


#: A PCIe x16 link's rate each way by generation, GB/s (PCI-SIG: 8, 16, 32 GT/s a lane for gen 3-5,
#: 128b/130b): the measured copy bandwidths are a gen-5 H200's, and a GPU on an older link copies at
#: its share of that link.
PCIE_X16_GBS = {3: 15.75, 4: 31.5, 5: 63.0}


def _follow_pcie(gpu: Gpu) -> None:
    """Copy bandwidths left at the gen-5 defaults scaled to the GPU's PCIe generation (once: a scaled
    figure is no longer the default)."""
    share = PCIE_X16_GBS.get(gpu.pcie_generation, PCIE_X16_GBS[5]) / PCIE_X16_GBS[5]
    if share == 1.0:
        return
    for name in ("pinned_copy_bandwidth", "pageable_copy_bandwidth", "pageable_d2h_bandwidth"):
        if getattr(gpu, name) == measured.H200[name]:
            setattr(gpu, name, measured.H200[name] * share)


def h200(**overrides) -> Gpu:
    """An H200 SXM as measured (`measured.H200`): the H100's chip with 141 GB of HBM3e."""
    return Gpu(**{"name": "NVIDIA H200", "memory_bytes": 150_109_880_320,
                  "memory_bandwidth": measured.H200["memory_bandwidth"], **overrides})


@dataclass
class Machine:
    gpus: list = field(default_factory=lambda: [Gpu()])
    # present | missing (nvidia-ml-py not installed) | no_driver (no libnvidia-ml: nvmlInit finds no
    # library) | init_fails (driver/library version mismatch)
    nvml: str = "present"
    pid_mode: str = "same"                 # same | host (NVML lists host PIDs) | none (no process list)
    mps: bool = False                      # processes reach the GPU through an MPS server
    used_memory_known: bool = True         # False: usedGpuMemory is None (NVML_VALUE_NOT_AVAILABLE)
    unknown_memory_pids: list = field(default_factory=list)   # processes whose usedGpuMemory alone is None
    driver_version: str = "550.54.15"
    cuda_driver_version: int = 12040
    util_sample_period_s: float = _measured("util_sample_period_s")   # NVML utilisation's past period
    pcie_read_s: float = 0.02              # nvmlDeviceGetPcieThroughput samples over 20 ms
    host_pid_offset: int = 3_000_000       # pid_mode host: a container PID plus this is the host PID
    mps_server_pid: int = 4242
    # How a host thread waits for the device: "spin" burns its core as CUDA's default schedule does
    # (cudaDeviceScheduleAuto spins while a process has fewer contexts than the machine has cores);
    # "sleep" leaves the core free, the default here, where CI's 2 cores run every scenario
    host_wait: str = "sleep"
    # Every device duration (kernels, the gaps between them, copies, torch.cuda._sleep) times this.
    # The simulated host spends longer per op than a real one (the face's own bookkeeping); slowing
    # the device by the same factor keeps the two in a real machine's proportion, so a job bound by
    # its GPU on a real machine is bound by it here. 1.0: the device's figures as measured.
    time_scale: float = measured.SIMULATED_HOST_SLOWDOWN
    seed: str = "gpuprof-simgpu"

    def __post_init__(self):
        self.gpus = [g if isinstance(g, Gpu) else Gpu(**g) for g in self.gpus]
        for i, gpu in enumerate(self.gpus):
            _follow_pcie(gpu)
            gpu.mig = [m if isinstance(m, MigInstance) else MigInstance(**m) for m in gpu.mig]
            gpu.compute_capability = tuple(gpu.compute_capability)
            gpu.uuid = gpu.uuid or "GPU-" + str(uuidlib.uuid5(uuidlib.NAMESPACE_OID, f"{self.seed}/{i}"))
            gpu.pci_bus_id = gpu.pci_bus_id or f"00000000:{0x18 + 0x10 * i:02X}:00.0"
            for j, inst in enumerate(gpu.mig):
                inst.gpu_instance_id = inst.gpu_instance_id or j + 1
                inst.uuid = inst.uuid or "MIG-" + str(uuidlib.uuid5(uuidlib.NAMESPACE_OID, f"{self.seed}/{i}/mig{j}"))

    def uuid(self, index: int) -> str:
        """The UUID of the GPU at NVML index `index` (PCI bus order)."""
        return self.gpus[index].uuid

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def create(self, folder: str) -> str:
        """Write the machine into `folder` (made if missing) and return the folder."""
        os.makedirs(folder, exist_ok=True)
        for i, gpu in enumerate(self.gpus):
            os.makedirs(device_dir(folder, i), exist_ok=True)
            for inst in gpu.mig:
                os.makedirs(mig_dir(folder, i, inst.gpu_instance_id), exist_ok=True)
        tmp = os.path.join(folder, MACHINE_FILE + ".tmp")
        with open(tmp, "w") as out:
            json.dump(self.to_dict(), out, indent=1)
        os.replace(tmp, os.path.join(folder, MACHINE_FILE))
        return folder


def load(folder: str = None) -> Machine:
    """The machine in `folder`, or in the folder GPUPROF_SIMGPU names."""
    folder = folder or os.environ[ENV]
    with open(os.path.join(folder, MACHINE_FILE)) as source:
        return Machine(**json.load(source))


def device_dir(folder: str, nvml_index: int) -> str:
    """Where the processes using GPU `nvml_index` keep their activity."""
    return os.path.join(folder, f"dev{nvml_index}")


def mig_dir(folder: str, nvml_index: int, gpu_instance_id: int) -> str:
    """Where the processes using one MIG instance of GPU `nvml_index` keep their activity."""
    return os.path.join(device_dir(folder, nvml_index), f"mig{gpu_instance_id}")
