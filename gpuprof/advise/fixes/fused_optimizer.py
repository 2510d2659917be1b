"""fused-optimizer: an optimizer that updates its parameters one tensor at a time does it in one
fused kernel (fused=True, on a GPU) or in a few multi-tensor calls (foreach=True, on a CPU, where
torch's default is the per-tensor loop). Offered when the optimizer takes the option and does not
use it. Not estimated: on this project's CPU-only machine foreach=True measured 0.83x and 0.95x on
two programs (docs/benchmarks.md), so on a CPU it ranks at no gain; the optimizer's sampled share of
the step bounds the gain, and a prior below that bound ranks it until `gpuprof try --fix
fused-optimizer` measures it."""

from gpuprof.advise.fix import MIN_GAIN, Fix, pct
from gpuprof.advise.model import cheaper_share
from gpuprof.advise.model_terms import compute_model, launch_bound_model, not_estimated, on_gpu
from gpuprof.priors.model_fixes import FUSED_OPTIMIZER_CPU_PRIOR, FUSED_OPTIMIZER_PRIOR
from gpuprof.judge.verdict import bottlenecks
PRIOR = FUSED_OPTIMIZER_PRIOR.value
PRIOR_CPU = FUSED_OPTIMIZER_CPU_PRIOR.value


def build(ev, s):
    model = compute_model(ev, s) or launch_bound_model(ev, s)    # a fused step is also far fewer launches
    optimizer = (model or {}).get("optimizer") or {}
    takes = optimizer.get("takes") or ()
    if not optimizer or optimizer.get("fused") or not ev.optimizer_share:
        return None
    gpu = on_gpu(model)
    option = "fused" if gpu and "fused" in takes else "foreach" if not gpu and "foreach" in takes else None
    if option is None or (option == "foreach" and optimizer.get("foreach")):
        return None
    bound = cheaper_share(ev.optimizer_share, 1.0)
    if bound < MIN_GAIN:
        return None
    name = optimizer.get("class") or "the optimizer"
    return {"estimated_speedup": None, "prior": min(PRIOR if gpu else PRIOR_CPU, bound), "where": None,
            "detail": f"{name}(..., {option}=True)" + (" (on a CPU torch's default is one tensor at a time)"
                                                       if option == "foreach" else ""),
            "snippet": f"optimizer = torch.optim.{name}(model.parameters(), ..., {option}=True)",
            "why": f"the optimizer step is {pct(ev.optimizer_share)} of each step (sampled), so even a free one makes "
                   f"a step at most {bound:.2f}x faster; " +
                   not_estimated("fused-optimizer", f"how much {option}=True saves depends on the parameters' count and "
                                                    "sizes"),
            "change": {f"optimizer_{option}": True}}


def keep(settings, loader, framework=None):
    option = "fused" if settings.get("optimizer_fused") else "foreach"
    return f"pass {option}=True where the optimizer is built"


FIX = Fix(id="fused-optimizer", title="Use the optimizer's fused or multi-tensor step", effort=1,
          addresses=(bottlenecks.COMPUTE.id, bottlenecks.HOST_OVERHEAD.id), build=build,
          try_keys=("optimizer_foreach", "optimizer_fused"),
          keep=keep,
          # the fused step is a GPU kernel; foreach serves a CPU
          unadvised=lambda report: {"optimizer_fused" if on_gpu(report.get("model") or {}) else "optimizer_foreach": True})
