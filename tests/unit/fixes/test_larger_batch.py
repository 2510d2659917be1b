from gpuprof.advise import fixes
from gpuprof.advise.fixes import larger_batch
from tests.unit.fixes.cases import evidence, gpu, situation


def test_a_gpu_with_memory_to_spare_doubles_the_batch_as_far_as_it_fits():
    built = larger_batch.build(evidence(largest_batch=48, **gpu()), situation("host.overhead", 0.5))
    assert built["detail"] == "batch_size 32 -> 48" and "largest batch that fits is about 48" in built["why"]
    assert abs(built["estimated_speedup"] - 1 / (1 - 0.5 * 0.5)) < 1e-9
    assert fixes.get("larger-batch").changes_training


def test_no_larger_batch_when_none_fits_or_memory_is_short():
    assert larger_batch.build(evidence(largest_batch=32, **gpu()), situation("compute")) is None
    assert larger_batch.build(evidence(**gpu(gpu_mem_free_share=0.2)), situation("compute")) is None
