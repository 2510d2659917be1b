"""The NVML face's boards and drivers that differ from the default H100: no NVML library, queries a
board does not offer, a power cap held while idle, GPM occupancy below SM activity, MIG devices in
sparse slots, processes whose memory NVML does not know, and the exact read a GPU is lost at."""

import os

import pytest

from gpuprof.testing.simgpu import Gpu, Machine, MigInstance, state
from gpuprof.testing.simgpu.machine import GIB
from tests.conftest import FakeClock
from tests.simulated_nvml import hold_memory, keep_busy, open_machine

NOW = 1000.0


def opened(tmp_path, machine):
    clock = FakeClock(NOW)
    nvml, folder = open_machine(tmp_path / "machine", machine, clock)
    nvml.nvmlInit()
    return nvml, folder, clock


def test_a_machine_without_the_nvml_library_fails_init_as_library_not_found(tmp_path):
    nvml, _ = open_machine(tmp_path / "machine", Machine(nvml="no_driver"), FakeClock(NOW))
    with pytest.raises(nvml.NVMLError_LibraryNotFound):
        nvml.nvmlInit()
    with pytest.raises(nvml.NVMLError_Uninitialized):
        nvml.nvmlDeviceGetCount()


def test_queries_a_board_does_not_offer_are_not_supported_there_alone(tmp_path):
    lacking = ["nvmlDeviceGetPcieThroughput", "nvmlDeviceGetComputeRunningProcesses",
               "nvmlDeviceGetTotalEnergyConsumption"]
    machine = Machine(gpus=[Gpu(), Gpu(unsupported=lacking, mig=[MigInstance()])])
    nvml, folder, _ = opened(tmp_path, machine)
    hold_memory(folder, 0, os.getpid(), GIB)
    full, bare = nvml.nvmlDeviceGetHandleByIndex(0), nvml.nvmlDeviceGetHandleByIndex(1)
    instance = nvml.nvmlDeviceGetMigDeviceHandleByIndex(bare, 0)
    for call in (lambda h: nvml.nvmlDeviceGetPcieThroughput(h, nvml.NVML_PCIE_UTIL_RX_BYTES),
                 nvml.nvmlDeviceGetComputeRunningProcesses, nvml.nvmlDeviceGetComputeRunningProcesses_v3,
                 nvml.nvmlDeviceGetTotalEnergyConsumption):
        with pytest.raises(nvml.NVMLError_NotSupported):
            call(bare)
        call(full)
    with pytest.raises(nvml.NVMLError_NotSupported):
        nvml.nvmlDeviceGetComputeRunningProcesses(instance)
    assert [p.pid for p in nvml.nvmlDeviceGetComputeRunningProcesses(full)] == [os.getpid()]
    assert nvml.nvmlDeviceGetMemoryInfo(bare).total == 80 * GIB          # what it offers still answers


def test_reasons_held_while_idle_come_beside_gpu_idle(tmp_path):
    capped = Gpu(busy_clock_reasons=0x4, idle_clock_reasons=0x4)
    nvml, folder, clock = opened(tmp_path, Machine(gpus=[capped, Gpu()]))
    keep_busy(folder, 0, NOW - 1.0, NOW + 1.0, 1.0)
    keep_busy(folder, 1, NOW - 1.0, NOW + 1.0, 1.0)
    first, second = nvml.nvmlDeviceGetHandleByIndex(0), nvml.nvmlDeviceGetHandleByIndex(1)
    assert nvml.nvmlDeviceGetCurrentClocksEventReasons(first) == 0x4
    clock.now = NOW + 2.0
    assert nvml.nvmlDeviceGetCurrentClocksEventReasons(first) == nvml.nvmlClocksEventReasonGpuIdle | 0x4
    assert nvml.nvmlDeviceGetCurrentClocksEventReasons(second) == nvml.nvmlClocksEventReasonGpuIdle


