"""Evaluation apart from training: each DataLoader's role (train, validation, test, evaluation), and
the evaluation passes' own figures: their share of the run, and their own input verdict.

The training loop (analysis.loop) already leaves the passes of other loaders out of the step time
and the data wait, so the training verdict rests on training steps alone. This module says what
those passes cost and what holds them up, from the same input rules the step verdict uses, read
over the evaluation's time instead of the training steps'."""

import re

from gpuprof.judge.verdict import bottlenecks
from gpuprof.stats.digits import REPORT_DIGITS
from gpuprof.judge.verdict.evidence import INPUT_BOUND, gather
from gpuprof.judge.sections.loaders import entry_key

TRAIN, VALIDATION, TEST, EVALUATION = "train", "validation", "test", "evaluation"

#: Words of a dataset's class name that say what it holds out.
_NAMED = {"val": VALIDATION, "valid": VALIDATION, "validation": VALIDATION, "dev": VALIDATION,
          "eval": EVALUATION, "evaluation": EVALUATION, "test": TEST, "testing": TEST, "holdout": TEST}


def with_evaluation(steps: dict, dataloaders: list, duration_s=None) -> tuple:
    """(steps, dataloaders) with the evaluation described: each loader's `role`, and the steps'
    `evaluation` entry given its share of the run, its loaders and its own input verdict. Unchanged
    when the run has a single loader line and no evaluation pass."""
    evaluation = steps.get("evaluation")
    if not evaluation and len(dataloaders) < 2:
        return steps, dataloaders
    training = (evaluation or {}).get("training_loader")
    if training is None and dataloaders:
        training = entry_key(dataloaders[0])
    interleaved = set((evaluation or {}).get("loaders") or ())
    loaders = [dict(entry, role=role_of(entry, training, interleaved)) for entry in dataloaders]
    if not evaluation:
        return steps, loaders
    held_out = [entry for entry in loaders if entry_key(entry) in interleaved]
    described = dict(evaluation,
                     wall_share=_share(evaluation.get("seconds"), duration_s),
                     loaders=[{"role": e["role"], "where": e.get("where"), "batches": e.get("batches"),
                               "wait_s": round(e.get("wait_s") or 0.0, REPORT_DIGITS)} for e in held_out],
                     input=evaluation_input(evaluation, held_out))
    return dict(steps, evaluation=described), loaders


def role_of(entry: dict, training, interleaved) -> str:
    """The role the method that built it declared (a Trainer's get_eval_dataloader, a DataModule's
    val_dataloader); else TRAIN for the training loop's loader line; else what its dataset's name
    says; else VALIDATION for a loader whose passes fall between training steps, EVALUATION for
    any other."""
    if entry.get("declared_role"):
        return entry["declared_role"]
    if entry_key(entry) == training:
        return TRAIN
    for word in _words(entry.get("dataset") or ""):
        if word in _NAMED:
            return _NAMED[word]
    return VALIDATION if entry_key(entry) in interleaved else EVALUATION


def evaluation_input(evaluation: dict, held_out: list) -> dict:
    """The evaluation's own input verdict: the share of its time spent waiting for its batches and,
    where that makes it input-bound, which kind (the producers' CPU, the disk, something slow),
    judged by the same rules as the training input over the evaluation's time."""
    seconds = evaluation.get("seconds") or 0.0
    wait_share = min((evaluation.get("wait_s") or 0.0) / seconds, 1.0) if seconds > 0 else None
    out = {"wait_share": round(wait_share, REPORT_DIGITS) if wait_share is not None else None, "bottleneck": None,
           "summary": "no evaluation time measured"}
    if wait_share is None:
        return out
    if not held_out:
        out["summary"] = ("no DataLoader of its own (the model in eval mode between training steps): its time is "
                          "the model's evaluation work")
        return out
    loader = max(held_out, key=lambda e: e.get("wait_s") or 0.0)
    ev = gather({"steps": {"count": loader.get("batches") or 0, "measured": loader.get("batches") or 0,
                           "data_wait_share": wait_share, "data_wait_source": "dataloader",
                           "window_s": seconds},
                 "dataloaders": [loader]})
    found = [f for f in (rule(ev) for b in bottlenecks.INPUT for rule in b.rules) if f is not None]
    bound = max((f for f in found if f.share >= INPUT_BOUND), key=lambda f: f.share, default=None)
    if bound is None:
        out["summary"] = (f"keeps up: it waits {wait_share:.0%} of its time for batches, the rest is "
                          "the model's evaluation work")
        return out
    label = bottlenecks.get(bound.bottleneck).label
    out.update(bottleneck=bound.bottleneck, where=loader.get("where"), num_workers=loader.get("num_workers"),
               summary=f"{label}: {wait_share:.0%} of its time waits on {bound.reason}")
    return out


def _share(part, whole):
    return round(min(part / whole, 1.0), REPORT_DIGITS) if part is not None and whole else None


def _words(name: str) -> list:
    """'ValDataset' -> ['val', 'dataset']; 'test_set' -> ['test', 'set']."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name.rsplit(".", 1)[-1])
    return [w.lower() for w in re.split(r"[\s_\-]+", spaced) if w]
