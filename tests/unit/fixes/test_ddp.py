from gpuprof.advise import fixes
from gpuprof.advise.fixes import ddp
from tests.unit.fixes.cases import evidence, gpu, situation


def test_data_parallel_leads_and_says_why():
    built = ddp.build(evidence(data_parallel=True, data_parallel_where="train.py:9",
                               **gpu(gpu_count=2, gpu_figures=[(0, 0.9, 30e9), (1, 0.4, 10e9)])), situation())
    assert built["first"].startswith("first: nn.DataParallel") and built["where"] == "train.py:9"
    assert "a kernel was running on GPU 0 90% of the time against 40% on the others" in built["why"]
    assert "busy" not in built["why"]
    assert fixes.get("ddp").leads


def test_gpm_sm_activity_goes_beside_the_time_a_kernel_ran():
    built = ddp.build(evidence(data_parallel=True, **gpu(gpu_count=2, gpu_figures=[(0, 0.9, 30e9, 0.6),
                                                                                   (1, 0.4, 10e9, 0.2)])), situation())
    assert "90% of the time against 40% on the others, its SMs 60% active against 20% (GPM)" in built["why"]


def test_data_parallel_without_gpus_is_not_estimated():
    built = ddp.build(evidence(data_parallel=True), situation())
    assert built["estimated_speedup"] is None and "cannot be measured on this machine" in built["why"]


def test_a_compute_bound_job_on_one_of_several_gpus_is_told_to_use_them_all():
    assert ddp.build(evidence(**gpu(gpu_count=4)), situation("compute"))["estimated_speedup"] == 0.9 * 4
    assert ddp.build(evidence(**gpu()), situation("compute")) is None


def test_a_job_with_a_process_on_each_gpu_it_uses_is_not_told_to_use_ddp():
    # Two ranks, each on its own GPU of two (one of them power-capped): nothing is idle to add.
    assert ddp.build(evidence(**gpu(gpu_count=2, job_gpu_count=2)), situation("compute")) is None
    assert ddp.build(evidence(**gpu(gpu_count=2, job_gpu_count=1), one_rank_of_many=True), situation("compute")) is None
    built = ddp.build(evidence(**gpu(gpu_count=4, job_gpu_count=2)), situation("compute"))
    assert built["estimated_speedup"] == 0.9 * 2 and "the job used 2; the other 2 stayed idle" in built["why"]
