from gpuprof.samplers.nvml import NvmlSampler
from tests.conftest import load_fake_nvml


def sampler_for(fake, clock, pids=frozenset()):
    return NvmlSampler(fake, clock, job_pids=lambda: set(pids))


def test_samples_every_gpu_and_the_jobs_memory(clock):
    fake = load_fake_nvml().FakeNvml(gpus=2, util=0.8, job_pid=42)
    sampler = sampler_for(fake, clock, {42})
    assert sampler.start()
    sampler.tick_pcie()
    for _ in range(6):
        sampler.tick()
        clock.advance(0.1)
    sampler.stop()
    data = sampler.to_dict()
    assert data["available"] and data["driver"] == "555.42"
    assert [g["name"] for g in data["gpus"]] == ["Fake GPU", "Fake GPU"]
    gpu0 = data["gpus"][0]
    assert gpu0["series"]["columns"]["util_gpu"] == [0.8] * 6
    assert gpu0["series"]["columns"]["pcie_rx_bps"][0] == 1000 * 1024
    assert gpu0["clock_events"] == {"sw_power_cap": 6}
    assert gpu0["job_memory"] == {"42": 2 * 2**30}
    assert gpu0["uuid"] == "GPU-00000000-aaaa-4bbb-8ccc-000000000000" and gpu0["pci_bus_id"] == "00000000:18:00.0"
    assert data["gpus"][1]["uuid"].startswith("GPU-00000001") and data["gpus"][1]["pci_bus_id"] == "00000000:28:00.0"
    assert fake.calls[-1] == "nvmlShutdown"


def test_no_library_is_a_stated_normal_state(clock):
    sampler = NvmlSampler(None, clock)
    sampler.reason = "nvidia-ml-py is not importable (ImportError: x)"
    assert not sampler.start()
    sampler.tick()
    assert sampler.to_dict() == {"available": False, "reason": "nvidia-ml-py is not importable (ImportError: x)",
                                 "driver": None, "unsupported": [], "gpus": []}


def test_init_failure_turns_sampling_off_with_the_reason(clock):
    sampler = sampler_for(load_fake_nvml().FakeNvml(mode="init_fail"), clock)
    assert not sampler.start()
    assert "Driver/library version mismatch" in sampler.reason
    sampler.tick()  # harmless
    assert sampler.to_dict()["gpus"] == []


def test_failure_mid_run_keeps_what_was_measured_and_says_why(clock):
    fake = load_fake_nvml().FakeNvml(mode="midrun_fail", fail_after=3)
    sampler = sampler_for(fake, clock)
    assert sampler.start()
    for _ in range(10):
        sampler.tick()
    data = sampler.to_dict()
    assert len(data["gpus"][0]["series"]["columns"]["util_gpu"]) == 3
    assert "GPU is lost" in data["reason"] and "stopped" in data["reason"]
    assert not sampler.available


def test_unsupported_metrics_are_dropped_not_fatal(clock):
    sampler = sampler_for(load_fake_nvml().FakeNvml(mode="not_supported"), clock)
    assert sampler.start()
    for _ in range(3):
        sampler.tick_pcie()
        sampler.tick()
    data = sampler.to_dict()
    assert sampler.available
    assert set(data["unsupported"]) == {"pcie", "pids"}
    assert data["gpus"][0]["series"]["columns"]["pcie_rx_bps"] == [None] * 3


def test_a_gpu_held_below_its_top_clock_by_thermal_slowdown_is_named_with_its_share(clock):
    from gpuprof.analysis.system import slowdown_notes, summarize_gpus
    hot = load_fake_nvml().FakeNvml(sm_clock=1200, reasons=0x40 | 0x4)
    sampler = sampler_for(hot, clock)
    assert sampler.start()
    for _ in range(10):
        sampler.tick()
        clock.advance(0.1)
    gpus, _ = summarize_gpus(sampler.to_dict())
    assert gpus[0]["sm_clock_max_mhz"] == 1980 and gpus[0]["sm_clock_mhz"] == 1200
    assert gpus[0]["slowdowns"] == {"sw_power_cap": 1.0, "hw_thermal_slowdown": 1.0}
    [note] = slowdown_notes(gpus)
    assert note.startswith("GPU 0 ran at 1200 of its 1980 MHz SM clock") and "hardware thermal slowdown 100%" in note


def test_a_power_cap_flag_at_full_clock_is_no_slowdown(clock):
    from gpuprof.analysis.system import slowdown_notes, summarize_gpus
    sampler = sampler_for(load_fake_nvml().FakeNvml(), clock)
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


