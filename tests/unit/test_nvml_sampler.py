"""The NVML sampler against the simulated GPU's NVML face, on a hand-moved clock: each figure comes
from the activity written into the simulated machine (kernels at a duty cycle, copies, memory held)."""

import os

import pytest

from gpuprof.capture.samplers.nvml import NvmlSampler
from gpuprof.testing.simgpu import Gpu, Machine, MigInstance
from gpuprof.testing.simgpu.machine import GIB
from tests.simulated_nvml import copy_steadily, hold_memory, keep_busy, open_machine, spy

RUN_S = 10.0      # the simulated work spans the clock's first 10 s, past every test's last tick (2.2 s)


def sampler_for(nvml, clock, pids=frozenset()):
    return NvmlSampler(nvml, clock, job_pids=lambda: set(pids))


def machine_of(gpus=1, **gpu):
    """`gpus` GPUs at their top clock while busy under a power cap (NVML's 0x4), in real time."""
    return Machine(gpus=[Gpu(name="Test GPU", busy_clock_reasons=0x4, **gpu) for _ in range(gpus)],
                   time_scale=1.0, driver_version="555.42")


def busy_machine(tmp_path, clock, machine, util=0.5, sm_active=1.0):
    """The machine's module with every whole GPU running kernels `util` of the time from the start."""
    nvml, folder = open_machine(tmp_path / "machine", machine, clock)
    for index, gpu in enumerate(machine.gpus):
        if not gpu.mig:
            keep_busy(folder, index, clock.now - 1.0, clock.now + RUN_S, util, sm_active)
    return nvml, folder


def test_samples_every_gpu_and_the_jobs_memory(tmp_path, clock):
    machine = machine_of(gpus=2)
    nvml, folder = busy_machine(tmp_path, clock, machine, util=0.8)
    job = os.getpid()
    hold_memory(folder, 0, job, 2 * GIB)
    copy_steadily(folder, 0, clock.now - 1.0, clock.now + RUN_S, 1000)
    sampler = sampler_for(nvml, clock, {job})
    assert sampler.start()
    sampler.tick_pcie()
    for _ in range(6):
        sampler.tick()
        clock.advance(0.1)
    sampler.stop()
    data = sampler.to_dict()
    assert data["available"] and data["driver"] == "555.42"
    assert [g["name"] for g in data["gpus"]] == ["Test GPU", "Test GPU"]
    gpu0 = data["gpus"][0]
    assert gpu0["series"]["columns"]["util_gpu"] == [0.8] * 6
    assert gpu0["series"]["columns"]["pcie_rx_bps"][0] == 1000 * 1024
    assert gpu0["clock_events"] == {"sw_power_cap": 6}
    assert gpu0["job_memory"] == {str(job): 2 * 2**30}
    assert gpu0["uuid"] == machine.uuid(0) and gpu0["pci_bus_id"] == "00000000:18:00.0"
    assert data["gpus"][1]["uuid"] == machine.uuid(1) and data["gpus"][1]["pci_bus_id"] == "00000000:28:00.0"
    with pytest.raises(nvml.NVMLError_Uninitialized):      # the sampler shut NVML down
        nvml.nvmlDeviceGetCount()


def test_no_library_is_a_stated_normal_state(clock):
    sampler = NvmlSampler(None, clock)
    sampler.reason = "nvidia-ml-py is not importable (ImportError: x)"
    assert not sampler.start()
    sampler.tick()
    assert sampler.to_dict() == {"available": False, "reason": "nvidia-ml-py is not importable (ImportError: x)",
                                 "driver": None, "unsupported": [], "gpus": []}


def test_init_failure_turns_sampling_off_with_the_reason(tmp_path, clock):
    nvml, _ = open_machine(tmp_path / "machine", Machine(nvml="init_fails"), clock)
    sampler = sampler_for(nvml, clock)
    assert not sampler.start()
    assert "NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch" in sampler.reason
    sampler.tick()  # harmless
    assert sampler.to_dict()["gpus"] == []


def test_failure_mid_run_keeps_what_was_measured_and_says_why(tmp_path, clock):
    nvml, _ = busy_machine(tmp_path, clock, machine_of(fail_after_reads=3))
    sampler = sampler_for(nvml, clock)
    assert sampler.start()
    for _ in range(10):
        sampler.tick()
    data = sampler.to_dict()
    assert len(data["gpus"][0]["series"]["columns"]["util_gpu"]) == 3
    assert "GPU is lost" in data["reason"] and "stopped" in data["reason"]
    assert not sampler.available


def test_unsupported_metrics_are_dropped_not_fatal(tmp_path, clock):
    board = machine_of(unsupported=["nvmlDeviceGetPcieThroughput", "nvmlDeviceGetComputeRunningProcesses"])
    nvml, _ = busy_machine(tmp_path, clock, board)
    sampler = sampler_for(nvml, clock)
    assert sampler.start()
    for _ in range(3):
        sampler.tick_pcie()
        sampler.tick()
    data = sampler.to_dict()
    assert sampler.available
    assert set(data["unsupported"]) == {"pcie", "pids"}
    assert data["gpus"][0]["series"]["columns"]["pcie_rx_bps"] == [None] * 3


