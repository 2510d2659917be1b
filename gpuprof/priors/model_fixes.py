"""Priors of the fixes to the model and its scale: the gains stated for fixes no run can estimate
(they rank by them until `gpuprof try` measures them), the assumed gains of a larger batch and of
DistributedDataParallel, and the memory the out-of-memory fixes free (activation checkpointing, an
8-bit optimizer, bfloat16 activations, a halved batch)."""

from gpuprof.priors.prior import Prior

TITLE = "Fixes to the model and its scale"

#: The compute-bound examples `gpuprof try` measured the model-side fixes on: the 2-core EPYC with
#: avx512_bf16, torch 2.13 CPU (docs/benchmarks.md, 'Model-side fixes').
ON_THE_EPYC = "`gpuprof try` on the 2-core EPYC with avx512_bf16 (torch 2.13 CPU), docs/benchmarks.md"
WITHOUT_A_PRIOR = "the fix ranks as a 1.0x gain, after every estimated fix of its group, until it is measured"

MIXED_PRECISION_GPU_PRIOR = Prior(
    id="mixed-precision.prior-gpu", kind="ranking prior", value=1.5, unit="x",
    source="assumed, 2026-11-23 (tensor cores and half the memory traffic); a GPU step the run counted is "
           "estimated from the H200's rates instead (gpu-rates.*)",
    used_for="ranks mixed-precision on a GPU whose step was not counted, until `gpuprof try` measures it",
    without_it=WITHOUT_A_PRIOR)

MIXED_PRECISION_CPU_PRIOR = Prior(
    id="mixed-precision.prior-cpu", kind="ranking prior", value=1.3, unit="x",
    source="bf16 autocast on a 3-layer MLP measured 1.48x, 2026-11-23 (the fix's comment); " + ON_THE_EPYC +
           ": 1.31x on compute_heavy, 1.25x on compute_transformer, 1.20x on compute_cnn",
    programs=("examples/compute_heavy.py", "examples/compute_transformer.py", "examples/compute_cnn.py"),
    used_for="ranks mixed-precision on a CPU with bf16 instructions, until `gpuprof try` measures it",
    without_it=WITHOUT_A_PRIOR)

CPU_BF16_SPEED_RATIO = Prior(
    id="cpu-bf16.speed-ratio", kind="measured rate", value=1.54, low=0.70, high=1.70, unit="x",
    source="fitted 2026-12-01 on 2-core x86-64 VMs with avx512_bf16 (torch 2.13 CPU): each program's measured "
           "bf16-autocast gain g and the share m of its step its matmuls, convolutions and attention took (timed "
           "by gpuprof on a 2-core Intel Xeon with avx512_bf16 and amx_bf16, load 1.5-3.7 from another session's "
           "tests) give r = m / (1/g - 1 + m): the corpus's calibrating half, gains measured by editing "
           "(2026-11-27), ddp_two_ranks 1.19x at m 0.42 (r 1.62), hf_trainer_text 0.95x at 0.13 (0.70), "
           "lightning_autoencoder 1.31x at 0.58 (1.70); the examples timed by hand or by `gpuprof try` "
           "(docs/benchmarks.md, 'Model-side fixes'), compute_heavy 1.31x at 0.75 (1.46), compute_cnn 1.20x at "
           "0.66 (1.34), compute_transformer 1.30x at 0.59 (1.65); central the median, ends the lowest and "
           "highest (a text model's small matmuls lose more to the casts than bf16 saves)",
    programs=("bench/corpus/ddp_two_ranks", "bench/corpus/hf_trainer_text", "bench/corpus/lightning_autoencoder",
              "examples/compute_heavy.py", "examples/compute_cnn.py", "examples/compute_transformer.py"),
    used_for="mixed-precision on a CPU with bf16 instructions: how much faster the counted step's matmuls, "
             "convolutions and attention run under bf16 autocast, casts included, applied to the share of the "
             "step they took (advise/cpu_math_modes.py)",
    without_it="mixed-precision on a CPU has no range and ranks by mixed-precision.prior-cpu")

