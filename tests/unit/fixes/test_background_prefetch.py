from gpuprof.advise.fixes import background_prefetch
from tests.unit.fixes.cases import evidence, situation


def test_a_hand_written_loop_that_waits_gets_threads_that_wait_side_by_side():
    built = background_prefetch.build(evidence(wait_source="before-first-forward", wait_share=0.6, loader=None,
                                               producer_cpu_ratio=0.05), situation("input.latency"))
    assert "ThreadPoolExecutor(max_workers=2)" in built["snippet"]
    assert abs(built["estimated_speedup"] - 1 / max(0.4, 0.6 / 2)) < 1e-9


def test_a_dataloader_or_a_cpu_bound_loop_gets_no_prefetch_threads():
    assert background_prefetch.build(evidence(), situation("input.latency")) is None
    assert background_prefetch.build(evidence(wait_source="sampled"), situation("input.cpu")) is None
