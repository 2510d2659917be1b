"""The simulated GPU's NVML face: pynvml's interface reading activity the job's processes wrote.

Activity is written with state.ActivityWriter into a temporary machine folder and read through the
face on a fake clock, so every figure is exact."""

import ast
import os
import subprocess
import sys

import pytest

from gpuprof.testing.simgpu import Gpu, Machine, MigInstance, SHIM, busy, environment, real_nvml, state
from gpuprof.testing.simgpu.activity_log import ActivityLog
from gpuprof.testing.simgpu.machine import GIB, device_dir, mig_dir
from gpuprof.testing.simgpu.nvml_face import CHANGES_LOG, NOT_MIG, RESERVED_SHARE, simulated_pynvml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOW = 1000.0
PERIOD = 0.2


class Clock:
    def __init__(self, now=NOW):
        self.now = now
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)


def open_nvml(tmp_path, machine=None, clock=None):
    machine = machine or Machine(gpus=[Gpu(), Gpu()], util_sample_period_s=PERIOD)
    folder = machine.create(str(tmp_path / "machine"))
    clock = clock or Clock()
    nvml = simulated_pynvml(folder, clock=clock, sleep=clock.sleep)
    nvml.nvmlInit()
    return nvml, folder, clock


def writer(folder, gpu=0, pid=None, instance=None):
    where = device_dir(folder, gpu) if instance is None else mig_dir(folder, gpu, instance)
    return state.ActivityWriter(where, pid or os.getpid())


def ended_pid():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


# -- utilisation -------------------------------------------------------------------------------------

def test_gpu_utilisation_is_the_share_of_the_past_period_a_kernel_ran(tmp_path):
    nvml, folder, _ = open_nvml(tmp_path)
    first, second = writer(folder, pid=os.getpid()), writer(folder, pid=os.getpid() + 1_000_000)
    first.add(NOW - 1.0, NOW - 0.5, 1.0, state.KERNEL)           # before the period: not counted
    first.add(NOW - 0.25, NOW - 0.15, 1.0, state.KERNEL)         # 0.05 s inside
    second.add(NOW - 0.12, NOW - 0.08, 0.5, state.KERNEL)        # 0.04 s, overlaps nothing
    second.add(NOW - 0.10, NOW - 0.09, 0.5, state.H2D, 1 << 20)  # a copy is not a kernel
    util = nvml.nvmlDeviceGetUtilizationRates(nvml.nvmlDeviceGetHandleByIndex(0))
    assert util.gpu == 45 and isinstance(util.gpu, int)          # (0.05 + 0.04) / 0.2
    assert 0 < util.memory < util.gpu                            # kernels touch memory part of the time
    idle = nvml.nvmlDeviceGetUtilizationRates(nvml.nvmlDeviceGetHandleByIndex(1))
    assert (idle.gpu, idle.memory) == (0, 0)


def test_overlapping_kernels_of_several_processes_count_once_and_never_past_the_whole_gpu(tmp_path):
    nvml, folder, _ = open_nvml(tmp_path)
    writer(folder, pid=os.getpid()).add(NOW - 0.2, NOW - 0.1, 1.0, state.KERNEL)
    writer(folder, pid=os.getpid() + 1_000_000).add(NOW - 0.15, NOW - 0.05, 1.0, state.KERNEL)
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    assert nvml.nvmlDeviceGetUtilizationRates(handle).gpu == 75
    assert nvml.nvmlDeviceGetPowerUsage(handle) == 70_000 + 630 * 150      # both fill the SMs: never past all


def test_queued_work_counts_only_up_to_now(tmp_path):
    nvml, folder, clock = open_nvml(tmp_path)
    work = writer(folder)
    work.add(NOW - 0.05, NOW + 10.0, 1.0, state.KERNEL)          # running, queued far past now
    work.add(NOW + 20.0, NOW + 30.0, 1.0, state.KERNEL)          # not started yet
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    assert nvml.nvmlDeviceGetUtilizationRates(handle).gpu == 25
    clock.now = NOW + 5.0
    assert nvml.nvmlDeviceGetUtilizationRates(handle).gpu == 100