COMPILE_PRIOR = Prior(
    id="compile.prior", kind="ranking prior", value=1.2, unit="x",
    source="assumed, 2026-11-23; " + ON_THE_EPYC + ": 1.06x on compute_transformer, 0.76x on compute_cnn",
    programs=("examples/compute_transformer.py", "examples/compute_cnn.py"),
    used_for="ranks compile until `gpuprof try` measures it (with its compile time and payback)",
    without_it=WITHOUT_A_PRIOR)

COMPILE_CPU_PRIOR = Prior(
    id="compile.prior-cpu", kind="ranking prior", value=1.0, unit="x",
    source=ON_THE_EPYC + ", 2026-11-23: 1.06x (0.80-1.48) on compute_transformer, 0.76x (0.61-1.01) on "
           "compute_cnn: on this kind of CPU compiling gained from nothing to a little and cost a quarter",
    programs=("examples/compute_transformer.py", "examples/compute_cnn.py"),
    used_for="ranks compile on a CPU-only run at no gain (after every estimated fix that gains), until "
             "`gpuprof try` measures it",
    without_it="compile ranks at the GPU's assumed 1.2x on a CPU, above estimated fixes that measured more")

CHANNELS_LAST_GPU_PRIOR = Prior(
    id="channels-last.prior-gpu", kind="ranking prior", value=1.2, unit="x",
    source="assumed, 2026-11-23 (tensor cores want NHWC); not measured",
    used_for="ranks channels-last for a convolutional model on a GPU, until measured",
    without_it=WITHOUT_A_PRIOR)

CHANNELS_LAST_CPU_PRIOR = Prior(
    id="channels-last.prior-cpu", kind="ranking prior", value=1.0, unit="x",
    source=ON_THE_EPYC + ": 1.06x (1.01-1.10) on compute_cnn, 2026-11-23; a small CNN timed by hand on the "
           "same CPU under load ran slower: no gain to expect before it is measured",
    programs=("examples/compute_cnn.py", "a small CNN timed by hand (docs/benchmarks.md, 'Model-side fixes')"),
    used_for="ranks channels-last for a convolutional model on a CPU, until measured",
    without_it=WITHOUT_A_PRIOR)

CUDNN_BENCHMARK_PRIOR = Prior(
    id="cudnn-benchmark.prior", kind="ranking prior", value=1.1, unit="x",
    source="assumed, 2026-11-23; not measured",
    used_for="ranks cudnn-benchmark for a convolutional model on a GPU, until measured",
    without_it=WITHOUT_A_PRIOR)

FUSED_OPTIMIZER_PRIOR = Prior(
    id="fused-optimizer.prior", kind="ranking prior", value=1.1, unit="x",
    source="assumed, 2026-11-23: a fused step on a GPU is a few launches instead of several per parameter; not "
           "measured on a GPU (on a CPU, fused-optimizer.prior-cpu)",
    used_for="ranks fused-optimizer on a GPU (never above the bound a free optimizer step gives), until measured",
    without_it=WITHOUT_A_PRIOR)

FUSED_OPTIMIZER_CPU_PRIOR = Prior(
    id="fused-optimizer.prior-cpu", kind="ranking prior", value=1.0, unit="x",
    source=ON_THE_EPYC + ": foreach=True for Adam measured 0.83x on compute_heavy, 2026-11-23; the corpus's "
           "tokenize_at_start (AdamW, calibrating half) measured 0.95x with foreach=True by editing it, 2026-11-27 "
           "(bench/corpus/tokenize_at_start/truth.json): no gain to expect on a CPU before it is measured",
    programs=("examples/compute_heavy.py", "bench/corpus/tokenize_at_start"),
    used_for="ranks fused-optimizer (foreach=True) on a CPU at no gain, until measured",
    without_it=WITHOUT_A_PRIOR)

TF32_PRIOR = Prior(
    id="tf32.prior", kind="ranking prior", value=1.3, unit="x",
    source="assumed, 2026-11-23; a GPU step the run counted is estimated from the H200's rates instead "
           "(gpu-rates.*)",
    used_for="ranks tf32 on a GPU whose step was not counted, until measured",
    without_it=WITHOUT_A_PRIOR)

