"""Wording about a report's advice that every renderer shows the same way: an estimate's range, the
heading of the fix list, what the measurements say when no fix helped, and what a compute-bound run
with nothing to fix in its input does next."""

from typing import Mapping

from gpuprof.judge.verdict import bottlenecks
def _pct(x) -> str:
    return "n/a" if x is None else f"{x * 100:.0f}%"


def range_words(item: Mapping) -> str:
    """`1.20–1.60x`: an item's estimate as the range every output prints (the midpoint alone for an
    item saved before estimates had ranges)."""
    estimate = item.get("estimate") or {}
    if estimate.get("low") is None or estimate.get("high") is None:
        return f"{item['estimated_speedup']:.2f}x"
    return f"{estimate['low']:.2f}–{estimate['high']:.2f}x"


def advice_heading(report: Mapping) -> str:
    """How the fix list is ranked, as gpuprof.advise.rank orders it (each fix that moved says why)."""
    if (report.get("verdict") or {}).get("bottleneck") == bottlenecks.MEMORY_OOM.id:
        return "Fixes, ranked by the memory each frees"
    return ("Fixes, in the order to try them: for the bottleneck first, settings gpuprof can measure ahead of "
            "code changes, then by estimated speed-up (a measured speed-up ranks in its place)")


def no_fix_helped_line(report: Mapping):
    """The line every output puts above the fixes when `gpuprof try` measured each of them and none
    was faster than the program as it is (None otherwise)."""
    from gpuprof.advise.measured import no_fix_helped
    if not no_fix_helped(report.get("advice") or []):
        return None
    return ("No fix helped: gpuprof try measured every fix below and none made the program faster; "
            "they are listed for what was measured, not as advice")


def next_steps_for_compute(report: Mapping) -> str:
    """A compute-bound run with no fix to offer: what its input costs (nothing, where its workers
    take no notable share of the cores), and where to look next."""
    wait = (report.get("steps") or {}).get("data_wait_share")
    waited = f" (steps wait for data {_pct(wait)} of the time)" if wait is not None else ""
    gpus = ((report.get("system") or {}).get("gpus")) or []
    device = ("mixed precision (torch.autocast with bfloat16), a larger batch while GPU memory allows, torch.compile"
              if gpus else "torch.compile, a larger batch (fewer Python steps per sample), and torch.set_num_threads "
              "matched to the physical cores when other processes share them")
    evidence = (report.get("verdict") or {}).get("evidence") or {}
    if evidence.get("input_cpu_share") is None:
        input_line = f"Fixes: none needed in the input pipeline, which keeps up{waited}. Speed now depends"
    else:
        input_line = (f"Fixes: the input pipeline keeps up{waited}, but its workers use "
                      f"{_pct(evidence['input_cpu_share'])} of the job's CPU (the input made free: an estimated "
                      f"{evidence['input_free_low']:.2f}–{evidence['input_free_high']:.2f}x); cheaper batches "
                      "(decode at reduced size, cache the deterministic part) or fewer workers give the training "
                      "those cores back. Speed also depends")
    return (f"{input_line} on the model itself: profile its slowest operators (torch.profiler), then try {device}.")
