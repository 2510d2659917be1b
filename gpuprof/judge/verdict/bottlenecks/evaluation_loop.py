"""evaluation.loop: validation or test passes between training steps take a notable share of the
training loop's time. Reported beside the step verdict, never as it: the step verdict is computed
on training steps only (analysis.loop leaves the passes out), and this finding says what the passes
cost and what holds them up (their own input verdict, analysis.evaluation)."""

from gpuprof.judge.verdict.bottleneck import BESIDE, Bottleneck
from gpuprof.judge.verdict.evidence import Evidence
from gpuprof.judge.verdict.rules import Finding, rounded, step_confidence

ID = "evaluation.loop"

NOTABLE = 0.10      # share of the training loop's time in evaluation passes worth a finding


def evaluate(ev: Evidence):
    evaluation = ev.evaluation or {}
    share = evaluation.get("share")
    if share is None or share < NOTABLE:
        return None
    own_input = evaluation.get("input") or {}
    loaders = evaluation.get("loaders") or []
    named = ", ".join(f"{e.get('role')} loader at {e.get('where') or '?'}" for e in loaders)
    wall = evaluation.get("wall_share")
    reason = (f"{evaluation.get('passes')} evaluation passes "
              + (f"over the {named}" if named else "with the model in eval mode")
              + (f", {wall:.0%} of the run" if wall is not None else "") + ", left out of the training verdict")
    if own_input.get("summary"):
        reason += f"; the evaluation itself: {own_input['summary']}"
    return Finding(ID, share, step_confidence(ev),
                   {"share_of": "the training loop's time", "passes": evaluation.get("passes"),
                    "seconds": evaluation.get("seconds"), "wall_share": wall,
                    "wait_share": rounded(own_input.get("wait_share")), "input": own_input.get("bottleneck"),
                    "loaders": [e.get("where") for e in loaders]},
                   reason)


BOTTLENECK = Bottleneck(id=ID, label="Evaluation", tier=BESIDE, rules=(evaluate,))
