"""channels-last: a convolutional model fed NCHW images runs its convolutions in the NHWC layout
the fast kernels want (tensor cores on a GPU, oneDNN on a CPU) once model and inputs are in
torch.channels_last. Offered when the model has 2-D/3-D convolutions and its image inputs are not
channels-last already; the gain depends on the layers, so it is measured, not estimated."""

from gpuprof.advise.fix import Fix
from gpuprof.advise.flag_terms import LAYOUT, command_first
from gpuprof.advise.model_terms import compute_model, not_estimated, on_gpu, where
from gpuprof.priors.model_fixes import CHANNELS_LAST_CPU_PRIOR, CHANNELS_LAST_GPU_PRIOR
from gpuprof.judge.verdict import bottlenecks
PRIOR_GPU = CHANNELS_LAST_GPU_PRIOR.value
PRIOR_CPU = CHANNELS_LAST_CPU_PRIOR.value


def build(ev, s):
    model = compute_model(ev, s)
    if model is None or not model.get("convs") or model.get("input_layout") != "nchw":
        return None
    return {"estimated_speedup": None, "prior": PRIOR_GPU if on_gpu(model) else PRIOR_CPU, "where": where(model),
            "detail": f"model and inputs in torch.channels_last ({model['convs']} convolution layers take NCHW "
                      "images today)",
            "snippet": command_first(ev, LAYOUT, True,
                                     "model = model.to(memory_format=torch.channels_last)   # once\n"
                                     "x = x.to(memory_format=torch.channels_last)           # each batch"),
            "why": f"{model['convs']} convolution layers get NCHW inputs; " +
                   not_estimated("channels-last", "NHWC kernels are faster for some layers and slower for others"
                                 + ("" if on_gpu(model) else "; on a CPU like this one it measured 1.06x on one CNN "
                                                             "and slower on another")),
            "change": {"channels_last": True}}


def keep(settings, loader, framework=None):
    return "model.to(memory_format=torch.channels_last) once and x.to(memory_format=torch.channels_last) each batch"


FIX = Fix(id="channels-last", title="Use the channels-last memory layout", effort=1,
          addresses=(bottlenecks.COMPUTE.id,),
          build=build, try_keys=("channels_last",), keep=keep, unadvised=lambda report: {"channels_last": True})