def test_an_ended_process_keeps_its_history_but_leaves_the_process_list_and_memory(tmp_path):
    nvml, folder, _ = open_nvml(tmp_path)
    gone = writer(folder, pid=ended_pid())
    gone.add(NOW - 0.1, NOW - 0.05, 1.0, state.KERNEL)
    gone.memory(3 * GIB, 3 * GIB)
    live = writer(folder)
    live.memory(2 * GIB, 2 * GIB)
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    assert nvml.nvmlDeviceGetUtilizationRates(handle).gpu == 25
    procs = nvml.nvmlDeviceGetComputeRunningProcesses(handle)
    assert [(p.pid, p.usedGpuMemory, p.gpuInstanceId, p.computeInstanceId) for p in procs] == \
        [(os.getpid(), 2 * GIB, NOT_MIG, NOT_MIG)]
    memory = nvml.nvmlDeviceGetMemoryInfo(handle)
    reserved = int(80 * GIB * RESERVED_SHARE)
    assert (memory.total, memory.used, memory.free) == (80 * GIB, 2 * GIB + reserved, 78 * GIB - reserved)
    v2 = nvml.nvmlDeviceGetMemoryInfo(handle, version=nvml.nvmlMemory_v2)
    assert (v2.used, v2.reserved) == (2 * GIB, reserved)


# -- the process list's quirks -------------------------------------------------------------------------

def quirk_processes(tmp_path, **settings):
    nvml, folder, _ = open_nvml(tmp_path, Machine(**settings))
    writer(folder).memory(GIB, GIB)
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    return nvml, [(p.pid, p.usedGpuMemory) for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle)], handle


def test_host_pid_mode_lists_pids_the_job_cannot_match(tmp_path):
    _, procs, _ = quirk_processes(tmp_path, pid_mode="host", host_pid_offset=3_000_000)
    assert procs == [(os.getpid() + 3_000_000, GIB)]


def test_a_container_that_cannot_map_pids_lists_none(tmp_path):
    _, procs, _ = quirk_processes(tmp_path, pid_mode="none")
    assert procs == []


def test_mps_lists_the_server_in_place_of_its_clients(tmp_path):
    nvml, procs, handle = quirk_processes(tmp_path, mps=True, mps_server_pid=4242)
    assert procs == [(4242, None)]
    clients = nvml.nvmlDeviceGetMPSComputeRunningProcesses(handle)
    assert [(p.pid, p.usedGpuMemory) for p in clients] == [(os.getpid(), GIB)]


def test_unknown_used_memory_is_none_as_the_real_binding_gives_it(tmp_path):
    _, procs, _ = quirk_processes(tmp_path, used_memory_known=False)
    assert procs == [(os.getpid(), None)]


# -- clocks, PCIe, power and energy ------------------------------------------------------------------

def clocks_at(nvml, clock, handle, when):
    clock.now = when
    return (nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM),
            nvml.nvmlDeviceGetCurrentClocksEventReasons(handle))


def test_sm_clock_and_event_reasons_follow_whether_kernels_keep_the_gpu_working(tmp_path):
    gpu = Gpu(max_sm_clock_mhz=1980, idle_sm_clock_mhz=345, busy_sm_clock_mhz=1650, busy_clock_reasons=0x4,
              idle_after_s=0.25)
    nvml, folder, clock = open_nvml(tmp_path, Machine(gpus=[gpu], time_scale=1.0))
    writer(folder).add(NOW + 1.0, NOW + 2.0, 1.0, state.KERNEL)
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    idle = (345, nvml.nvmlClocksEventReasonGpuIdle)
    assert clocks_at(nvml, clock, handle, NOW) == idle                 # queued, not started: still idle
    assert clocks_at(nvml, clock, handle, NOW + 1.5) == (1650, 0x4)
    assert clocks_at(nvml, clock, handle, NOW + 2.2) == (1650, 0x4)    # 0.2 s after the last kernel
    assert clocks_at(nvml, clock, handle, NOW + 2.3) == idle           # 0.3 s after: idled down
    assert nvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle) == nvml.nvmlClocksEventReasonGpuIdle
    assert nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM) == 1980