def test_a_lost_gpu_is_marked_with_its_reason_and_the_others_are_sampled_on(clock):
    sampler = sampler_for(load_fake_nvml().FakeNvml(gpus=3, lost={1: 2}), clock)
    assert sampler.start()
    ticks(sampler, clock, 5)
    data = sampler.to_dict()
    gpu0, gpu1, gpu2 = data["gpus"]
    assert sampler.available and data["reason"] is None
    assert "GPU is lost" in gpu1["lost"] and len(gpu1["series"]["columns"]["t"]) == 2
    assert len(gpu0["series"]["columns"]["util_gpu"]) == len(gpu2["series"]["columns"]["util_gpu"]) == 5
    assert "lost" not in gpu0 and "lost" not in gpu2


def test_mig_instances_are_sampled_each_and_what_they_do_not_offer_is_dropped_for_them_alone(clock):
    fake = load_fake_nvml().FakeNvml(gpus=2, util=0.7, mig={1: [1, 2]}, gpm=True, sm_active=0.4)
    sampler = sampler_for(fake, clock)
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
    assert first["series"]["columns"]["sm_active"][1:] == [0.4] * 3 and first["gpm"]


def test_sm_activity_comes_from_gpm_sample_pairs_at_least_100_ms_apart(clock):
    fake = load_fake_nvml().FakeNvml(util=0.9, gpm=True, sm_active=0.2, occupancy=0.1)
    sampler = sampler_for(fake, clock)
    assert sampler.start()
    ticks(sampler, clock, 3, step=0.1)
    ticks(sampler, clock, 2, step=0.05)      # the second tick comes 50 ms after the last GPM sample: none
    ticks(sampler, clock, 1)                 # 100 ms after it: a pair again
    data = sampler.to_dict()
    columns = data["gpus"][0]["series"]["columns"]
    assert columns["sm_active"] == [None, 0.2, 0.2, 0.2, None, 0.2]
    assert columns["sm_occupancy"][1] == 0.1 and columns["gpm_busy"][1] == 0.9
    sampler.stop()
    assert fake.calls.count("nvmlGpmSampleFree") == 2


def test_without_gpm_there_is_no_sm_activity_and_nothing_fails(clock):
    sampler = sampler_for(load_fake_nvml().FakeNvml(gpm=False), clock)
    assert sampler.start()
    ticks(sampler, clock, 3)
    gpu = sampler.to_dict()["gpus"][0]
    assert gpu["series"]["columns"]["sm_active"] == [None] * 3 and not gpu["gpm"]


def test_pcie_throughput_is_read_by_its_own_loop_never_by_the_main_tick(clock):
    fake = load_fake_nvml().FakeNvml(gpus=8)
    sampler = sampler_for(fake, clock)
    assert sampler.start()
    ticks(sampler, clock, 20)
    assert fake.pcie_calls == 0
    sampler.tick_pcie()
    assert fake.pcie_calls == 16
    ticks(sampler, clock, 1)
    columns = sampler.to_dict()["gpus"][7]["series"]["columns"]
    assert columns["pcie_rx_bps"][-1] == 1000 * 1024 and columns["pcie_rx_bps"][0] is None


def test_the_job_samplers_run_pcie_on_a_slower_loop_of_its_own():
    import os
    import time
    from gpuprof.launch.samplers import JobSamplers
    fake = load_fake_nvml().FakeNvml(gpus=2)
    samplers = JobSamplers(0.1, True, lambda: (fake, None), time.monotonic)
    samplers.start(os.getpid())
    try:
        assert samplers._loops["nvml"].tick == samplers.nvml.tick
        assert samplers._loops["pcie"].tick == samplers.nvml.tick_pcie
        assert samplers._loops["pcie"].interval >= 1.0 and samplers._loops["nvml"].interval == 0.1
    finally:
        samplers.stop()


def test_every_process_nvml_lists_is_kept_even_when_its_memory_is_unknown(clock):
    fake = load_fake_nvml().FakeNvml(gpus=2, processes={0: [(3004242, None), (77, 2**30)], 1: [(88, None)]})
    sampler = sampler_for(fake, clock, {77, 88})
    assert sampler.start()
    ticks(sampler, clock, 1)
    gpu0, gpu1 = sampler.to_dict()["gpus"]
    assert gpu0["processes"] == {"3004242": None, "77": 2**30} and gpu0["job_memory"] == {"77": 2**30}
    assert gpu1["processes"] == {"88": None} and gpu1["job_memory"] == {}


def test_energy_is_a_column_where_the_device_counts_it(clock):
    sampler = sampler_for(load_fake_nvml().FakeNvml(gpus=1), clock)
    assert sampler.start()
    ticks(sampler, clock, 3)
    assert sampler.to_dict()["gpus"][0]["series"]["columns"]["energy_mj"] == [50_000, 100_000, 150_000]
    quiet = sampler_for(load_fake_nvml().FakeNvml(gpus=1, energy=False), clock)
    assert quiet.start()
    ticks(quiet, clock, 2)
    gpu = quiet.to_dict()["gpus"][0]
    assert gpu["series"]["columns"]["energy_mj"] == [None, None] and "energy" in gpu["unsupported"]
