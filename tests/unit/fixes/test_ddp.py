from gpuprof.advice import fixes
from gpuprof.advice.fixes import ddp
from tests.unit.fixes.cases import evidence, gpu, situation


def test_data_parallel_leads_and_says_why():
    built = ddp.build(evidence(data_parallel=True, data_parallel_where="train.py:9",
                               **gpu(gpu_count=2, gpu_figures=[(0, 0.9, 30e9), (1, 0.4, 10e9)])), situation())
    assert built["first"].startswith("first: nn.DataParallel") and built["where"] == "train.py:9"
    assert "GPU 0 busy 90% against 40% on the others" in built["why"]
    assert fixes.get("ddp").leads


def test_data_parallel_without_gpus_is_not_estimated():
    built = ddp.build(evidence(data_parallel=True), situation())
    assert built["estimated_speedup"] is None and "cannot be measured on this machine" in built["why"]


def test_a_compute_bound_job_on_one_of_several_gpus_is_told_to_use_them_all():
    assert ddp.build(evidence(**gpu(gpu_count=4)), situation("compute"))["estimated_speedup"] == 0.9 * 4
    assert ddp.build(evidence(**gpu()), situation("compute")) is None