def test_a_device_in_slow_motion_reads_as_clocked_that_much_lower_while_busy(tmp_path):
    gpu = Gpu(max_sm_clock_mhz=1980, idle_sm_clock_mhz=345)
    nvml, folder, clock = open_nvml(tmp_path, Machine(gpus=[gpu], time_scale=2.5))
    writer(folder).add(NOW + 1.0, NOW + 2.0, 1.0, state.KERNEL)
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    assert clocks_at(nvml, clock, handle, NOW + 1.5) == (792, 0)        # 1980 / 2.5, no slowdown reason
    assert nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM) == 792


def test_the_gaps_between_kernels_keep_the_working_clock(tmp_path):
    """Kernels of 1 ms every 4 ms (launch-bound), then a 50 ms data wait, then more: every read in
    the gaps gives the working clock, as a real GPU holds it; with idle_after_s 0 the same reads
    would catch the idle clock between kernels."""
    def reads(idle_after_s):
        gpu = Gpu(max_sm_clock_mhz=1980, idle_sm_clock_mhz=345, idle_after_s=idle_after_s)
        nvml, folder, clock = open_nvml(tmp_path / str(idle_after_s), Machine(gpus=[gpu], time_scale=1.0))
        work = writer(folder)
        starts = [NOW + 0.004 * i for i in range(50)] + [NOW + 0.25 + 0.004 * i for i in range(50)]
        for start in starts:
            work.add(start, start + 0.001, 0.5, state.KERNEL)
        handle = nvml.nvmlDeviceGetHandleByIndex(0)
        instants = [NOW + 0.0025 + 0.017 * i for i in range(24)]        # inside the gaps and the wait
        return {clocks_at(nvml, clock, handle, t)[0] for t in instants if not busy.running_at(
            [(s, s + 0.001) for s in starts], t)}

    assert reads(0.25) == {1980}
    assert reads(0.0) == {345}


def test_pcie_throughput_blocks_for_its_window_and_counts_its_bytes(tmp_path):
    nvml, folder, clock = open_nvml(tmp_path, Machine(pcie_read_s=0.02))
    work = writer(folder)
    work.add(NOW - 0.01, NOW + 0.01, 0.0, state.H2D, 20 << 20)      # half of it inside the window
    work.add(NOW - 0.05, NOW - 0.03, 0.0, state.D2H, 1 << 20)       # before the window
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    assert nvml.nvmlDeviceGetPcieThroughput(handle, nvml.NVML_PCIE_UTIL_RX_BYTES) == 512000  # 10 MiB / 20 ms
    assert nvml.nvmlDeviceGetPcieThroughput(handle, nvml.NVML_PCIE_UTIL_TX_BYTES) == 0
    assert clock.slept == [0.02, 0.02]


def test_energy_grows_with_busy_time_and_power_follows_the_past_second(tmp_path):
    nvml, folder, clock = open_nvml(tmp_path, Machine(gpus=[Gpu(), Gpu()]))
    writer(folder, gpu=0).add(NOW - 0.5, NOW - 0.1, 0.5, state.KERNEL)   # 0.4 s at half the SMs
    busy, idle = nvml.nvmlDeviceGetHandleByIndex(0), nvml.nvmlDeviceGetHandleByIndex(1)
    extra_mj = nvml.nvmlDeviceGetTotalEnergyConsumption(busy) - nvml.nvmlDeviceGetTotalEnergyConsumption(idle)
    assert extra_mj == pytest.approx((700 - 70) * 0.2 * 1000, abs=2)
    assert nvml.nvmlDeviceGetPowerUsage(busy) == pytest.approx((70 + 630 * 0.2) * 1000, abs=1)
    assert nvml.nvmlDeviceGetPowerUsage(idle) == 70_000
    before = nvml.nvmlDeviceGetTotalEnergyConsumption(idle)
    clock.now += 2.0
    assert nvml.nvmlDeviceGetTotalEnergyConsumption(idle) - before == pytest.approx(140_000, abs=2)
    assert nvml.nvmlDeviceGetEnforcedPowerLimit(busy) == 700_000


