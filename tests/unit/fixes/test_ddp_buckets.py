from gpuprof.advise.fixes import ddp_buckets
from tests.unit.fixes.cases import evidence, situation


def test_comm_gets_larger_buckets_without_an_invented_estimate():
    built = ddp_buckets.build(evidence(), situation("comm", 0.4))
    assert built["estimated_speedup"] is None and "bucket_cap_mb=100" in built["snippet"]


def test_only_for_comm():
    assert ddp_buckets.build(evidence(), situation("input.cpu")) is None