def gpm(nvml, handle, clock, seconds):
    first, second = nvml.nvmlGpmSampleAlloc(), nvml.nvmlGpmSampleAlloc()
    nvml.nvmlGpmSampleGet(handle, first)
    clock.advance(seconds)
    nvml.nvmlGpmSampleGet(handle, second)
    request = nvml.c_nvmlGpmMetricsGet_t()
    request.version, request.numMetrics = nvml.NVML_GPM_METRICS_GET_VERSION, 2
    request.sample1, request.sample2 = first, second
    request.metrics[0].metricId = nvml.NVML_GPM_METRIC_SM_UTIL
    request.metrics[1].metricId = nvml.NVML_GPM_METRIC_SM_OCCUPANCY
    nvml.nvmlGpmMetricsGet(request)
    return request.metrics[0].value, request.metrics[1].value


def test_gpm_occupancy_is_sm_activity_times_the_share_of_warp_slots_filled(tmp_path):
    nvml, folder, clock = opened(tmp_path, Machine(gpus=[Gpu(active_sm_occupancy=0.25), Gpu()]))
    for index in (0, 1):
        keep_busy(folder, index, NOW - 1.0, NOW + 5.0, 1.0, sm_active=0.5)
    sm, occupancy = gpm(nvml, nvml.nvmlDeviceGetHandleByIndex(0), clock, 1.0)
    assert (sm, occupancy) == (pytest.approx(50.0), pytest.approx(12.5))
    clock.now = NOW
    assert gpm(nvml, nvml.nvmlDeviceGetHandleByIndex(1), clock, 1.0) == (pytest.approx(50.0), pytest.approx(50.0))


def test_mig_devices_sit_in_their_slots_and_an_empty_slot_is_not_found(tmp_path):
    instances = [MigInstance(gpu_instance_id=3), MigInstance(gpu_instance_id=1, slot=0), MigInstance(gpu_instance_id=5, slot=2)]
    machine = Machine(gpus=[Gpu(mig=instances)])
    nvml, _, _ = opened(tmp_path, machine)
    gpu = nvml.nvmlDeviceGetHandleByIndex(0)
    found = {}
    for slot in range(nvml.nvmlDeviceGetMaxMigDeviceCount(gpu)):
        try:
            found[slot] = nvml.nvmlDeviceGetGpuInstanceId(nvml.nvmlDeviceGetMigDeviceHandleByIndex(gpu, slot))
        except nvml.NVMLError_NotFound:
            continue
    assert found == {0: 1, 1: 3, 2: 5}             # the instance without a slot takes the first one left free


def test_processes_whose_memory_nvml_does_not_know_beside_ones_it_does(tmp_path):
    other, job = os.getppid(), os.getpid()
    for mode, listed in (("same", (other, job)), ("host", (other + 3_000_000, job + 3_000_000))):
        machine = Machine(unknown_memory_pids=[other], pid_mode=mode)
        nvml, folder, _ = opened(tmp_path / mode, machine)
        hold_memory(folder, 0, other, GIB)
        hold_memory(folder, 0, job, 2 * GIB)
        entries = nvml.nvmlDeviceGetComputeRunningProcesses(nvml.nvmlDeviceGetHandleByIndex(0))
        assert {p.pid: p.usedGpuMemory for p in entries} == {listed[0]: None, listed[1]: 2 * GIB}


def test_a_lost_gpu_answers_its_reads_in_full_and_fails_from_the_next_one(tmp_path):
    nvml, folder, _ = opened(tmp_path, Machine(gpus=[Gpu(fail_after_reads=2)]))
    state.ActivityWriter(os.path.join(folder, "dev0"), os.getpid()).memory(GIB, GIB)
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    for _ in range(2):
        nvml.nvmlDeviceGetUtilizationRates(handle)
        nvml.nvmlDeviceGetMemoryInfo(handle)             # the rest of the reading answers too
    with pytest.raises(nvml.NVMLError_GpuIsLost):
        nvml.nvmlDeviceGetUtilizationRates(handle)
    with pytest.raises(nvml.NVMLError_GpuIsLost):
        nvml.nvmlDeviceGetMemoryInfo(handle)
