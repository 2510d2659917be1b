"""compile: torch.compile of the trained model, which fuses its operators and cuts the Python
overhead of each step. It costs compile time at the start (and again for each new input shape);
`gpuprof try --fix compile` reports that time apart from the step time and after how many steps it
pays back. Not offered for a model already compiled. Where the host's launches pace a GPU job
(host.overhead), mode="reduce-overhead" records the step's kernels in CUDA graphs and replays them
with one launch: the step can shrink to the GPU's own busy time, 1 / utilisation at most."""

from gpuprof.advise.fix import Fix
from gpuprof.advise.flag_terms import COMPILATION, command_first
from gpuprof.advise.framework_terms import framework_first, setting
from gpuprof.advise.model_terms import (compute_model, launch_bound_model, launch_ceiling, not_estimated, on_gpu,
                                        where)
from gpuprof.priors.model_fixes import COMPILE_CPU_PRIOR, COMPILE_PRIOR
from gpuprof.judge.verdict import bottlenecks
PRIOR = COMPILE_PRIOR.value
#: On a CPU compiling measured from a quarter slower to a little faster: no gain to rank by.
PRIOR_CPU = COMPILE_CPU_PRIOR.value


def build(ev, s):
    launch_bound = launch_bound_model(ev, s)
    if launch_bound is not None and not launch_bound.get("compiled"):
        return _for_launches(ev, launch_bound)
    model = compute_model(ev, s)
    if model is None or model.get("compiled"):
        return None
    cpu = not on_gpu(model)
    return {"estimated_speedup": None, "prior": PRIOR_CPU if cpu else PRIOR, "where": where(model),
            "detail": f"compile the {model.get('class') or 'model'} once, before the training loop; the first steps "
                      "take longer while it compiles",
            "snippet": command_first(ev, COMPILATION, True, framework_first(
                ev, COMPILATION, "model = torch.compile(model)   # once, before the training loop")),
            "why": "the model's own operators are the step; " +
                   not_estimated("compile", "on a CPU like this one compiling measured 0.76-1.06x on two programs, "
                                            "a spread no figure of the run predicts" if cpu else
                                 "the gain depends on what torch.compile can fuse, and it costs compile time first"),
            "change": {"compile_model": True}}


def _for_launches(ev, model):
    ceiling = launch_ceiling(ev)
    bound = (f"a kernel ran only {ev.gpu_util:.0%} of the steps, so with launching free a step takes the GPU's "
             f"own time: at most {ceiling:.2f}x faster; ") if ceiling else ""
    return {"estimated_speedup": None, "prior": min(PRIOR, ceiling) if ceiling else PRIOR, "where": where(model),
            "detail": f"compile the {model.get('class') or 'model'} with mode='reduce-overhead': CUDA graphs replay the "
                      "step's kernels with one launch instead of one per op (static input shapes)",
            "snippet": command_first(ev, COMPILATION, True, framework_first(
                ev, COMPILATION, "model = torch.compile(model, mode='reduce-overhead')   # once, before the loop")),
            "why": "the host's launches set the pace of the steps; " + bound +
                   not_estimated("compile", "how many launches compiling removes depends on what it can fuse and "
                                            "capture, and it costs compile time first"),
            "change": {"compile_model": True}}


def keep(settings, loader, framework=None):
    own = setting(framework, COMPILATION)
    framework_words = f"{own}, or " if own and "torch.compile" not in own else ""
    return framework_words + "model = torch.compile(model) once, before the training loop"


FIX = Fix(id="compile", title="Compile the model (torch.compile)", effort=1,
          addresses=(bottlenecks.COMPUTE.id, bottlenecks.HOST_OVERHEAD.id),
          build=build, try_keys=("compile_model",), keep=keep, unadvised=lambda report: {"compile_model": True})
