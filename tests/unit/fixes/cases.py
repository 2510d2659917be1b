"""Evidence and situations for the per-fix tests: a fix's build is called directly with the numbers
that decide it, so each test shows the edge it checks."""

from gpuprof.advise.situation import Situation
from gpuprof.judge.verdict.evidence import Evidence

LOADER = {"where": "train.py:42", "batch_size": 32, "num_workers": 0, "sampler": "RandomSampler", "epochs": 1}


def evidence(**fields) -> Evidence:
    """A run of 50 measured steps on 4 idle cores, its DataLoader at train.py:42 waiting 60% of each
    step on one CPU-bound process; `fields` override any of it."""
    base = dict(steps=51, measured_steps=50, wait_share=0.6, wait_source="dataloader", window_s=10.0,
                loader=dict(LOADER), producer_cpu_ratio=0.95, producer_user_ratio=0.95, producer_cores=0.6,
                cpu_count=4, cores_busy=1.0, cores_free=3.0, machine_idle=0.7)
    base.update(fields)
    return Evidence(**base)


def situation(bottleneck="input.cpu", share=0.6, findings=(), **verdict) -> Situation:
    return Situation(verdict=dict(verdict, bottleneck=bottleneck, share=share), findings=tuple(findings))


def gpu(**fields) -> dict:
    """Evidence fields of a run on one GPU with memory to spare."""
    base = dict(gpu=True, gpu_count=1, gpu_util=0.3, gpu_mem_free_share=0.8, gpu_figures=[(0, 0.3, 16e9)])
    base.update(fields)
    return base


def up_to(built: dict) -> str:
    """The estimate as the reason states it."""
    import math
    return f"{math.floor(built['estimated_speedup'] * 100) / 100:.2f}x"


def model(**fields) -> dict:
    """The probes' facts about a float32 MLP trained by Adam on the CPU, called at train.py:30."""
    base = {"class": "MLP", "params": 1_000_000, "dtypes": {"float32": 1_000_000}, "device": "cpu",
            "compiled": False, "convs": 0, "where": "train.py:30", "autocast": None, "input_layout": None,
            "optimizer": {"class": "Adam", "foreach": None, "fused": None, "takes": ["foreach", "fused"]},
            "flags": {"matmul_precision": "highest", "allow_tf32": False, "cudnn_benchmark": False},
            "capability": None}
    base.update(fields)
    return base


def on_cuda(capability=(8, 0), **fields) -> dict:
    """The same model on a GPU of this compute capability (the CUDA seam: facts a GPU run records)."""
    return model(device="cuda:0", capability=list(capability), **fields)
