"""Which of a simulated machine's GPUs a CUDA process sees, in which order, and what each one is.

CUDA's rules ("CUDA Environment Variables" in the CUDA C Programming Guide): CUDA_DEVICE_ORDER
orders the devices (FASTEST_FIRST, the default, or PCI_BUS_ID); CUDA_VISIBLE_DEVICES then picks and
reorders them: integer indices (into that order), GPU UUIDs or unique prefixes of them ("GPU-8932f937"),
MIG device UUIDs ("MIG-<uuid>", or the older "MIG-GPU-<uuid>/<gpu instance>/<compute instance>").
Unset: every device; set but empty: none. The first invalid entry ends the list; an entry named
twice empties it (PyTorch's own reading of the variable, `torch.cuda._parse_visible_devices`,
follows the driver there). A process enumerates at most one MIG device (the MIG User Guide, "CUDA
Device Enumeration"); a GPU in MIG mode stands for its first MIG device when no MIG UUID names one.

docs/simulated-gpu.md says what was chosen where the documents are silent."""

import dataclasses
import os
from dataclasses import dataclass

from .machine import device_dir, mig_dir


@dataclass(frozen=True)
class DeviceSpec:
    """One CUDA device as the process sees it: a whole GPU or one MIG instance of it."""
    nvml_index: int                 # the GPU's NVML index (its folder in the machine)
    gpu_instance_id: int            # 0 for a whole GPU
    name: str
    uuid: str                       # NVML's spelling: "GPU-..." or "MIG-..."
    pci_bus_id: str
    memory_bytes: int
    sm_count: int
    capability: tuple
    clock_mhz: float                # the SM clock kernels run at
    max_clock_mhz: float
    tflops: dict
    efficiency: object              # a share of the peak, or {math mode: share}: matmuls
    memory_bandwidth: float
    pinned_copy_bandwidth: float
    pageable_copy_bandwidth: float
    copy_engines: int
    min_kernel_s: float
    context_bytes: int
    conv_efficiency: object = None  # the same for convolutions (None: as matmuls)
    pageable_d2h_bandwidth: float = None
    copy_latency_s: float = 0.0
    kernel_gap_s: float = 0.0
    attention_tflops: object = None         # fused attention's rate by dtype (a tuple of items)
    link_bandwidth: float = 360e9           # bytes/s a collective moves through each GPU's NVLink
    collective_latency_s: float = 15e-6     # a collective's fixed cost
    small_matmul_exponent: float = 0.0      # a matmul filling a share f < 1 of the SMs: efficiency x f**this

    @property
    def is_mig(self) -> bool:
        return self.gpu_instance_id > 0

    def activity_dir(self, folder: str) -> str:
        """Where this process's work on the device is kept (the GPU's or the MIG instance's folder)."""
        if self.is_mig:
            return mig_dir(folder, self.nvml_index, self.gpu_instance_id)
        return device_dir(folder, self.nvml_index)


def whole_gpu(gpu, nvml_index: int) -> DeviceSpec:
    busy = gpu.busy_sm_clock_mhz if 0 < gpu.busy_sm_clock_mhz < gpu.max_sm_clock_mhz else gpu.max_sm_clock_mhz
    return DeviceSpec(nvml_index=nvml_index, gpu_instance_id=0, name=gpu.name, uuid=gpu.uuid,
                      pci_bus_id=gpu.pci_bus_id, memory_bytes=gpu.memory_bytes, sm_count=gpu.sm_count,
                      capability=tuple(gpu.compute_capability), clock_mhz=busy,
                      max_clock_mhz=gpu.max_sm_clock_mhz, tflops=dict(gpu.tflops), efficiency=_frozen(gpu.efficiency),
                      memory_bandwidth=gpu.memory_bandwidth, pinned_copy_bandwidth=gpu.pinned_copy_bandwidth,
                      pageable_copy_bandwidth=gpu.pageable_copy_bandwidth, copy_engines=gpu.copy_engines,
                      min_kernel_s=gpu.min_kernel_s, context_bytes=gpu.context_bytes,
                      conv_efficiency=_frozen(gpu.conv_efficiency), pageable_d2h_bandwidth=gpu.pageable_d2h_bandwidth,
                      copy_latency_s=gpu.copy_latency_s, kernel_gap_s=gpu.kernel_gap_s,
                      link_bandwidth=gpu.link_bandwidth, collective_latency_s=gpu.collective_latency_s,
                      attention_tflops=_frozen(gpu.attention_tflops),
                      small_matmul_exponent=getattr(gpu, "small_matmul_exponent", 0.0))


