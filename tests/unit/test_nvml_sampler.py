from gpuprof.samplers.nvml import NvmlSampler
from tests.conftest import load_fake_nvml


def sampler_for(fake, clock, pids=frozenset()):
    return NvmlSampler(fake, clock, job_pids=lambda: set(pids))


def test_samples_every_gpu_and_the_jobs_memory(clock):
    fake = load_fake_nvml().FakeNvml(gpus=2, util=0.8, job_pid=42)
    sampler = sampler_for(fake, clock, {42})
    assert sampler.start()
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