def test_energy_read_all_run_long_matches_a_reader_that_starts_at_the_end(tmp_path):
    machine = Machine(gpus=[Gpu()])
    nvml, folder, clock = open_nvml(tmp_path, machine)
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    work = writer(folder)
    for second in range(30):                       # a kernel in each second, some back to back
        work.add(NOW + second, NOW + second + 0.5 + (second % 3) * 0.25, 0.25 + (second % 4) * 0.25, state.KERNEL)
        clock.now = NOW + second + 0.3
        nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    clock.now = NOW + 31.0
    fresh = simulated_pynvml(folder, clock=clock, sleep=clock.sleep)
    fresh.nvmlInit()
    fresh._gpuprof_face.origin = nvml._gpuprof_face.origin    # the same driver load on the fake clock
    assert nvml.nvmlDeviceGetTotalEnergyConsumption(handle) == pytest.approx(
        fresh.nvmlDeviceGetTotalEnergyConsumption(fresh.nvmlDeviceGetHandleByIndex(0)), abs=2)


def test_activity_is_read_as_the_files_grow(tmp_path):
    folder = str(tmp_path)
    log = ActivityLog(folder)
    path = state.log_path(folder, 11)
    with open(path, "wb") as out:
        out.write(state.RECORD.pack(1.0, 2.0, 0.5, state.KERNEL, 0))
    assert [r[:2] for r in log.records()] == [(1.0, 2.0)]
    with open(path, "r+b") as out:                   # the last record grows in place, then one more
        out.write(state.RECORD.pack(1.0, 3.0, 0.5, state.KERNEL, 0))
        out.write(state.RECORD.pack(4.0, 5.0, 1.0, state.KERNEL, 0))
        out.write(b"\0" * 7)                        # a record still being written
    state.ActivityWriter(folder, 12).add(0.5, 6.0, 0.1, state.H2D, 64)
    assert sorted(r[:2] for r in log.records()) == [(0.5, 6.0), (1.0, 3.0), (4.0, 5.0)]
    assert sorted(log.records()) == sorted(r for rs in state.read_records(folder).values() for r in rs)
    assert sorted(r[:2] for r in log.records(since=4.5)) == [(0.5, 6.0), (4.0, 5.0)]


# -- identity and errors -----------------------------------------------------------------------------

def test_devices_in_pci_order_found_by_index_uuid_and_bus_id(tmp_path):
    nvml, folder, _ = open_nvml(tmp_path)
    machine = Machine(gpus=[Gpu(), Gpu()])
    assert nvml.nvmlDeviceGetCount() == 2
    for i in range(2):
        by_uuid = nvml.nvmlDeviceGetHandleByUUID(machine.uuid(i))
        info = nvml.nvmlDeviceGetPciInfo(by_uuid)
        assert nvml.nvmlDeviceGetIndex(by_uuid) == i
        assert info.busId == machine.gpus[i].pci_bus_id
        assert nvml.nvmlDeviceGetIndex(nvml.nvmlDeviceGetHandleByPciBusId(info.busId.lower())) == i
        assert nvml.nvmlDeviceGetUUID(nvml.nvmlDeviceGetHandleByIndex(i)) == machine.uuid(i)
    assert nvml.nvmlDeviceGetName(nvml.nvmlDeviceGetHandleByIndex(0)) == "NVIDIA H100 80GB HBM3"
    assert nvml.nvmlDeviceGetCudaComputeCapability(nvml.nvmlDeviceGetHandleByIndex(0)) == (9, 0)
    with pytest.raises(nvml.NVMLError_NotFound):
        nvml.nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000")
    with pytest.raises(nvml.NVMLError_InvalidArgument):
        nvml.nvmlDeviceGetHandleByIndex(2)


def test_calls_before_init_and_after_shutdown_are_uninitialized(tmp_path):
    nvml, _, _ = open_nvml(tmp_path)
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    nvml.nvmlShutdown()
    for call in (nvml.nvmlDeviceGetCount, lambda: nvml.nvmlDeviceGetUtilizationRates(handle),
                 lambda: nvml.nvmlDeviceGetTemperature(handle, 0)):
        with pytest.raises(nvml.NVMLError_Uninitialized):
            call()
    nvml.nvmlInit()
    with pytest.raises(nvml.NVMLError_NotSupported):       # a query the simulation does not model
        nvml.nvmlDeviceGetTemperature(handle, 0)


