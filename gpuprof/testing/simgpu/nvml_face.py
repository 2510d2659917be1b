"""The simulated GPU's NVML face: nvidia-ml-py's `pynvml` interface answering from a machine folder.

The supervisor samples a simulated run exactly as a real one, through `pynvml`: the shim module
(`shim/pynvml.py`) re-exports the real module's names (constants, ctypes structures, NVMLError
classes) and replaces its device functions with the methods of an `NvmlFace`, which reads the
machine (`machine.json`) and every process's activity files (`state`) the way a driver reads its
counters. Each reading follows NVML's documented meaning; docs/simulated-gpu.md ("NVML face") says
which document, and what the simulation approximates.

Nothing here changes the simulated device: NVML's Set/Reset/Clear/Create/Destroy functions raise
`DeviceChangeRefused` and leave a line in `nvml-changes.log` in the machine folder, so a sampler that
tries to change clocks or modes is caught even when it swallows the error."""

import ctypes
import os
import re
import threading
import time
import types

from . import SHIM, busy, real_nvml, state
from .activity_log import ActivityLog
from .machine import MACHINE_FILE, device_dir, load, mig_dir
from .nvml_gpm import GpmQueries
from .real_nvml import address_of

CHANGES_LOG = "nvml-changes.log"

MIG_SLOTS = 7                 # MIG devices an A100/H100 can hold at most (seven 1g instances)
NOT_MIG = 0xFFFFFFFF          # gpuInstanceId / computeInstanceId of a process outside MIG
RESERVED_SHARE = 1 / 160      # device memory the driver and firmware keep (about 0.5 GiB of 80)
KERNEL_MEMORY_SHARE = 0.5     # share of a kernel's time its SMs spend reading or writing memory
POWER_WINDOW_S = 1.0          # Ampere-and-later power readings average the past second
SETTLED_S = 5.0               # activity older than this no longer changes: energy sums it once
MEMORY_CLOCK_MHZ = 2619       # HBM3 clock of an H100 SXM
PCI_DEVICE_IDS = (("H100", 0x233010DE), ("A100", 0x20B210DE))

CHANGING = re.compile(r"^nvml(?:Device|Unit|System|Vgpu\w*?|GpuInstance|ComputeInstance|Gpm)?"
                      r"(?:Set|Reset|Clear|Create|Destroy|Modify|Remove|PowerSmoothing)")


class DeviceChangeRefused(AssertionError):
    """A caller tried to change the simulated device's settings: gpuprof only reads."""


class _Target:
    """What one handle names: a GPU, or one MIG instance of it."""

    def __init__(self, index, gpu, mig=None):
        self.index, self.gpu, self.mig = index, gpu, mig
        self.memory = ctypes.create_string_buffer(8)    # a real address, as a driver's handle has
        self.address = ctypes.addressof(self.memory)


