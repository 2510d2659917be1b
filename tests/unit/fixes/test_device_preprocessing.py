from gpuprof.advise.fixes import device_preprocessing
from tests.unit.fixes.cases import evidence, gpu, situation


def test_per_sample_transforms_move_to_whole_batches_on_the_device():
    on_gpu = device_preprocessing.build(evidence(**gpu()), situation())
    on_cpu = device_preprocessing.build(evidence(), situation())
    assert on_gpu["estimated_speedup"] > on_cpu["estimated_speedup"]      # 10x cheaper on a GPU, 2x on a CPU
    assert "on a GPU it is larger" in on_cpu["why"] and on_gpu["where"] == "train.py:42"


def test_a_sampled_batch_function_is_vectorised_where_it_was_found():
    built = device_preprocessing.build(evidence(wait_source="sampled", data_where="get_batch (train.py:12)"),
                                       situation())
    assert "get_batch (train.py:12)" in built["detail"] and built["where"] is None


def test_only_for_cpu_bound_input():
    assert device_preprocessing.build(evidence(), situation("input.disk")) is None