def test_one_lost_gpu_fails_every_call_while_the_others_answer(tmp_path):
    nvml, _, _ = open_nvml(tmp_path, Machine(gpus=[Gpu(), Gpu(fail_after_reads=2)]))
    good, failing = nvml.nvmlDeviceGetHandleByIndex(0), nvml.nvmlDeviceGetHandleByIndex(1)
    for _ in range(2):
        nvml.nvmlDeviceGetUtilizationRates(failing)
    for call in (nvml.nvmlDeviceGetUtilizationRates, nvml.nvmlDeviceGetMemoryInfo, nvml.nvmlDeviceGetName):
        with pytest.raises(nvml.NVMLError_GpuIsLost):
            call(failing)
    with pytest.raises(nvml.NVMLError_GpuIsLost):
        nvml.nvmlDeviceGetHandleByIndex(1)
    for _ in range(5):
        assert nvml.nvmlDeviceGetUtilizationRates(good).gpu == 0


def test_device_changes_are_refused_and_logged(tmp_path):
    nvml, folder, _ = open_nvml(tmp_path)
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    for call in (lambda: nvml.nvmlDeviceSetPersistenceMode(handle, 1),
                 lambda: nvml.nvmlDeviceSetGpuLockedClocks(handle, 1000, 1000),
                 lambda: nvml.nvmlDeviceSetMigMode(handle, 1)):
        with pytest.raises(AssertionError):
            call()
    with open(os.path.join(folder, CHANGES_LOG)) as log:
        assert [line.split()[1] for line in log] == ["nvmlDeviceSetPersistenceMode", "nvmlDeviceSetGpuLockedClocks",
                                                     "nvmlDeviceSetMigMode"]


# -- MIG and GPM ---------------------------------------------------------------------------------------

def mig_machine():
    return Machine(gpus=[Gpu(mig=[MigInstance(profile="3g.40gb", sm_count=66, memory_bytes=40 * GIB),
                                  MigInstance(profile="1g.10gb", sm_count=16, memory_bytes=10 * GIB)])])


def test_mig_instances_have_their_own_handles_uuids_memory_and_processes(tmp_path):
    machine = mig_machine()
    nvml, folder, _ = open_nvml(tmp_path, machine)
    parent = nvml.nvmlDeviceGetHandleByIndex(0)
    assert nvml.nvmlDeviceGetMigMode(parent) == [nvml.NVML_DEVICE_MIG_ENABLE] * 2
    assert nvml.nvmlDeviceGetMaxMigDeviceCount(parent) == 7
    handles = [nvml.nvmlDeviceGetMigDeviceHandleByIndex(parent, i) for i in range(2)]
    with pytest.raises(nvml.NVMLError_NotFound):
        nvml.nvmlDeviceGetMigDeviceHandleByIndex(parent, 2)
    first = handles[0]
    assert nvml.nvmlDeviceIsMigDeviceHandle(first) and not nvml.nvmlDeviceIsMigDeviceHandle(parent)
    assert nvml.nvmlDeviceGetUUID(first) == machine.gpus[0].mig[0].uuid
    assert nvml.nvmlDeviceGetUUID(first).startswith("MIG-")
    assert nvml.nvmlDeviceGetIndex(nvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(first)) == 0
    assert nvml.nvmlDeviceGetGpuInstanceId(nvml.nvmlDeviceGetHandleByUUID(machine.gpus[0].mig[1].uuid)) == 2
    assert [nvml.nvmlDeviceGetGpuInstanceId(h) for h in handles] == [1, 2]
    assert nvml.nvmlDeviceGetName(first) == "NVIDIA H100 80GB HBM3 MIG 3g.40gb"
    writer(folder, instance=2).memory(GIB, GIB)
    assert nvml.nvmlDeviceGetMemoryInfo(handles[1]).total == 10 * GIB
    assert nvml.nvmlDeviceGetMemoryInfo(first).used == int(40 * GIB * RESERVED_SHARE)
    on_parent = nvml.nvmlDeviceGetComputeRunningProcesses(parent)
    assert [(p.pid, p.gpuInstanceId, p.computeInstanceId) for p in on_parent] == [(os.getpid(), 2, 0)]
    assert nvml.nvmlDeviceGetComputeRunningProcesses(first) == []
    assert [p.pid for p in nvml.nvmlDeviceGetComputeRunningProcesses(handles[1])] == [os.getpid()]


