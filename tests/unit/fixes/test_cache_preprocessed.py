from gpuprof.advice.fixes import cache_preprocessed
from tests.unit.fixes.cases import evidence, situation


def test_cpu_work_is_cached_as_a_memmap_and_disk_reads_are_served_from_memory():
    cpu = cache_preprocessed.build(evidence(), situation("input.cpu"))
    disk = cache_preprocessed.build(evidence(), situation("input.disk"))
    assert "open_memmap" in cpu["snippet"] and "into memory" in disk["detail"]
    assert "60% of each step waits for data" in cpu["why"]


def test_a_contended_cpu_states_the_cost_as_a_share_of_the_cpu():
    contended = situation(findings=[{"bottleneck": "input.cpu", "share": 0.5, "evidence": {"contended": True}}])
    built = cache_preprocessed.build(evidence(), contended)
    assert "50% of the job's CPU" in built["why"]
    assert abs(built["estimated_speedup"] - 1 / (1 - 0.5 * 0.5)) < 1e-9


def test_not_for_latency():
    assert cache_preprocessed.build(evidence(), situation("input.latency")) is None
