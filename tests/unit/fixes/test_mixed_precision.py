from gpuprof.advise.fixes import mixed_precision
from tests.unit.fixes.cases import evidence, gpu, model, on_cuda, situation


def test_a_busy_gpu_gets_bf16_autocast():
    built = mixed_precision.build(evidence(**gpu(gpu_util=0.97)), situation("compute", 0.97))
    assert "torch.autocast('cuda', dtype=torch.bfloat16)" in built["snippet"]
    assert "the GPU is the limit (a kernel was running on the GPU 97% of the time)" in built["why"]
    with_gpm = mixed_precision.build(evidence(**gpu(gpu_util=0.97, gpu_sm_active=0.4)), situation("compute", 0.97))
    assert "97% of the time (40% of its SMs active, GPM)" in with_gpm["why"]


def test_only_for_compute_bound_runs():
    assert mixed_precision.build(evidence(**gpu()), situation("input.cpu")) is None
    assert mixed_precision.build(evidence(model=model(), cpu_flags=("avx512_bf16",)), situation("input.cpu")) is None


def test_a_cpu_with_bf16_instructions_gets_cpu_autocast_at_the_model_call_and_no_invented_number():
    built = mixed_precision.build(evidence(model=model(), cpu_flags=("avx512f", "avx512_bf16")), situation("compute", 0.95))
    assert built["where"] == "train.py:30" and "torch.autocast('cpu', dtype=torch.bfloat16)" in built["snippet"]
    assert built["estimated_speedup"] is None and built["prior"] > 1 and built["change"] == {"autocast": True}
    assert "gpuprof try --fix mixed-precision" in built["why"]


def test_not_offered_without_fast_low_precision_or_when_autocast_is_on_already():
    compute = situation("compute", 0.95)
    assert mixed_precision.build(evidence(model=model(), cpu_flags=("avx512f",)), compute) is None
    assert mixed_precision.build(evidence(model=model(autocast="bfloat16"), cpu_flags=("amx_bf16",)), compute) is None
    assert mixed_precision.build(evidence(model=model(dtypes={"bfloat16": 10}), cpu_flags=("amx_bf16",)), compute) is None
    assert mixed_precision.build(evidence(**gpu(gpu_util=0.9), model=on_cuda((6, 1))), compute) is None


def test_an_older_gpu_gets_float16_with_a_grad_scaler():
    built = mixed_precision.build(evidence(**gpu(gpu_util=0.9), model=on_cuda((7, 5))), situation("compute", 0.9))
    assert "dtype=torch.float16" in built["snippet"] and "GradScaler" in built["snippet"]


def cpu_counted(heavy_s: float, step_s: float = 0.1) -> dict:
    """A CPU step the FLOP count timed: its matmuls and convolutions took `heavy_s` of a `step_s` step."""
    return {"by_op": {"mm": 10 ** 9, "convolution": 10 ** 8}, "dtype": "float32", "ops": 400, "device": "cpu",
            "step_s": step_s, "seconds_by_op": {"mm": heavy_s * 0.8, "convolution": heavy_s * 0.2}}


def test_on_a_cpu_whose_step_ops_were_timed_the_range_follows_the_share_the_matmuls_took():
    compute = situation("compute", 0.95)
    heavy = mixed_precision.build(evidence(model=model(), cpu_flags=("avx512_bf16",), counted_step=cpu_counted(0.08)),
                                  compute)
    light = mixed_precision.build(evidence(model=model(), cpu_flags=("avx512_bf16",), counted_step=cpu_counted(0.02)),
                                  compute)
    assert heavy["prior"] is None and heavy["estimate_low"] < heavy["estimated_speedup"] < heavy["estimate_high"]
    assert light["estimate_high"] < heavy["estimate_high"] and light["estimated_speedup"] < heavy["estimated_speedup"]
    assert "took 80% of the 100 ms step" in heavy["why"]
    # autocast's casts can cost more than bf16 saves: the pessimistic end may be a slowdown
    assert heavy["estimate_low"] < 1.0 or light["estimate_low"] < 1.0


def test_a_cpu_step_that_was_counted_but_not_timed_keeps_its_prior():
    untimed = dict(cpu_counted(0.08), seconds_by_op={})
    built = mixed_precision.build(evidence(model=model(), cpu_flags=("avx512_bf16",), counted_step=untimed),
                                  situation("compute", 0.95))
    assert built["estimated_speedup"] is None and built["prior"] > 1