def _frozen(value):
    """A spec is hashable: a dict of efficiencies becomes a tuple of its items."""
    return tuple(sorted(value.items())) if isinstance(value, dict) else value


def mig_instance(gpu, instance, nvml_index: int) -> DeviceSpec:
    """A MIG instance: its share of the SMs sets its compute, its share of the memory its bandwidth."""
    whole = whole_gpu(gpu, nvml_index)
    compute = instance.sm_count / max(gpu.sm_count, 1)
    memory = instance.memory_bytes / max(gpu.memory_bytes, 1)
    return dataclasses.replace(whole, gpu_instance_id=instance.gpu_instance_id,
                               name=f"{gpu.name} MIG {instance.profile}", uuid=instance.uuid,
                               memory_bytes=instance.memory_bytes, sm_count=instance.sm_count,
                               tflops={k: v * compute for k, v in gpu.tflops.items()},
                               attention_tflops=tuple((k, v * compute) for k, v in (gpu.attention_tflops or {}).items()),
                               memory_bandwidth=gpu.memory_bandwidth * memory)


def cuda_order(machine, order: str = None) -> list:
    """NVML indices of the machine's GPUs in CUDA's order. FASTEST_FIRST ranks by SMs times top
    clock (NVIDIA leaves its heuristic unnamed), ties by PCI bus id; PCI_BUS_ID by bus id alone."""
    indices = list(range(len(machine.gpus)))
    by_bus = sorted(indices, key=lambda i: machine.gpus[i].pci_bus_id.lower())
    if (order or "FASTEST_FIRST").strip().upper() == "PCI_BUS_ID":
        return by_bus
    return sorted(by_bus, key=lambda i: -machine.gpus[i].sm_count * machine.gpus[i].max_sm_clock_mhz)


def visible_devices(machine, environ=None) -> list:
    """The process's CUDA devices, CUDA ordinal order, as DeviceSpecs."""
    environ = os.environ if environ is None else environ
    order = cuda_order(machine, environ.get("CUDA_DEVICE_ORDER"))
    text = environ.get("CUDA_VISIBLE_DEVICES")
    picked = [(i, None) for i in order] if text is None else _parse(text, machine, order)
    out, mig_taken = [], False
    for nvml_index, instance in picked:
        gpu = machine.gpus[nvml_index]
        if gpu.mig:
            if mig_taken:
                continue
            mig_taken = True
            out.append(mig_instance(gpu, instance or gpu.mig[0], nvml_index))
        else:
            out.append(whole_gpu(gpu, nvml_index))
    return out


def _parse(text: str, machine, order: list) -> list:
    """(NVML index, MIG instance or None) for each valid entry, up to the first invalid one."""
    picked = []
    if not text.strip():
        return picked
    for entry in text.split(","):
        found = _entry(entry.strip(), machine, order)
        if found is None:
            break
        if found in picked:
            return []
        picked.append(found)
    return picked


def _entry(entry: str, machine, order: list):
    lowered = entry.lower()
    if lowered.startswith("gpu-"):
        matches = [i for i, gpu in enumerate(machine.gpus) if gpu.uuid.lower().startswith(lowered)]
        return (matches[0], None) if len(matches) == 1 else None
    if lowered.startswith("mig-"):
        return _mig_entry(lowered, machine)
    digits = _leading_integer(entry)
    if digits is None or digits >= len(order):
        return None
    return order[digits], None


def _mig_entry(lowered: str, machine):
    if lowered.startswith("mig-gpu-"):          # MIG-GPU-<uuid>/<gpu instance>/<compute instance>
        parts = lowered[4:].split("/")
        if len(parts) != 3 or not parts[1].isdigit():
            return None
        for i, gpu in enumerate(machine.gpus):
            if gpu.uuid.lower() == parts[0]:
                for inst in gpu.mig:
                    if inst.gpu_instance_id == int(parts[1]):
                        return i, inst
        return None
    matches = [(i, inst) for i, gpu in enumerate(machine.gpus) for inst in gpu.mig
               if inst.uuid.lower().startswith(lowered)]
    return matches[0] if len(matches) == 1 else None


def _leading_integer(entry: str):
    """The integer an entry starts with, as the driver's strtoul reads it ("1gpu2" is 1); None for
    a negative or missing one."""
    end = 0
    while end < len(entry) and (entry[end].isdigit() or (end == 0 and entry[end] == "+")):
        end += 1
    body = entry[:end].lstrip("+")
    return int(body) if body else None