def test_utilisation_is_not_supported_on_a_mig_gpu_nor_its_instances(tmp_path):
    nvml, _, _ = open_nvml(tmp_path, mig_machine())
    parent = nvml.nvmlDeviceGetHandleByIndex(0)
    for handle in (parent, nvml.nvmlDeviceGetMigDeviceHandleByIndex(parent, 0)):
        with pytest.raises(nvml.NVMLError_NotSupported):
            nvml.nvmlDeviceGetUtilizationRates(handle)


def gpm_metrics(nvml, first, second, ids):
    metrics = nvml.c_nvmlGpmMetricsGet_t()
    metrics.version = nvml.NVML_GPM_METRICS_GET_VERSION
    metrics.numMetrics = len(ids)
    metrics.sample1, metrics.sample2 = first, second
    for i, metric_id in enumerate(ids):
        metrics.metrics[i].metricId = metric_id
    nvml.nvmlGpmMetricsGet(metrics)
    return [(metrics.metrics[i].nvmlReturn, round(metrics.metrics[i].value, 6)) for i in range(len(ids))]


def test_gpm_sm_activity_between_two_samples(tmp_path):
    nvml, folder, clock = open_nvml(tmp_path)
    writer(folder).add(NOW + 0.25, NOW + 0.75, 0.5, state.KERNEL)
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    assert nvml.nvmlGpmQueryDeviceSupport(handle).isSupportedDevice == 1
    first, second = nvml.nvmlGpmSampleAlloc(), nvml.nvmlGpmSampleAlloc()
    assert isinstance(first, nvml.c_nvmlGpmSample_t)
    nvml.nvmlGpmSampleGet(handle, first)
    clock.now = NOW + 1.0
    nvml.nvmlGpmSampleGet(handle, second)
    ids = [nvml.NVML_GPM_METRIC_GRAPHICS_UTIL, nvml.NVML_GPM_METRIC_SM_UTIL, nvml.NVML_GPM_METRIC_SM_OCCUPANCY,
           nvml.NVML_GPM_METRIC_ANY_TENSOR_UTIL, nvml.NVML_GPM_METRIC_DRAM_BW_UTIL]
    ok = nvml.NVML_SUCCESS
    assert gpm_metrics(nvml, first, second, ids) == [(ok, 50.0), (ok, 25.0), (ok, 25.0), (ok, 25.0),
                                                     (nvml.NVML_ERROR_NOT_SUPPORTED, 0.0)]
    nvml.nvmlGpmSampleFree(first)
    with pytest.raises(nvml.NVMLError_InvalidArgument):
        gpm_metrics(nvml, first, second, ids)


def test_gpm_of_one_mig_instance_and_none_without_gpm(tmp_path):
    nvml, folder, clock = open_nvml(tmp_path, mig_machine())
    writer(folder, instance=2).add(NOW, NOW + 1.0, 1.0, state.KERNEL)
    parent = nvml.nvmlDeviceGetHandleByIndex(0)
    first, second = nvml.nvmlGpmSampleAlloc(), nvml.nvmlGpmSampleAlloc()
    nvml.nvmlGpmMigSampleGet(parent, 2, first)
    clock.now = NOW + 2.0
    nvml.nvmlGpmMigSampleGet(parent, 2, second)
    assert gpm_metrics(nvml, first, second, [nvml.NVML_GPM_METRIC_SM_UTIL]) == [(nvml.NVML_SUCCESS, 50.0)]
    plain, _, _ = open_nvml(tmp_path / "no-gpm", Machine(gpus=[Gpu(name="NVIDIA A100-SXM4-80GB", gpm=False)]))
    handle = plain.nvmlDeviceGetHandleByIndex(0)
    assert plain.nvmlGpmQueryDeviceSupport(handle).isSupportedDevice == 0
    with pytest.raises(plain.NVMLError_NotSupported):
        plain.nvmlGpmSampleGet(handle, plain.nvmlGpmSampleAlloc())


