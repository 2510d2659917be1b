from gpuprof.advice.fixes import ddp_no_sync
from tests.unit.fixes.cases import evidence, situation


def test_waiting_in_collectives_gets_accumulation_with_no_sync():
    built = ddp_no_sync.build(evidence(), situation("comm", 0.4))
    assert abs(built["estimated_speedup"] - 1 / (1 - 0.4 * 3 / 4)) < 1e-9
    assert "model.no_sync()" in built["snippet"] and f"{built['estimated_speedup']:.2f}x" in built["why"]


def test_only_for_comm():
    assert ddp_no_sync.build(evidence(), situation("compute", 0.9)) is None
