"""Wording about a report's advice that every renderer shows the same way: the heading of the fix
list, and what a compute-bound run with nothing to fix in its input does next."""

from gpuprof.analysis import bottlenecks


def _pct(x) -> str:
    return "n/a" if x is None else f"{x * 100:.0f}%"


def advice_heading(report: dict) -> str:
    """How the fix list is ranked, as gpuprof.advice.rank orders it (each fix that moved says why)."""
    if (report.get("verdict") or {}).get("bottleneck") == bottlenecks.MEMORY_OOM.id:
        return "Fixes, ranked by the memory each frees"
    return ("Fixes, in the order to try them: for the bottleneck first, settings gpuprof can measure ahead of "
            "code changes, then by estimated speed-up (each an upper bound)")


def next_steps_for_compute(report: dict) -> str:
    """A compute-bound run with nothing to fix in its input: say so, and where to look next."""
    wait = (report.get("steps") or {}).get("data_wait_share")
    waited = f" (steps wait for data {_pct(wait)} of the time)" if wait is not None else ""
    gpus = ((report.get("system") or {}).get("gpus")) or []
    device = ("mixed precision (torch.autocast with bfloat16), a larger batch while GPU memory allows, torch.compile"
              if gpus else "torch.compile, a larger batch (fewer Python steps per sample), and torch.set_num_threads "
              "matched to the physical cores when other processes share them")
    return (f"Fixes: none needed in the input pipeline, which keeps up{waited}. Speed now depends on the model "
            f"itself: profile its slowest operators (torch.profiler), then try {device}.")
