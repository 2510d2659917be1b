from gpuprof.advise.fixes import concurrent_fetch
from tests.unit.fixes.cases import LOADER, evidence, situation


def test_a_waiting_dataloader_fetches_a_batch_with_requests_in_flight():
    built = concurrent_fetch.build(evidence(producer_cpu_ratio=0.05), situation("input.latency"))
    assert "ThreadPoolExecutor(8)" in built["snippet"] and built["where"] == "train.py:42"
    assert "idle 95%" in built["why"]


def test_a_batch_of_one_or_another_bottleneck_gets_none():
    assert concurrent_fetch.build(evidence(loader=dict(LOADER, batch_size=1)), situation("input.latency")) is None
    assert concurrent_fetch.build(evidence(), situation("input.cpu")) is None
