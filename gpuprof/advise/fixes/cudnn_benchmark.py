"""cudnn-benchmark: cuDNN times its convolution algorithms for each input shape once and keeps the
fastest. Offered for convolutional models on a GPU when torch.backends.cudnn.benchmark is off; it
pays when input shapes repeat (a fixed image size). A prior, measured by `try --fix cudnn-benchmark`."""

from gpuprof.advise.fix import Fix
from gpuprof.advise.model_terms import compute_model, not_estimated, on_gpu
from gpuprof.priors.model_fixes import CUDNN_BENCHMARK_PRIOR
from gpuprof.judge.verdict import bottlenecks
PRIOR = CUDNN_BENCHMARK_PRIOR.value


def build(ev, s):
    model = compute_model(ev, s)
    if model is None or not on_gpu(model) or not model.get("convs"):
        return None
    if (model.get("flags") or {}).get("cudnn_benchmark"):
        return None
    return {"estimated_speedup": None, "prior": PRIOR, "where": None,
            "detail": "torch.backends.cudnn.benchmark = True (inputs of a fixed shape)",
            "snippet": "torch.backends.cudnn.benchmark = True   # once, at start-up",
            "why": f"{model['convs']} convolution layers run cuDNN's default algorithm; " +
                   not_estimated("cudnn-benchmark", "the fastest algorithm depends on the shapes and the GPU"),
            "change": {"cudnn_benchmark": True}}


def keep(settings, loader, framework=None):
    return "torch.backends.cudnn.benchmark = True at start-up"


FIX = Fix(id="cudnn-benchmark", title="Let cuDNN pick the fastest convolution algorithms", effort=1,
          addresses=(bottlenecks.COMPUTE.id,), build=build, needs_gpu=True, try_keys=("cudnn_benchmark",), keep=keep,
          unadvised=lambda report: {"cudnn_benchmark": True})
