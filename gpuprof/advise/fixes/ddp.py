"""ddp: DistributedDataParallel, one process per GPU, instead of nn.DataParallel.

nn.DataParallel drives every GPU from one process: one Python thread per GPU under one GIL,
inputs scattered from and outputs gathered on GPU 0 each step, the model copied to every GPU each
step. DDP runs a process per GPU with its own loader and overlaps the gradient all-reduce with the
backward pass. Where DataParallel is used it leads the fixes (its build says why): the others are
measured through it. A compute-bound single process that left some of the machine's GPUs idle gets it
too; a job that already runs a process on each GPU it uses (each rank read on its own) does not."""

from gpuprof.advise.fix import Fix
from gpuprof.advise.framework_terms import SCALE_OUT, framework_first
from gpuprof.priors.model_fixes import DDP_OVER_DATA_PARALLEL, DDP_PER_GPU
from gpuprof.judge.verdict import bottlenecks
LAUNCH = "torchrun --nproc-per-node=NGPU train.py"
SNIPPET = ("torch.distributed.init_process_group('nccl'); local_rank = int(os.environ['LOCAL_RANK'])\n"
           "torch.cuda.set_device(local_rank)\n"
           "model = torch.nn.parallel.DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])\n"
           "loader = DataLoader(dataset, sampler=DistributedSampler(dataset), ...)   # each rank its shard\n"
           f"# launch: {LAUNCH}")

#: The figures read per GPU: index, utilisation, peak memory, SM activity.
GPU_FIGURES = 4


def gpu0_load(figures) -> str:
    """GPU 0 against the others (DataParallel gathers there): the time a kernel ran (NVML utilisation),
    SM activity where GPM gives it, and memory, when measured. `figures`: (index, utilisation, peak
    memory[, SM activity]) per GPU."""
    figures = [tuple(f) + (None,) * (GPU_FIGURES - len(f)) for f in figures]
    first = [f for f in figures if f[0] == 0]
    rest = [f for f in figures if f[0] != 0]
    if not first or not rest:
        return ""
    _, util0, mem0, sm0 = first[0]
    utils = [f[1] for f in rest if f[1] is not None]
    mems = [f[2] for f in rest if f[2]]
    sms = [f[3] for f in rest if f[3] is not None]
    parts = []
    if util0 is not None and utils:
        parts.append(f"a kernel was running on GPU 0 {util0:.0%} of the time against {mean(utils):.0%} on the others"
                     + (f", its SMs {sm0:.0%} active against {mean(sms):.0%} (GPM)" if sm0 is not None and sms else ""))
    if mem0 and mems:
        parts.append(f"GPU 0 holds {mem0 / 1e9:.1f} GB against {mean(mems) / 1e9:.1f} GB")
    return " (" + "; ".join(parts) + ")" if parts else ""


def mean(values) -> float:
    return sum(values) / len(values)


def build(ev, s):
    if ev.data_parallel:
        if ev.gpu_count > 1:
            gain = DDP_OVER_DATA_PARALLEL.value
            why = (f"nn.DataParallel drives the {ev.gpu_count} GPUs from one process: one thread per GPU under one "
                   "GIL, scatter and gather on GPU 0 every step" + gpu0_load(ev.gpu_figures or [])
                   + "; DDP commonly runs such jobs 1.3x faster or more")
        else:
            gain = None
            why = ("nn.DataParallel is in use; " + ("with one GPU it only adds a model copy per step" if ev.gpu else
                   "without a GPU here it runs the module as is, so its cost cannot be measured on this machine")
                   + "; on several GPUs DDP avoids the single process's GIL and the gather on GPU 0")
        return {"estimated_speedup": gain, "where": ev.data_parallel_where,
                "detail": f"replace nn.DataParallel with DistributedDataParallel and launch one process per GPU: {LAUNCH}",
                "snippet": framework_first(ev, SCALE_OUT, SNIPPET, gpus=ev.gpu_count or "NGPU"), "why": why,
                "first": "first: nn.DataParallel is in use, and the other estimates are measured through it"}
    used = ev.job_gpu_count or 1
    if not ev.gpu or s.bottleneck != bottlenecks.COMPUTE.id or ev.gpu_count <= used or ev.one_rank_of_many:
        return None      # every GPU already has its process (or this rank is one of several): nothing idle to add
    return {"estimated_speedup": DDP_PER_GPU.value * ev.gpu_count / used, "where": None,
            "detail": f"{LAUNCH} with model = DDP(model, device_ids=[local_rank])",
            "snippet": framework_first(ev, SCALE_OUT, SNIPPET, gpus=ev.gpu_count or "NGPU"),
            "why": f"{ev.gpu_count} GPUs are present and the job used {'one' if used == 1 else used}; "
                   f"the other {ev.gpu_count - used} stayed idle"}


FIX = Fix(id="ddp", title="Use DistributedDataParallel: one process per GPU",
          effort=3, addresses=(bottlenecks.COMPUTE.id, *bottlenecks.INPUT_IDS, bottlenecks.TRANSFER_H2D.id,
                                bottlenecks.HOST_OVERHEAD.id),
          build=build, leads=True)