# -- the module as Python imports it -----------------------------------------------------------------

def import_in_child(env):
    code = ("import pynvml\nprint(pynvml.__file__)\n"
            "try:\n    pynvml.nvmlInit(); print('init', pynvml.nvmlDeviceGetCount())\n"
            "except pynvml.NVMLError as e:\n    print(type(e).__name__)\n")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)


def test_import_follows_the_machine_library_and_is_the_real_module_when_off(tmp_path):
    folder = str(tmp_path / "machine")
    Machine(nvml="missing").create(folder)
    missing = import_in_child(environment(folder))
    assert missing.returncode == 1 and "ModuleNotFoundError: No module named 'pynvml'" in missing.stderr
    Machine(nvml="init_fails").create(folder)
    mismatch = import_in_child(environment(folder))
    assert mismatch.stdout.split() == [os.path.join(SHIM, "pynvml.py"), "NVMLError_LibRmVersionMismatch"]
    Machine(gpus=[Gpu(), Gpu(), Gpu()]).create(folder)
    assert import_in_child(environment(folder)).stdout.split()[1:] == ["init", "3"]
    off = environment(folder)
    del off["GPUPROF_SIMGPU"]
    real = import_in_child(off)
    assert real.returncode == 0, real.stderr
    assert real.stdout.split()[0] == real_nvml.find_spec(SHIM).origin != os.path.join(SHIM, "pynvml.py")


def test_another_trees_shim_folder_is_not_taken_for_the_real_module(tmp_path, monkeypatch):
    other = tmp_path / "other-checkout-shim"
    other.mkdir()
    (other / "pynvml.py").write_text("raise AssertionError('a shim, not nvidia-ml-py')\n")
    (other / real_nvml.SHIM_MARK).write_text("")
    monkeypatch.syspath_prepend(str(other))
    found = real_nvml.find_spec(SHIM)
    assert found is not None and os.path.dirname(found.origin) != str(other)
    assert os.path.isfile(os.path.join(SHIM, real_nvml.SHIM_MARK))     # the mark is the loader beside the shims


def sampler_nvml_names():
    """Every pynvml name the NVML sampler (gpuprof/capture/samplers/nvml*.py) reaches: attributes such as
    nvml.nvmlInit and names given to getattr as strings."""
    names = set()
    folder = os.path.join(ROOT, "gpuprof", "capture", "samplers")
    for file in sorted(f for f in os.listdir(folder) if f.startswith("nvml") and f.endswith(".py")):
        with open(os.path.join(folder, file)) as source:
            tree = ast.parse(source.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                names.add(node.value)
    return {n for n in names if n.startswith(("nvml", "NVML_", "c_nvml"))}


def test_every_name_the_sampler_uses_is_answered_and_the_errors_are_the_real_ones(tmp_path):
    nvml, _, _ = open_nvml(tmp_path)
    real = real_nvml.load(SHIM)
    assert real.__file__ == real_nvml.find_spec(SHIM).origin
    names = sampler_nvml_names()
    assert {"nvmlInit", "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetComputeRunningProcesses"} <= names
    names = {n for n in names if hasattr(real, n)}          # less attributes of structures, like nvmlReturn
    assert sorted(n for n in names if not hasattr(nvml, n)) == []
    answered = nvml._gpuprof_face.entry_points()
    functions = {n for n in names if n.startswith("nvml") and callable(getattr(real, n))}
    assert sorted(functions - set(answered)) == []          # none left to the not-supported stand-in
    for name in dir(real):
        if name.startswith(("NVMLError", "NVML_", "c_nvml")):
            assert getattr(nvml, name) is getattr(real, name), name
    with pytest.raises(real.NVMLError_GpuIsLost):
        raise nvml.NVMLError(nvml.NVML_ERROR_GPU_IS_LOST)
