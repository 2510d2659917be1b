"""Mixed precision and TF32 estimated from the counted step (advise/math_modes.py), checked against
what an H200 measured on whole programs the rates were not taken from (docs/validation.md): a GPT in
float32 (try: bf16 autocast 5.68x, TF32 3.10x) and a ResNet-18 on CIFAR-size images (bf16 autocast
1.16x). The step figures below are those runs' own."""

import pytest

from gpuprof.advise import math_modes, rank
from gpuprof.judge.verdict.evidence import Evidence

FLAGS = {"matmul_precision": "highest", "allow_tf32": False, "cudnn_allow_tf32": True}
MODEL = {"class": "GPT", "device": "cuda:0", "dtypes": {"float32": 1}, "flags": FLAGS, "capability": [9, 0],
         "autocast": None}
GPT_FLOPS = {"mm": 3991098359808, "addmm": 1391569403904,
             "_scaled_dot_product_efficient_attention_backward": 386547056640,
             "_scaled_dot_product_efficient_attention": 154618822656}
RESNET_FLOPS = {"convolution_backward": 567841652736, "convolution": 284373811200, "mm": 5242880, "addmm": 2621440}


def evidence(by_op, step_s, ops=None, gpu_name="NVIDIA H200", util=0.96):
    ev = Evidence()
    ev.gpu, ev.gpu_name, ev.gpu_util, ev.model = True, gpu_name, util, MODEL
    ev.counted_step = {"by_op": by_op, "dtype": "float32", "ops": ops, "device": "cuda:0", "step_s": step_s}
    return ev


@pytest.mark.parametrize("target,measured", [("BF16", 5.68), ("TF32", 3.10)])
def test_a_float32_gpt_s_gain_holds_what_try_measured_on_an_h200(target, measured):
    (central, low, high), words = math_modes.estimate(evidence(GPT_FLOPS, 0.1319), target, MODEL)
    assert "91% matmuls" in words and low <= measured <= high
    assert high / low < 3.0


def test_a_resnet_s_convolutions_are_tf32_already_so_bf16_buys_little():
    (central, low, high), _ = math_modes.estimate(evidence(RESNET_FLOPS, 0.0136), "BF16", MODEL)
    assert low <= 1.16 <= high < 1.7


def test_a_gpu_idle_part_of_the_steps_may_gain_nothing_from_a_faster_mode():
    """The ResNet's own program kept the H200 busy 70% of its steps (host-paced): autocast measured
    0.87x there, 1.16x in a bare loop."""
    ev = evidence(RESNET_FLOPS, 0.0140, ops=304, util=0.70)
    (central, low, high), _ = math_modes.estimate(ev, "BF16", MODEL)
    assert low == pytest.approx(1.0) and 1.16 <= high < 1.7
    assert "idled 30%" in math_modes.estimate(ev, "BF16", MODEL)[1]
    (_, _, tf32_high), _ = math_modes.estimate(evidence(RESNET_FLOPS, 0.0136), "TF32", MODEL)
    assert tf32_high < 1.01                      # its float32 matmuls are the classifier alone


def test_the_host_s_launches_floor_the_step():
    """A step of few FLOPs and many ops is the host's: a faster mode cannot shorten it."""
    few = {"mm": 2e9}
    (_, low, high), _ = math_modes.estimate(evidence(few, 0.010, ops=600), "BF16", MODEL)
    assert high <= 0.010 / (600 * math_modes.HOST_S_PER_OP[0]) + 1e-9
    (_, no_floor_low, _), _ = math_modes.estimate(evidence(few, 0.010), "BF16", MODEL)
    assert low <= no_floor_low


def test_without_a_count_or_a_known_gpu_there_is_no_estimate_and_a_reason():
    assert math_modes.estimate(evidence({}, 0.1), "BF16", MODEL) == (None, "the step's FLOPs or the GPU were not counted")
    figures, reason = math_modes.estimate(evidence(GPT_FLOPS, 0.1319, gpu_name="Mystery GPU"), "BF16", MODEL)
    assert figures is None and "Mystery GPU" in reason


def test_the_advice_ranks_mixed_precision_by_its_range_with_the_figures_in_its_why():
    ev = evidence(GPT_FLOPS, 0.1319, ops=1000)
    verdict = {"bottleneck": "compute", "share": 0.99, "confidence": 0.9, "evidence": {}}
    advice = rank.advise(ev, verdict)
    ids = [a["id"] for a in advice]
    assert ids.index("mixed-precision") < ids.index("tf32")
    mixed = advice[ids.index("mixed-precision")]
    assert mixed["estimate"]["low"] <= 5.68 <= mixed["estimate"]["high"]
    assert "91% matmuls" in mixed["why"] and "not estimated" not in mixed["why"]


def test_a_gpu_held_at_a_lower_clock_computes_that_much_slower():
    """The same GPT step at 2.5 times the time, on a GPU whose SM clock ran at 40% of its top while
    busy (a power cap; the simulated GPU in slow motion): the matmuls still fill the step, so TF32
    still buys about what it did at full clock; read at the top clock's rates they would seem to take
    only 40% of it and the estimate would fall far short."""
    slow = evidence(GPT_FLOPS, 0.1319 * 2.5)
    (_, full_low, full_high), _ = math_modes.estimate(evidence(GPT_FLOPS, 0.1319), "TF32", MODEL)
    (_, unclocked_low, unclocked_high), _ = math_modes.estimate(slow, "TF32", MODEL)
    assert unclocked_high < 2.0
    slow.gpu_clock_share = 0.4
    (_, low, high), words = math_modes.estimate(slow, "TF32", MODEL)
    assert low == pytest.approx(full_low, rel=0.02) and high == pytest.approx(full_high, rel=0.02)
    assert "40% of its top SM clock" in words