class NvmlFace(GpmQueries):
    """NVML's device functions over one simulated machine; methods carry NVML's own names."""

    def __init__(self, folder: str, real, machine=None, clock=time.monotonic, sleep=time.sleep):
        self.folder = os.path.abspath(folder)
        self.real = real
        self.machine = machine or load(folder)
        self.clock, self.sleep = clock, sleep
        self._lock = threading.Lock()
        self._sessions = 0
        self._reads = [0] * len(self.machine.gpus)
        self._lost = set()          # indices of GPUs that fell off the bus
        self._samples = {}          # GPM sample address -> (its buffer, (time, gpu index, instance) or None)
        self._logs = {}             # activity folder -> ActivityLog
        self._settled = {}          # handle address -> (time, busy seconds up to it) for energy
        self._targets = {}
        self._gpus, self._migs = [], []
        for index, gpu in enumerate(self.machine.gpus):
            self._gpus.append(self._add(_Target(index, gpu)))
            self._migs.append(_slots(self._add(_Target(index, gpu, inst)) for inst in gpu.mig))
        self.origin = self._origin()

    def entry_points(self) -> dict:
        """{NVML function name: bound method} for every function the face answers; a query some GPU
        lists in its `unsupported` answers NotSupported on that GPU's handles."""
        refused = {name for gpu in self.machine.gpus for name in gpu.unsupported}
        points = {}
        for name in dir(type(self)):
            if name.startswith("nvml"):
                method = getattr(self, name)
                base = re.sub(r"_v\d+$", "", name)
                points[name] = self._unless_unsupported(base, method) if base in refused else method
        return points

    def _unless_unsupported(self, name, method):
        def call(device, *args, **kwargs):
            if name in self._target(device).gpu.unsupported:
                self._fail("NOT_SUPPORTED")
            return method(device, *args, **kwargs)
        call.__name__ = method.__name__
        return call

    def refusal(self, name: str):
        """A stand-in for NVML function `name`, which would change the device."""
        def refuse(*args, **kwargs):
            try:
                with open(os.path.join(self.folder, CHANGES_LOG), "a") as log:
                    log.write(f"{os.getpid()} {name}\n")
            except OSError:
                pass
            raise DeviceChangeRefused(f"{name}: gpuprof must never change device settings")
        refuse.__name__ = name
        return refuse

    def unmodelled(self, function):
        """A real pynvml function the face does not answer: Uninitialized before nvmlInit, then the
        stand-in library's NotSupported."""
        def call(*args, **kwargs):
            self._check_init()
            return function(*args, **kwargs)
        call.__name__ = function.__name__
        return call

    # -- library ---------------------------------------------------------------------------------

    def nvmlInitWithFlags(self, flags=0):
        if self.machine.nvml == "init_fails":
            self._fail("LIB_RM_VERSION_MISMATCH")
        if self.machine.nvml == "no_driver":
            self._fail("LIBRARY_NOT_FOUND")
        with self._lock:
            self._sessions += 1

    def nvmlInit(self):
        self.nvmlInitWithFlags(0)

    def nvmlShutdown(self):
        self._check_init()
        with self._lock:
            self._sessions -= 1

    def nvmlSystemGetDriverVersion(self):
        self._check_init()
        return self.machine.driver_version

    def nvmlSystemGetNVMLVersion(self):
        self._check_init()
        return f"{self.machine.cuda_driver_version // 1000}.{self.machine.driver_version}"

    def nvmlSystemGetCudaDriverVersion(self):
        self._check_init()
        return int(self.machine.cuda_driver_version)

    nvmlSystemGetCudaDriverVersion_v2 = nvmlSystemGetCudaDriverVersion

    def nvmlSystemGetProcessName(self, pid):
        self._check_init()
        try:
            with open(f"/proc/{int(pid)}/comm") as source:
                return source.read().strip()
        except OSError:
            self._fail("NOT_FOUND")

    # -- finding devices -------------------------------------------------------------------------

    def nvmlDeviceGetCount(self):
        self._check_init()
        return len(self._gpus)

    def nvmlDeviceGetHandleByIndex(self, index):
        self._check_init()
        if not isinstance(index, int) or not 0 <= index < len(self._gpus):
            self._fail("INVALID_ARGUMENT")
        return self._handle(self._live(self._gpus[index]))

    def nvmlDeviceGetHandleByUUID(self, uuid):
        self._check_init()
        wanted = _text(uuid)
        for target in self._targets.values():
            if (target.mig.uuid if target.mig else target.gpu.uuid) == wanted:
                return self._handle(self._live(target))
        self._fail("NOT_FOUND")

    def nvmlDeviceGetHandleByPciBusId(self, pciBusId):
        self._check_init()
        wanted = _bus_address(_text(pciBusId))
        for target in self._gpus:
            if wanted is not None and _bus_address(target.gpu.pci_bus_id) == wanted:
                return self._handle(self._live(target))
        self._fail("NOT_FOUND")

    def nvmlDeviceGetIndex(self, handle):
        target = self._target(handle)
        if target.mig is not None:
            self._fail("INVALID_ARGUMENT")
        return target.index

    # -- identity --------------------------------------------------------------------------------

    def nvmlDeviceGetName(self, handle):
        target = self._target(handle)
        return f"{target.gpu.name} MIG {target.mig.profile}" if target.mig else target.gpu.name

    def nvmlDeviceGetUUID(self, handle):
        target = self._target(handle)
        return target.mig.uuid if target.mig else target.gpu.uuid

    def nvmlDeviceGetPciInfo(self, handle):
        target = self._target(handle)
        domain, bus, device, _function = _bus_address(target.gpu.pci_bus_id)
        info = self.real.nvmlPciInfo_t()
        info.busIdLegacy = f"{domain:04X}:{bus:02X}:{device:02X}.0"
        info.busId = f"{domain:08X}:{bus:02X}:{device:02X}.0"
        info.domain, info.bus, info.device = domain, bus, device
        info.pciDeviceId = next((code for key, code in PCI_DEVICE_IDS if key in target.gpu.name), 0x10DE)
        return info

    nvmlDeviceGetPciInfo_v3 = nvmlDeviceGetPciInfo

    def nvmlDeviceGetCudaComputeCapability(self, handle):
        major, minor = self._target(handle).gpu.compute_capability
        return (int(major), int(minor))

    # -- memory ----------------------------------------------------------------------------------

    def nvmlDeviceGetMemoryInfo(self, handle, version=None):
        target = self._target(handle)
        total = target.mig.memory_bytes if target.mig else target.gpu.memory_bytes
        reserved = int(total * RESERVED_SHARE)
        held = sum(entry[1] for entry in self._holders(target))
        if not version:
            memory = self.real.c_nvmlMemory_t()
            memory.used = min(total, held + reserved)
        else:
            memory = self.real.c_nvmlMemory_v2_t()
            memory.version, memory.reserved = version, reserved
            memory.used = min(total - reserved, held)
        memory.total = total
        memory.free = max(0, total - reserved - held)
        return memory

    # -- clocks ----------------------------------------------------------------------------------

    def _slow_motion(self) -> float:
        """A device in slow motion (Machine.time_scale) runs as one clocked that much lower."""
        return max(1.0, float(self.machine.time_scale or 1.0))

    def nvmlDeviceGetMaxClockInfo(self, handle, type):
        gpu = self._board(handle).gpu
        return self._clock_of(type, int(round(gpu.max_sm_clock_mhz / self._slow_motion())))

    def nvmlDeviceGetClockInfo(self, handle, type):
        target = self._board(handle)
        gpu = target.gpu
        if self._clocked_up(target):
            sm = (gpu.busy_sm_clock_mhz or gpu.max_sm_clock_mhz) / self._slow_motion()
        else:
            sm = gpu.idle_sm_clock_mhz
        return self._clock_of(type, int(round(sm)))

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        target = self._board(handle)
        if not self._clocked_up(target):
            return self.real.nvmlClocksEventReasonGpuIdle | int(target.gpu.idle_clock_reasons)
        return int(target.gpu.busy_clock_reasons)

    nvmlDeviceGetCurrentClocksThrottleReasons = nvmlDeviceGetCurrentClocksEventReasons

    # -- utilisation -----------------------------------------------------------------------------

    def nvmlDeviceGetUtilizationRates(self, handle):
        target = self._target(handle)
        with self._lock:
            self._reads[target.index] += 1
            fail_after = target.gpu.fail_after_reads
            if 0 <= fail_after < self._reads[target.index]:
                self._lost.add(target.index)
        self._live(target)
        if target.gpu.mig:
            self._fail("NOT_SUPPORTED")
        now = self.clock()
        lo = now - self.machine.util_sample_period_s
        records = self._records(target, since=lo)
        kernels = [r for r in records if r[3] == state.KERNEL]
        copy_share = target.gpu.pinned_copy_bandwidth / target.gpu.memory_bandwidth
        memory_users = [(r[0], r[1], r[2] * KERNEL_MEMORY_SHARE if r[3] == state.KERNEL else copy_share)
                        for r in records]
        util = self.real.c_nvmlUtilization_t()
        util.gpu = _percent(busy.union_time(kernels, lo, now), now - lo)
        util.memory = _percent(busy.weighted_time(memory_users, lo, now), now - lo)
        return util

    # -- processes -------------------------------------------------------------------------------

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        target = self._target(handle)
        holders = self._holders(target)
        if self.machine.pid_mode == "none":
            return []
        if self.machine.mps:
            servers = sorted({(gi, ci) for _pid, _used, gi, ci in holders})
            return [self._process(self.machine.mps_server_pid, None, gi, ci) for gi, ci in servers]
        return [self._process(self._visible_pid(pid), used, gi, ci) for pid, used, gi, ci in holders]

    nvmlDeviceGetComputeRunningProcesses_v2 = nvmlDeviceGetComputeRunningProcesses
    nvmlDeviceGetComputeRunningProcesses_v3 = nvmlDeviceGetComputeRunningProcesses

    def nvmlDeviceGetMPSComputeRunningProcesses(self, handle):
        target = self._target(handle)
        if not self.machine.mps or self.machine.pid_mode == "none":
            return []
        return [self._process(self._visible_pid(pid), used, gi, ci) for pid, used, gi, ci in self._holders(target)]

    nvmlDeviceGetMPSComputeRunningProcesses_v2 = nvmlDeviceGetMPSComputeRunningProcesses
    nvmlDeviceGetMPSComputeRunningProcesses_v3 = nvmlDeviceGetMPSComputeRunningProcesses

    def nvmlDeviceGetGraphicsRunningProcesses(self, handle):
        self._target(handle)
        return []

    nvmlDeviceGetGraphicsRunningProcesses_v2 = nvmlDeviceGetGraphicsRunningProcesses
    nvmlDeviceGetGraphicsRunningProcesses_v3 = nvmlDeviceGetGraphicsRunningProcesses

    # -- PCIe, power, energy ---------------------------------------------------------------------

    def nvmlDeviceGetPcieThroughput(self, device, counter):
        target = self._board(device)
        kinds = {self.real.NVML_PCIE_UTIL_RX_BYTES: state.H2D, self.real.NVML_PCIE_UTIL_TX_BYTES: state.D2H}
        if counter not in kinds:
            self._fail("INVALID_ARGUMENT")
        window = self.machine.pcie_read_s
        self.sleep(window)          # the driver samples its byte counter over this window
        now = self.clock()
        copies = [(r[0], r[1], r[4]) for r in self._records(target, since=now - window) if r[3] == kinds[counter]]
        return int(busy.bytes_within(copies, now - window, now) / 1024 / window)

    def nvmlDeviceGetPowerUsage(self, handle):
        target = self._board(handle)
        now = self.clock()
        lo = now - POWER_WINDOW_S
        share = busy.weighted_time(self._kernels(target, since=lo), lo, now) / POWER_WINDOW_S
        return int(1000 * self._watts(target.gpu, share))

    def nvmlDeviceGetTotalEnergyConsumption(self, handle):
        target = self._board(handle)
        now = self.clock()
        gpu = target.gpu
        joules = gpu.idle_power_w * max(0.0, now - self.origin) + \
            (gpu.busy_power_w - gpu.idle_power_w) * self._busy_seconds(target, now)
        return int(1000 * joules)

    def nvmlDeviceGetEnforcedPowerLimit(self, handle):
        return int(1000 * self._board(handle).gpu.busy_power_w)

    nvmlDeviceGetPowerManagementLimit = nvmlDeviceGetEnforcedPowerLimit

    # -- MIG -------------------------------------------------------------------------------------

    def nvmlDeviceGetMigMode(self, device):
        target = self._parent(device)
        mode = self.real.NVML_DEVICE_MIG_ENABLE if target.gpu.mig else self.real.NVML_DEVICE_MIG_DISABLE
        return [mode, mode]

    def nvmlDeviceGetMaxMigDeviceCount(self, device):
        return MIG_SLOTS if self._parent(device).gpu.mig else 0

    def nvmlDeviceGetMigDeviceHandleByIndex(self, device, index):
        target = self._parent(device)
        if not target.gpu.mig or not isinstance(index, int) or not 0 <= index < MIG_SLOTS:
            self._fail("INVALID_ARGUMENT")
        instance = self._migs[target.index].get(index)
        if instance is None:
            self._fail("NOT_FOUND")
        return self._handle(instance)

    def nvmlDeviceIsMigDeviceHandle(self, device):
        return ctypes.c_uint(1 if self._target(device).mig else 0)

    def nvmlDeviceGetDeviceHandleFromMigDeviceHandle(self, migDevice):
        target = self._target(migDevice)
        if target.mig is None:
            self._fail("INVALID_ARGUMENT")
        return self._handle(self._gpus[target.index])

    def nvmlDeviceGetGpuInstanceId(self, device):
        target = self._target(device)
        if target.mig is None:
            self._fail("INVALID_ARGUMENT")
        return target.mig.gpu_instance_id

    def nvmlDeviceGetComputeInstanceId(self, device):
        if self._target(device).mig is None:
            self._fail("INVALID_ARGUMENT")
        return 0

    # -- helpers ---------------------------------------------------------------------------------

    def _add(self, target):
        self._targets[target.address] = target
        return target

    def _fail(self, name):
        raise self.real.NVMLError(getattr(self.real, "NVML_ERROR_" + name))

    def _check_init(self):
        if self._sessions <= 0:
            self._fail("UNINITIALIZED")

    def _handle(self, target):
        return ctypes.cast(ctypes.c_void_p(target.address), self.real.c_nvmlDevice_t)

    def _live(self, target):
        if target.index in self._lost:
            self._fail("GPU_IS_LOST")
        return target

    def _target(self, handle):
        """The GPU or MIG instance a handle names; NVML's errors for a bad handle or a lost GPU."""
        self._check_init()
        target = self._targets.get(address_of(handle))
        if target is None:
            self._fail("INVALID_ARGUMENT")
        return self._live(target)

    def _parent(self, handle):
        """A GPU's own handle (MIG queries take the parent; a MIG handle is the wrong argument)."""
        target = self._target(handle)
        if target.mig is not None:
            self._fail("INVALID_ARGUMENT")
        return target

    def _board(self, handle):
        """Readings of the whole board (clocks, power, energy, PCIe) answer on the GPU's handle."""
        target = self._target(handle)
        if target.mig is not None:
            self._fail("NOT_SUPPORTED")
        return target

    def _scopes(self, target):
        """[(activity folder, share of the GPU's SMs its work counts for, GPU instance id or None)]."""
        gpu, i = target.gpu, target.index
        if target.mig is not None:
            return [(mig_dir(self.folder, i, target.mig.gpu_instance_id), 1.0, target.mig.gpu_instance_id)]
        if gpu.mig:
            return [(mig_dir(self.folder, i, inst.gpu_instance_id), inst.sm_count / gpu.sm_count,
                     inst.gpu_instance_id) for inst in gpu.mig]
        return [(device_dir(self.folder, i), 1.0, None)]

    def _records(self, target, since=None):
        """Every process's records in the target (those ending after `since` when given), SM shares
        scaled to the target's SMs."""
        out = []
        for folder, weight, _instance in self._scopes(target):
            with self._lock:
                log = self._logs.setdefault(folder, ActivityLog(folder))
                records = log.records(since)
            # Whole-GPU scopes (weight 1, the common case) keep their records as they are: a long
            # run's reads walk every record, and rebuilding each tuple was most of their cost.
            out.extend(records if weight == 1.0 else ((r[0], r[1], r[2] * weight, r[3], r[4]) for r in records))
        return out

    def _kernels(self, target, since=None):
        return [(r[0], r[1], r[2]) for r in self._records(target, since) if r[3] == state.KERNEL]

    def _clocked_up(self, target):
        """Whether the board holds its working clocks: a kernel runs now or ended less than
        `idle_after_s` ago. A GPU does not drop to idle in the gaps between kernels (launch
        overhead, a step's data wait); it idles down only once nothing has run for a while."""
        now = self.clock()
        since = now - max(0.0, target.gpu.idle_after_s)
        return busy.ran_within(self._kernels(target, since=since), since, now)

    def _busy_seconds(self, target, now):
        """SM-active-weighted seconds of the target's kernels up to `now`. What lies before
        now - SETTLED_S is summed once and kept, so a long run's energy reads stay cheap."""
        with self._lock:
            done_to, done = self._settled.get(target.address, (None, 0.0))
        if done_to is None:
            kernels = self._kernels(target)
            done_to = min([self.origin] + [k[0] for k in kernels])
        else:
            kernels = self._kernels(target, since=done_to)
        horizon = now - SETTLED_S
        if horizon > done_to:
            done += busy.weighted_time(kernels, done_to, horizon)
            done_to = horizon
            with self._lock:
                self._settled[target.address] = (done_to, done)
        return done + busy.weighted_time(kernels, done_to, now)

    def _holders(self, target):
        """[(pid, bytes held now, gpuInstanceId, computeInstanceId)] of live processes holding memory."""
        out = []
        for folder, _weight, instance in self._scopes(target):
            for pid, (now_bytes, _peak) in sorted(state.read_memory(folder).items()):
                if now_bytes > 0 and state.alive(pid):
                    ids = (NOT_MIG, NOT_MIG) if instance is None else (instance, 0)
                    out.append((pid, int(now_bytes)) + ids)
        return out

    def _visible_pid(self, pid):
        return pid + self.machine.host_pid_offset if self.machine.pid_mode == "host" else pid

    def _process(self, pid, used, gpu_instance, compute_instance):
        """One entry as the real binding returns it (a friendly object from c_nvmlProcessInfo_t)."""
        real = self.real
        known = used is not None and self.machine.used_memory_known and pid not in self._unknown_memory_pids()
        info = real.c_nvmlProcessInfo_t(pid, used if known else real.NVML_VALUE_NOT_AVAILABLE_ulonglong.value,
                                        gpu_instance, compute_instance)
        entry = real.nvmlStructToFriendlyObject(info)
        if entry.usedGpuMemory == real.NVML_VALUE_NOT_AVAILABLE_ulonglong.value:
            entry.usedGpuMemory = None
        return entry

    def _unknown_memory_pids(self):
        """The PIDs (as NVML lists them) whose memory NVML does not know."""
        return {self._visible_pid(pid) for pid in self.machine.unknown_memory_pids}

    def _clock_of(self, type, sm_mhz):
        real = self.real
        if type in (real.NVML_CLOCK_SM, real.NVML_CLOCK_GRAPHICS):
            return int(sm_mhz)
        if type == real.NVML_CLOCK_MEM:
            return MEMORY_CLOCK_MHZ
        if type == real.NVML_CLOCK_VIDEO:
            self._fail("NOT_SUPPORTED")
        self._fail("INVALID_ARGUMENT")

    @staticmethod
    def _watts(gpu, active_share):
        return gpu.idle_power_w + (gpu.busy_power_w - gpu.idle_power_w) * min(1.0, active_share)

    def _origin(self):
        """When the simulated driver loaded (the machine folder was made), on the monotonic clock."""
        try:
            age = max(0.0, time.time() - os.stat(os.path.join(self.folder, MACHINE_FILE)).st_mtime)
        except OSError:
            age = 0.0
        return self.clock() - age


