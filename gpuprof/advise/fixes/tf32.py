"""tf32: on an Ampere or later GPU, float32 matmuls and convolutions on tensor cores in TF32 (10-bit
mantissa inputs, float32 accumulation). Offered when the model trains in float32 without autocast
and the matmul precision is 'highest'. Estimated from the counted step's matmul FLOPs where the step
was counted (advise/math_modes.py; cuDNN already runs convolutions in TF32 by default), else a prior;
measured by `gpuprof try --fix tf32`."""

from gpuprof.advise import math_modes
from gpuprof.advise.fix import Fix
from gpuprof.advise.flag_terms import TF32_MATMUL, command_first
from gpuprof.advise.framework_terms import framework_first
from gpuprof.advise.model_terms import AMPERE, capability, compute_model, mostly_float32, not_estimated, on_gpu
from gpuprof.priors.model_fixes import TF32_PRIOR
from gpuprof.judge.verdict import bottlenecks
#: Not offered where the counted step's estimate is below this even at its high end.
LEAST_HIGH_END = 1.03

PRIOR = TF32_PRIOR.value


def build(ev, s):
    model = compute_model(ev, s)
    if model is None or not on_gpu(model) or model.get("autocast") or not mostly_float32(model):
        return None
    cap = capability(model)
    flags = model.get("flags") or {}
    if cap is None or cap < AMPERE or flags.get("matmul_precision") != "highest" or flags.get("allow_tf32"):
        return None
    if flags.get("precision_api") == "fp32_precision":
        # torch >= 2.9: a program that mixes this API with the legacy flags cannot read them back.
        setting = "torch.backends.cuda.matmul.fp32_precision = 'tf32'"
        snippet = f"{setting}   # once, at start-up\ntorch.backends.cudnn.conv.fp32_precision = 'tf32'"
    else:
        setting = "torch.set_float32_matmul_precision('high')"
        snippet = f"{setting}   # once, at start-up\ntorch.backends.cudnn.allow_tf32 = True"
    figures, words = math_modes.estimate(ev, "TF32", model)
    if figures is not None and figures[2] < LEAST_HIGH_END:
        return None         # the counted step's float32 matmuls are too few to matter (cuDNN's convolutions are TF32)
    today = f"a compute capability {cap[0]}.{cap[1]} GPU runs float32 matmuls at full precision today; "
    built = {"estimated_speedup": None, "prior": PRIOR, "where": None,
             "detail": f"let float32 matmuls use TF32 tensor cores: {setting}",
             "snippet": command_first(ev, TF32_MATMUL, True, framework_first(ev, TF32_MATMUL, snippet)),
             "why": today + not_estimated("tf32", "the gain depends on how much of the step is matmuls"),
             "change": {"allow_tf32": True}}
    if figures is not None:
        central, low, high = figures
        built.update(estimated_speedup=central, estimate_low=low, estimate_high=high, prior=None, why=today + words)
    return built


def keep(settings, loader, framework=None):
    return "torch.set_float32_matmul_precision('high') at start-up"


FIX = Fix(id="tf32", title="Allow TF32 matmuls on tensor cores", effort=1,
          addresses=(bottlenecks.COMPUTE.id,), build=build,
          needs_gpu=True, try_keys=("allow_tf32",), keep=keep, unadvised=lambda report: {"allow_tf32": True},
          variant_caution=lambda change: "float32 matmuls round their inputs to 10 mantissa bits")
