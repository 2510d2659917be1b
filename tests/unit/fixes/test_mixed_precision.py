from gpuprof.advice import fixes
from gpuprof.advice.fixes import mixed_precision
from tests.unit.fixes.cases import evidence, gpu, situation


def test_a_busy_gpu_gets_bf16_autocast():
    built = mixed_precision.build(evidence(**gpu(gpu_util=0.97)), situation("compute", 0.97))
    assert "torch.autocast('cuda', dtype=torch.bfloat16)" in built["snippet"] and "97% busy" in built["why"]


def test_only_for_compute_on_a_gpu():
    assert mixed_precision.build(evidence(**gpu()), situation("input.cpu")) is None
    assert fixes.get("mixed-precision").needs_gpu