SPAWNED_IMPORTS_PRIOR = Prior(
    id="spawned-worker-imports.prior", kind="ranking prior", value=1.1, unit="x",
    source="assumed, 2026-11-25: the script's own top level is not timed apart from a worker's interpreter start",
    used_for="ranks spawned-worker-imports (never above the bound of the worker restarts gone), until measured",
    without_it=WITHOUT_A_PRIOR)

LARGER_BATCH_COMPUTE_GAIN = Prior(
    id="larger-batch.compute-gain", kind="assumed saving", value=1.1, unit="x",
    source="assumed since the fix was written, 2026-11-21; not measured",
    used_for="larger-batch under a compute verdict: per-step overheads amortised over twice the samples",
    without_it="larger-batch has no estimate under a compute verdict")

LARGER_BATCH_OVERHEAD_SAVED = Prior(
    id="larger-batch.host-overhead-saved", kind="assumed saving", value=0.5, unit="of the host's share",
    source="assumed since the fix was written, 2026-11-21: a batch twice the size pays each step's host "
           "overhead once for twice the samples; not measured",
    used_for="larger-batch under a host.overhead verdict: the share of the host's time per sample it saves",
    without_it="larger-batch has no estimate for a host-bound run")

DDP_OVER_DATA_PARALLEL = Prior(
    id="ddp.over-data-parallel", kind="assumed saving", value=1.3, unit="x",
    source="stated since 2026-11-22 as what DistributedDataParallel commonly gives over nn.DataParallel on "
           "several GPUs ('1.3x faster or more'); not measured by this project",
    used_for="ddp where nn.DataParallel drives several GPUs: the estimate of the fix that leads",
    without_it="the fix that leads has no estimate")

DDP_PER_GPU = Prior(
    id="ddp.speed-up-per-gpu", kind="efficiency", value=0.9, unit="x a GPU",
    source="assumed since the fix was written, 2026-11-21; not measured",
    used_for="ddp for a compute-bound job that used one of several GPUs: the speed-up is this times the GPUs",
    without_it="the job is promised a speed-up equal to its GPU count")

CHECKPOINTED_ACTIVATIONS_FREED = Prior(
    id="activation-checkpointing.activations-freed", kind="assumed saving", value=0.6, unit="of the activations",
    source="assumed, 2026-11-23 (the fix's docstring: the largest blocks recomputed in backward, about a third "
           "more compute); not measured",
    used_for="activation-checkpointing after an out-of-memory death: the bytes it frees, which rank the memory "
             "fixes",
    without_it="the fix frees an unknown amount and ranks after every counted memory fix")

EIGHT_BIT_STATE_FREED = Prior(
    id="8bit-optimizer.state-freed", kind="assumed saving", value=0.75, unit="of the optimizer state",
    source="reasoned since the fix was written, 2026-11-22: bitsandbytes' 8-bit optimizers keep each state value in "
           "one byte where float32 takes four (their quantisation constants left out); not measured",
    used_for="8bit-optimizer after an out-of-memory death: the bytes it frees, which rank the memory fixes",
    without_it="the fix frees an unknown amount and ranks after every counted memory fix")

BF16_ACTIVATIONS_FREED = Prior(
    id="mixed-precision-memory.activations-freed", kind="assumed saving", value=0.5, unit="of the activations",
    source="reasoned since the fix was written, 2026-11-22: activations saved for backward in bfloat16 take two "
           "bytes where float32 takes four (autocast keeps norms, softmax and losses in float32, which free less); "
           "not measured",
    used_for="mixed-precision-memory after an out-of-memory death: the bytes it frees, which rank the memory fixes",
    without_it="the fix frees an unknown amount and ranks after every counted memory fix")

HALVED_BATCH_ACTIVATIONS_FREED = Prior(
    id="smaller-batch-accumulate.activations-freed", kind="assumed saving", value=0.5, unit="of the activations",
    source="reasoned since the fix was written, 2026-11-22: the activations kept for backward grow with the batch, "
           "so half the batch keeps about half of them; not measured",
    used_for="smaller-batch-accumulate after an out-of-memory death: the bytes it frees, which rank the memory "
             "fixes",
    without_it="the fix frees an unknown amount and ranks after every counted memory fix")
