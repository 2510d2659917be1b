"""The model-side fixes of a compute-bound run: each applies from the probes' facts about the model,
is not offered where the program does it already, and states a prior instead of an estimate."""

from gpuprof.advise.fixes import channels_last, compile, cudnn_benchmark, fused_optimizer, tf32
from gpuprof.advise.rank import advise
from tests.unit.fixes.cases import evidence, gpu, model, on_cuda, situation

COMPUTE = situation("compute", 0.95)


def cpu_run(**fields):
    return evidence(wait_share=0.02, model=model(**fields), cpu_flags=("avx512_bf16",), optimizer_share=0.2)


def test_compile_unless_compiled_already():
    built = compile.build(cpu_run(), COMPUTE)
    assert built["change"] == {"compile_model": True} and built["estimated_speedup"] is None and built["where"] == "train.py:30"
    assert compile.build(cpu_run(compiled=True), COMPUTE) is None
    assert compile.build(cpu_run(), situation("input.cpu")) is None
    assert compile.build(evidence(wait_share=0.02), COMPUTE) is None       # the probes saw no model


def test_channels_last_only_for_convolutions_fed_nchw():
    assert channels_last.build(cpu_run(convs=3, input_layout="nchw"), COMPUTE)["change"] == {"channels_last": True}
    assert channels_last.build(cpu_run(convs=3, input_layout="channels_last"), COMPUTE) is None
    assert channels_last.build(cpu_run(convs=0, input_layout="nchw"), COMPUTE) is None


def test_fused_optimizer_foreach_on_a_cpu_fused_on_a_gpu_bounded_by_the_optimizer_share():
    built = fused_optimizer.build(cpu_run(), COMPUTE)
    assert built["change"] == {"optimizer_foreach": True} and "foreach=True" in built["snippet"]
    assert "at most 1.25x" in built["why"] and built["prior"] <= 1.25
    on_gpu = evidence(**gpu(gpu_util=0.9), wait_share=0.02, model=on_cuda(), optimizer_share=0.2)
    assert fused_optimizer.build(on_gpu, COMPUTE)["change"] == {"optimizer_fused": True}
    assert fused_optimizer.build(cpu_run(optimizer={"class": "Adam", "foreach": True, "fused": None,
                                                    "takes": ["foreach", "fused"]}), COMPUTE) is None
    assert fused_optimizer.build(cpu_run(optimizer={"class": "LBFGS", "foreach": None, "fused": None, "takes": []}),
                                 COMPUTE) is None
    small = evidence(wait_share=0.02, model=model(), optimizer_share=0.01)
    assert fused_optimizer.build(small, COMPUTE) is None


def test_tf32_and_cudnn_benchmark_on_gpus_that_have_them():
    ampere = evidence(**gpu(gpu_util=0.9), wait_share=0.02, model=on_cuda((8, 6), convs=4))
    assert tf32.build(ampere, COMPUTE)["change"] == {"allow_tf32": True}
    assert cudnn_benchmark.build(ampere, COMPUTE)["change"] == {"cudnn_benchmark": True}
    volta = evidence(**gpu(gpu_util=0.9), wait_share=0.02, model=on_cuda((7, 0), convs=4))
    assert tf32.build(volta, COMPUTE) is None
    high = evidence(**gpu(gpu_util=0.9), wait_share=0.02,
                    model=on_cuda(flags={"matmul_precision": "high", "allow_tf32": False, "cudnn_benchmark": True}))
    assert tf32.build(high, COMPUTE) is None and cudnn_benchmark.build(high, COMPUTE) is None


def test_a_compute_bound_cpu_run_is_advised_model_side_fixes_ranked_by_their_priors():
    advice = advise(cpu_run(), {"bottleneck": "compute", "share": 0.95})
    ids = [a["id"] for a in advice]
    assert ids[0] == "mixed-precision" and {"compile", "fused-optimizer"} <= set(ids)
    assert all(a["estimated_speedup"] is None and a["prior"] for a in advice)


def test_compile_on_a_cpu_ranks_at_no_gain_and_says_what_it_measured_there():
    built = compile.build(cpu_run(), COMPUTE)
    assert built["prior"] == 1.0 and "0.76-1.06x on two programs" in built["why"]
    assert compile.build(evidence(**gpu(gpu_util=0.9), wait_share=0.02, model=on_cuda()), COMPUTE)["prior"] > 1.0


def test_a_launch_bound_gpu_job_is_offered_cuda_graphs_and_a_fused_step_bounded_by_its_idle_gpu():
    launch_bound = situation("host.overhead", 0.8)
    run = evidence(wait_share=0.02, optimizer_share=0.3, model=on_cuda(optimizer={"class": "AdamW", "takes": ["fused", "foreach"]}), **gpu(gpu_util=0.2))
    built = compile.build(run, launch_bound)
    assert "mode='reduce-overhead'" in built["snippet"] and "CUDA graphs" in built["detail"]
    assert "a kernel ran only 20% of the steps" in built["why"] and "at most 5.00x faster" in built["why"]
    assert fused_optimizer.build(run, launch_bound)["change"] == {"optimizer_fused": True}
    on_cpu = evidence(wait_share=0.02, optimizer_share=0.3, model=model())
    assert compile.build(on_cpu, launch_bound) is None                     # no GPU: nothing launches kernels
    ids = [a["id"] for a in advise(run, {"bottleneck": "host.overhead", "share": 0.8})]
    assert "compile" in ids and "fused-optimizer" in ids
