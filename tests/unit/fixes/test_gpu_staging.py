from gpuprof.advise import fixes
from gpuprof.advise.fixes import gpu_staging
from tests.unit.fixes.cases import evidence, gpu, situation


def test_data_is_staged_on_a_gpu_with_memory_to_spare():
    built = gpu_staging.build(evidence(**gpu()), situation())
    assert "index batches there" in built["detail"] and "80% of its memory free" in built["why"]


def test_a_full_gpu_gets_no_staging_and_a_cpu_only_run_is_never_offered_it():
    assert gpu_staging.build(evidence(**gpu(gpu_mem_free_share=0.1)), situation()) is None
    assert fixes.get("gpu-staging").needs_gpu
