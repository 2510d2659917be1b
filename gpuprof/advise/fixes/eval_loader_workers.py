"""eval-loader-workers: give the evaluation's DataLoader worker processes when its passes wait on
batches made in the training process.

Estimated from the evaluation's own wait inside the training loop's time: n workers on c cores make
a CPU-bound producer at most min(n, c) times faster, so at most (1 - 1/min(n, c)) of that wait goes;
the training steps are not touched."""

from gpuprof.advise.fix import MIN_GAIN, Fix
from gpuprof.advise.framework_terms import framework_of
from gpuprof.advise.model import TINY
from gpuprof.judge.verdict import bottlenecks
MAX_WORKERS = 4     # the most workers proposed for the evaluation's loader


def build(ev, s):
    evaluation = ev.evaluation or {}
    own_input = evaluation.get("input") or {}
    if own_input.get("bottleneck") != bottlenecks.INPUT_CPU.id or own_input.get("num_workers"):
        return None
    if not any(f.get("bottleneck") == bottlenecks.EVALUATION.id for f in s.findings):
        return None          # the evaluation is no notable share of the loop's time
    if not ev.window_s or not evaluation.get("wait_s"):
        return None
    workers = min(MAX_WORKERS, ev.cpu_count or 1)
    if workers < 2:
        return None
    saved = evaluation["wait_s"] * (1.0 - 1.0 / workers)
    gain = ev.window_s / max(ev.window_s - saved, TINY)
    if gain < MIN_GAIN:
        return None
    where = own_input.get("where")
    wait_share = evaluation["wait_s"] / ev.window_s
    detail, snippet = _in_terms(framework_of(ev), workers)
    return {
        "estimated_speedup": gain, "where": where, "detail": detail, "snippet": snippet,
        "why": (f"evaluation passes wait {wait_share:.0%} of the training loop's time for batches made in the "
                f"training process; {workers} workers on {ev.cpu_count} cores make them at most {workers}x faster "
                "(persistent_workers keeps them between passes)"),
    }


def _in_terms(framework, workers: int) -> tuple:
    """(detail, snippet) in the words of the framework that builds the evaluation's loader."""
    if framework == "transformers":
        return (f"the evaluation DataLoader: num_workers 0 -> {workers} through TrainingArguments (one setting for "
                "the Trainer's training and evaluation loaders)",
                f"TrainingArguments(..., dataloader_num_workers={workers}, dataloader_persistent_workers=True)")
    if framework == "lightning":
        return (f"the validation DataLoader: num_workers 0 -> {workers} in your val_dataloader",
                f"DataLoader(val_dataset, ..., num_workers={workers}, persistent_workers=True)   # in your "
                "LightningDataModule's val_dataloader")
    return (f"the evaluation DataLoader: num_workers 0 -> {workers}",
            f"DataLoader(eval_dataset, ..., num_workers={workers}, persistent_workers=True)")


FIX = Fix(id="eval-loader-workers", title="Give the evaluation DataLoader its own workers", effort=1,
          addresses=(bottlenecks.EVALUATION.id,), build=build)