def install(namespace: dict, folder: str, clock=time.monotonic, sleep=time.sleep) -> NvmlFace:
    """Fill `namespace` (a module's globals) with the real pynvml's names and the face's functions
    for the machine in `folder`; ModuleNotFoundError where that machine has no NVML library."""
    machine = load(folder)
    if machine.nvml == "missing":
        raise ModuleNotFoundError("No module named 'pynvml'", name="pynvml")
    real = real_nvml.load(SHIM)
    for name, value in vars(real).items():
        if not (name.startswith("__") and name.endswith("__")):
            namespace[name] = value
    face = NvmlFace(folder, real, machine, clock=clock, sleep=sleep)
    for name in real_nvml.library_functions(real):
        namespace[name] = face.unmodelled(getattr(real, name))
    for name, value in vars(real).items():
        if CHANGING.match(name) and callable(value):
            namespace[name] = face.refusal(name)
    namespace.update(face.entry_points())
    namespace["_gpuprof_face"] = face
    return face


def simulated_pynvml(folder: str, clock=time.monotonic, sleep=time.sleep) -> types.ModuleType:
    """A `pynvml` module for the machine in `folder`, outside sys.modules (for tests)."""
    module = types.ModuleType("pynvml", "nvidia-ml-py's interface over a simulated machine")
    install(vars(module), folder, clock=clock, sleep=sleep)
    return module


def _slots(targets) -> dict:
    """{MIG device index: target}: each instance in its own `slot`, the others in the free ones in order."""
    targets = list(targets)
    out = {t.mig.slot: t for t in targets if t.mig.slot is not None and t.mig.slot >= 0}
    for target in targets:
        if target.mig.slot is None or target.mig.slot < 0:
            out[next(i for i in range(MIG_SLOTS) if i not in out)] = target
    return dict(sorted(out.items()))


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _bus_address(text: str):
    """(domain, bus, device, function) of a PCI bus id in any of NVML's spellings, or None."""
    try:
        head, function = text.strip().rsplit(".", 1)
        parts = [int(p, 16) for p in head.split(":")]
        if len(parts) not in (2, 3):
            return None
        domain, bus, device = ([0] + parts)[-3:]
        return domain, bus, device, int(function, 16)
    except ValueError:
        return None


def _percent(part: float, whole: float) -> int:
    return int(round(max(0.0, min(100.0, 100.0 * part / whole)))) if whole > 0 else 0
