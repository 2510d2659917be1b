"""Priors of the math-mode estimates on a GPU (gpuprof/advise/math_modes.py): the rates each op
family reached in each mode, the speed ratios between modes, and the host's cost per op, all
measured once on one NVIDIA H200; and the utilisation under which the host sets a step's pace."""

from gpuprof.priors.prior import Prior

TITLE = "Math modes on a GPU"

H200 = ("measured on one NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130, 16-core Intel Xeon host), "
        "2026-11-27, bench/real_gpu/cost_table.py (docs/simulated-gpu.md)")
#: Whole programs on the same H200 the rates were not taken from (docs/validation.md).
CHECKED_ON = ("bench/real_gpu/programs/transformer_lm.py", "bench/real_gpu/programs/conv_workers_pinned.py")

H200_SHARE_OF_PEAK = Prior(
    id="gpu-rates.share-of-peak", kind="measured rate", unit="of the data sheet's dense peak, lowest–highest",
    value={"matmul": {"FP32": (0.57, 0.77), "TF32": (0.30, 0.70), "BF16": (0.18, 0.71), "FP16": (0.18, 0.71)},
           "conv": {"FP32": (0.59, 1.0), "TF32": (0.19, 0.42), "BF16": (0.15, 0.31), "FP16": (0.15, 0.31)},
           "attention": {"FP32": (0.33, 0.63), "TF32": (0.33, 0.63), "BF16": (0.16, 0.21), "FP16": (0.16, 0.21)}},
    source=H200 + ": square matmuls 1024-8192 (fp32 38.3-51.3 TFLOPS; smaller ones are the host's launches); "
                  "3x3 convolutions at ResNet shapes (fp32 39.6-67.2, TF32 93.8-209.5, bf16 147.6-305.4 TFLOPS); "
                  "causal SDPA forward and backward at (16, 12, 512, 64) in the FLOP counter's own count (fp32 42 "
                  "TFLOPS memory-efficient, 22 math; bf16 206 default, 160 flash)",
    programs=CHECKED_ON,
    used_for="mixed-precision and tf32 on a counted GPU step: the time each op family takes now, from its "
             "counted FLOPs",
    without_it="a counted step has no estimate for its math mode, and the fixes rank by their priors")

H200_SPEED_RATIO = Prior(
    id="gpu-rates.speed-ratio", kind="measured rate", unit="times faster in the new mode",
    value={("matmul", "FP32", "TF32"): (6.7, 6.9), ("matmul", "FP32", "BF16"): (13.1, 14.0),
           ("matmul", "TF32", "BF16"): (1.93, 2.02),
           ("conv", "FP32", "TF32"): (2.37, 3.12), ("conv", "FP32", "BF16"): (3.5, 4.9),
           ("conv", "TF32", "BF16"): (1.46, 1.57),
           ("attention", "FP32", "BF16"): (4.9, 4.9), ("attention", "TF32", "BF16"): (4.9, 4.9),
           ("attention", "FP32", "TF32"): (1.0, 1.0)},
    source=H200 + ": shape by shape (matmuls 2048-8192; at 1024 and below a step's matmuls are launch-bound, "
                  "which the host's floor takes); TF32 leaves attention's kernels as torch picks them",
    programs=CHECKED_ON,
    used_for="mixed-precision and tf32 on a counted GPU step: how much faster each family runs after the change",
    without_it="a counted step has no estimate for its math mode, and the fixes rank by their priors")

HOST_COST_PER_OP = Prior(
    id="gpu-rates.host-seconds-per-op", kind="measured cost", low=5.7e-6, high=16.4e-6, unit="s",
    source=H200 + ": a bare eager launch took 5.7 us of the host, an op of a small MLP's Adam step with "
                  "autograd 16.4 us",
    programs=CHECKED_ON,
    used_for="the floor under a faster math mode: a step is no shorter than its counted ops take to launch",
    without_it="a step of many small ops is promised the device's speed-up although the host sets its pace")

HOST_PACED_BELOW = Prior(
    id="gpu-rates.host-paced-below", kind="threshold", value=0.9, unit="GPU utilisation with the data ready",
    source="set 2026-11-27 from the H200's ResNet-18 program: at 70% utilisation with the data ready, bf16 "
           "autocast measured 0.87x against an estimate of 1.08-1.57x (docs/validation.md); agreed on the other "
           "side by the same H200's float32 GPT (bench/real_gpu/programs/transformer_lm.py): at 99% utilisation "
           "the device set the pace, and mixed precision measured 5.68x and 4.08x, a device's speed-up",
    programs=("bench/real_gpu/programs/conv_workers_pinned.py", "bench/real_gpu/programs/transformer_lm.py"),
    used_for="mixed-precision and tf32: below it the host's launches may set the step's pace, so the low end "
             "is no gain",
    without_it="a host-paced step's low end keeps the device's speed-up: the ResNet-18 read 1.08x at worst and "
               "measured 0.87x")
