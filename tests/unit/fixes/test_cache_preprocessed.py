from gpuprof.advise.fixes import cache_preprocessed
from tests.unit.fixes.cases import LOADER, evidence, situation


def test_cpu_work_is_cached_as_a_memmap_and_disk_reads_are_served_from_memory():
    cpu = cache_preprocessed.build(evidence(), situation("input.cpu"))
    disk = cache_preprocessed.build(evidence(), situation("input.disk"))
    assert "open_memmap" in cpu["snippet"] and "into memory" in disk["detail"]
    assert "60% of each step waits for data" in cpu["why"]


def test_a_contended_cpu_states_the_cost_as_a_share_of_the_cpu():
    contended = situation(findings=[{"bottleneck": "input.cpu", "share": 0.5, "evidence": {"contended": True}}])
    built = cache_preprocessed.build(evidence(), contended)
    assert "50% of the job's CPU" in built["why"]
    k = cache_preprocessed.CHEAPER
    assert abs(built["estimated_speedup"] - 1 / (1 - 0.5 * (1 - 1 / k))) < 1e-9
    low, high = cache_preprocessed.CHEAPER_LOW, cache_preprocessed.CHEAPER_HIGH
    assert abs(built["estimate_low"] - 1 / (1 - 0.5 * (1 - 1 / low))) < 1e-9
    assert abs(built["estimate_high"] - 1 / (1 - 0.5 * (1 - 1 / high))) < 1e-9


def test_not_for_latency():
    assert cache_preprocessed.build(evidence(), situation("input.latency")) is None


def test_random_augmentation_stays_online_and_the_deterministic_part_alone_is_offered_unestimated():
    loader = dict(LOADER, augmentation={"random": ["torch.randn at train.py:20", "RandomHorizontalFlip"],
                                        "deterministic": ["Resize"], "checked": True})
    built = cache_preprocessed.build(evidence(loader=loader), situation("input.cpu"))
    assert built["estimated_speedup"] is None
    assert "torch.randn at train.py:20" in built["why"] and "not estimated" in built["why"]
    assert "(Resize)" in built["detail"] and "same noise and flips" in built["detail"]
    disk = cache_preprocessed.build(evidence(loader=loader), situation("input.disk"))
    assert disk["estimated_speedup"] > 1 and "raw data only" in disk["detail"]


def test_a_path_read_and_found_deterministic_says_so():
    loader = dict(LOADER, augmentation={"random": [], "deterministic": [], "checked": True})
    built = cache_preprocessed.build(evidence(loader=loader), situation("input.cpu"))
    assert built["estimated_speedup"] > 1 and "draws no random numbers" in built["why"]


def test_on_a_cpu_only_machine_compute_gets_the_cores_cheaper_workers_free():
    """Workers on 2 cores using 1.2 of them, 20% wait: compute ran on 0.8 cores and gets 2 - 1.2/k."""
    ev = evidence(loader=dict(LOADER, num_workers=2), cpu_count=2, producer_cores=1.2, wait_share=0.2)
    built = cache_preprocessed.build(ev, situation("input.cpu", 0.2))
    k = cache_preprocessed.CHEAPER
    compute = 0.8 * (2 - 1.2) / (2 - 1.2 / k)
    assert abs(built["estimated_speedup"] - 1 / max(compute, 1 / k)) < 1e-9
    assert cache_preprocessed.freed_cores_gain(evidence(gpu=True, loader=dict(LOADER, num_workers=2)), 2.0) == 1.0