def test_a_gpu_held_below_its_top_clock_by_thermal_slowdown_is_named_with_its_share(tmp_path, clock):
    from gpuprof.judge.sections.system import slowdown_notes, summarize_gpus
    hot = Machine(gpus=[Gpu(busy_sm_clock_mhz=1200, busy_clock_reasons=0x40 | 0x4)], time_scale=1.0)
    nvml, _ = busy_machine(tmp_path, clock, hot)
    sampler = sampler_for(nvml, clock)
    assert sampler.start()
    for _ in range(10):
        sampler.tick()
        clock.advance(0.1)
    gpus, _ = summarize_gpus(sampler.to_dict())
    assert gpus[0]["sm_clock_max_mhz"] == 1980 and gpus[0]["sm_clock_mhz"] == 1200
    assert gpus[0]["slowdowns"] == {"sw_power_cap": 1.0, "hw_thermal_slowdown": 1.0}
    [note] = slowdown_notes(gpus)
    assert note.startswith("GPU 0 ran at 1200 of its 1980 MHz SM clock") and "hardware thermal slowdown 100%" in note


def test_a_power_cap_flag_at_full_clock_is_no_slowdown(tmp_path, clock):
    from gpuprof.judge.sections.system import slowdown_notes, summarize_gpus
    nvml, _ = busy_machine(tmp_path, clock, machine_of())
    sampler = sampler_for(nvml, clock)
    assert sampler.start()
    for _ in range(5):
        sampler.tick()
        clock.advance(0.1)
    gpus, _ = summarize_gpus(sampler.to_dict())
    assert gpus[0]["slowdowns"] == {"sw_power_cap": 1.0} and slowdown_notes(gpus) == []


def ticks(sampler, clock, count, step=0.1):
    for _ in range(count):
        sampler.tick()
        clock.advance(step)


def test_a_lost_gpu_is_marked_with_its_reason_and_the_others_are_sampled_on(tmp_path, clock):
    machine = machine_of(gpus=3)
    machine.gpus[1].fail_after_reads = 2
    nvml, _ = busy_machine(tmp_path, clock, machine)
    sampler = sampler_for(nvml, clock)
    assert sampler.start()
    ticks(sampler, clock, 5)
    data = sampler.to_dict()
    gpu0, gpu1, gpu2 = data["gpus"]
    assert sampler.available and data["reason"] is None
    assert "GPU is lost" in gpu1["lost"] and len(gpu1["series"]["columns"]["t"]) == 2
    assert len(gpu0["series"]["columns"]["util_gpu"]) == len(gpu2["series"]["columns"]["util_gpu"]) == 5
    assert "lost" not in gpu0 and "lost" not in gpu2


def test_mig_instances_are_sampled_each_and_what_they_do_not_offer_is_dropped_for_them_alone(tmp_path, clock):
    machine = machine_of(gpus=2)
    machine.gpus[1].mig = [MigInstance(gpu_instance_id=1), MigInstance(gpu_instance_id=2)]
    nvml, folder = busy_machine(tmp_path, clock, Machine(**machine.to_dict()), util=0.7)
    keep_busy(folder, 1, clock.now - 1.0, clock.now + RUN_S, 0.7, 0.4 / 0.7, instance=1)
    sampler = sampler_for(nvml, clock)
    assert sampler.start()
    ticks(sampler, clock, 4)
    data = sampler.to_dict()
    assert [(g["index"], (g.get("mig") or {}).get("gpu_instance_id")) for g in data["gpus"]] == \
        [(0, None), (1, None), (1, 1), (1, 2)]
    whole, parent, first, second = data["gpus"]
    assert whole["series"]["columns"]["util_gpu"] == [0.7] * 4 and "util" not in whole["unsupported"]
    assert parent["mig_mode"] and "util" in parent["unsupported"]
    assert first["uuid"].startswith("MIG-") and second["uuid"] != first["uuid"]
    assert first["parent_uuid"] == parent["uuid"] and first["mem_total"] == 10 * 2**30
    assert "util" in first["unsupported"] and "energy" in first["unsupported"]
    assert first["series"]["columns"]["util_gpu"] == [None] * 4
    assert first["series"]["columns"]["sm_active"][1:] == [pytest.approx(0.4)] * 3 and first["gpm"]


