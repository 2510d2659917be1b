"""mixed-precision: the trained model's forward (and the loss) under autocast in the low-precision
type its device runs fast: bf16 on Ampere or later GPUs and on CPUs with bf16 instructions, float16
with a GradScaler on older GPUs. Not offered when the forward already runs under autocast or the
parameters are not float32. On a GPU whose step was counted, the gain is estimated from the step's
FLOPs by op family and the rates each reaches in each mode (advise/math_modes.py); on a CPU whose
counted step's ops were timed, from the share of the step its matmuls and convolutions took and
bf16's measured rate on such a CPU (advise/cpu_math_modes.py); elsewhere a stated prior ranks it
until `gpuprof try --fix mixed-precision` measures it (try runs the model's forward under autocast)."""

from gpuprof.advise import cpu_math_modes, math_modes
from gpuprof.advise.fix import Fix
from gpuprof.judge.verdict.gpu_words import kernel_time
from gpuprof.advise.flag_terms import PRECISION, command_first
from gpuprof.advise.framework_terms import framework_first, setting
from gpuprof.advise.model_terms import compute_model, fast_low_precision, mostly_float32, not_estimated, on_gpu, where
from gpuprof.priors.model_fixes import MIXED_PRECISION_CPU_PRIOR, MIXED_PRECISION_GPU_PRIOR
from gpuprof.judge.verdict import bottlenecks
PRIOR_GPU = MIXED_PRECISION_GPU_PRIOR.value      # tensor cores and half the memory traffic
PRIOR_CPU = MIXED_PRECISION_CPU_PRIOR.value      # bf16 instructions


def build(ev, s):
    if s.bottleneck != bottlenecks.COMPUTE.id:
        return None
    model = compute_model(ev, s)
    if model is None:
        if not ev.gpu:
            return None
        # A GPU run whose model the probes did not see: the general advice, unmeasured.
        dtype, device, line = "bfloat16", "cuda", None
    else:
        if model.get("autocast") or not mostly_float32(model):
            return None
        dtype = fast_low_precision(ev, model)
        if dtype is None:
            return None
        device, line = ("cuda" if on_gpu(model) else "cpu"), where(model)
    scaled = dtype == "float16"
    snippet = f"with torch.autocast({device!r}, dtype=torch.{dtype}):\n    loss = loss_fn(model(x), y)"
    if scaled:
        snippet = ("scaler = torch.amp.GradScaler('cuda')   # once, before the loop\n" + snippet +
                   "\nscaler.scale(loss).backward()\nscaler.step(optimizer)\nscaler.update()")
    if device == "cuda":
        chip = (f"the GPU is the limit ({kernel_time(ev.gpu_util or 0, ev.gpu_sm_active)}); float32 matmuls run well "
                f"below {dtype} peak")
    else:
        chip = "the CPU is the device and has bf16 instructions (" + \
               ", ".join(f for f in ev.cpu_flags if "bf16" in f) + ")"
    built = {"estimated_speedup": None, "prior": PRIOR_GPU if device == "cuda" else PRIOR_CPU, "where": line,
             "detail": f"run the model's forward and the loss under torch.autocast({device!r}, dtype=torch.{dtype})"
                       + (" with a GradScaler (this GPU has no fast bf16)" if scaled else "")
                       + "; parameters and optimizer stay float32",
             "snippet": command_first(ev, PRECISION, dtype, framework_first(ev, PRECISION, snippet, dtype=dtype)),
             "why": f"{chip}; " + not_estimated("mixed-precision", "the gain depends on how much of the step is "
                                                                   "matmuls and convolutions"),
             "change": {"autocast": True}}
    if model is not None:
        if device == "cuda":
            figures, words = math_modes.estimate(ev, "BF16" if dtype == "bfloat16" else "FP16", model)
        else:
            figures, words = cpu_math_modes.estimate(ev)
        if figures is not None:
            central, low, high = figures
            built.update(estimated_speedup=central, estimate_low=low, estimate_high=high, prior=None,
                         why=f"{chip}; {words}")
    return built


def keep(settings, loader, framework=None):
    own = setting(framework, PRECISION)
    framework_words = f"{own}, or " if own else ""
    return framework_words + "run the forward and the loss under torch.autocast as the fix's snippet shows"


FIX = Fix(id="mixed-precision", title="Train in mixed precision (autocast)", effort=1,
          addresses=(bottlenecks.COMPUTE.id,),
          build=build, try_keys=("autocast",), keep=keep, unadvised=lambda report: {"autocast": True},
          variant_caution=lambda change: "the forward runs in lower precision: losses differ in their last digits")