def test_sm_activity_comes_from_gpm_sample_pairs_at_least_100_ms_apart(tmp_path, clock):
    nvml, _ = busy_machine(tmp_path, clock, machine_of(active_sm_occupancy=0.5), util=0.9, sm_active=0.2 / 0.9)
    freed = spy(nvml, "nvmlGpmSampleFree")
    sampler = sampler_for(nvml, clock)
    assert sampler.start()
    ticks(sampler, clock, 3, step=0.1)
    ticks(sampler, clock, 2, step=0.05)      # the second tick comes 50 ms after the last GPM sample: none
    ticks(sampler, clock, 1)                 # 100 ms after it: a pair again
    data = sampler.to_dict()
    columns = data["gpus"][0]["series"]["columns"]
    assert columns["sm_active"] == [None] + [pytest.approx(0.2)] * 3 + [None, pytest.approx(0.2)]
    assert columns["sm_occupancy"][1] == pytest.approx(0.1) and columns["gpm_busy"][1] == pytest.approx(0.9)
    sampler.stop()
    assert len(freed) == 2


def test_without_gpm_there_is_no_sm_activity_and_nothing_fails(tmp_path, clock):
    nvml, _ = busy_machine(tmp_path, clock, machine_of(gpm=False))
    sampler = sampler_for(nvml, clock)
    assert sampler.start()
    ticks(sampler, clock, 3)
    gpu = sampler.to_dict()["gpus"][0]
    assert gpu["series"]["columns"]["sm_active"] == [None] * 3 and not gpu["gpm"]


def test_pcie_throughput_is_read_by_its_own_loop_never_by_the_main_tick(tmp_path, clock):
    nvml, folder = busy_machine(tmp_path, clock, machine_of(gpus=8))
    copy_steadily(folder, 7, clock.now - 1.0, clock.now + RUN_S, 1000)
    pcie_reads = spy(nvml, "nvmlDeviceGetPcieThroughput")
    sampler = sampler_for(nvml, clock)
    assert sampler.start()
    ticks(sampler, clock, 20)
    assert len(pcie_reads) == 0
    sampler.tick_pcie()
    assert len(pcie_reads) == 16
    ticks(sampler, clock, 1)
    columns = sampler.to_dict()["gpus"][7]["series"]["columns"]
    assert columns["pcie_rx_bps"][-1] == 1000 * 1024 and columns["pcie_rx_bps"][0] is None


def test_the_job_samplers_run_pcie_on_a_slower_loop_of_its_own(tmp_path):
    import time
    from gpuprof.capture.launch.samplers import JobSamplers
    nvml, _ = open_machine(tmp_path / "machine", machine_of(gpus=2))
    samplers = JobSamplers(0.1, True, lambda: (nvml, None), time.monotonic)
    samplers.start(os.getpid())
    try:
        assert samplers._loops["nvml"].tick == samplers.nvml.tick
        assert samplers._loops["pcie"].tick == samplers.nvml.tick_pcie
        assert samplers._loops["pcie"].interval >= 1.0 and samplers._loops["nvml"].interval == 0.1
    finally:
        samplers.stop()


def test_every_process_nvml_lists_is_kept_even_when_its_memory_is_unknown(tmp_path, clock):
    other, job, job_too = 1, os.getpid(), os.getppid()          # live processes: NVML lists only those
    machine = machine_of(gpus=2)
    machine.unknown_memory_pids = [other, job_too]
    nvml, folder = busy_machine(tmp_path, clock, machine)
    hold_memory(folder, 0, other, GIB)
    hold_memory(folder, 0, job, GIB)
    hold_memory(folder, 1, job_too, GIB)
    sampler = sampler_for(nvml, clock, {job, job_too})
    assert sampler.start()
    ticks(sampler, clock, 1)
    gpu0, gpu1 = sampler.to_dict()["gpus"]
    assert gpu0["processes"] == {str(other): None, str(job): 2**30} and gpu0["job_memory"] == {str(job): 2**30}
    assert gpu1["processes"] == {str(job_too): None} and gpu1["job_memory"] == {}


def test_energy_is_a_column_where_the_device_counts_it(tmp_path, clock):
    nvml, _ = open_machine(tmp_path / "machine", machine_of(idle_power_w=500.0), clock)      # idle all along
    counted = spy(nvml, "nvmlDeviceGetTotalEnergyConsumption")
    sampler = sampler_for(nvml, clock)
    assert sampler.start()
    ticks(sampler, clock, 3)
    energy = sampler.to_dict()["gpus"][0]["series"]["columns"]["energy_mj"]
    assert energy == counted and len(energy) == 3
    assert [later - earlier for earlier, later in zip(energy, energy[1:])] == [pytest.approx(50_000, abs=1)] * 2
    quiet_nvml, _ = open_machine(tmp_path / "quiet", machine_of(unsupported=["nvmlDeviceGetTotalEnergyConsumption"]),
                                 clock)
    quiet = sampler_for(quiet_nvml, clock)
    assert quiet.start()
    ticks(quiet, clock, 2)
    gpu = quiet.to_dict()["gpus"][0]
    assert gpu["series"]["columns"]["energy_mj"] == [None, None] and "energy" in gpu["unsupported"]
