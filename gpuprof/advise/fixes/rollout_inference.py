"""rollout-inference: cheaper policy calls in a reinforcement-learning rollout.

At a rollout's batch (one observation per sub-environment) a policy forward is mostly fixed cost:
module calls, autograd's bookkeeping, drawing the action from a distribution that validates its
arguments. `torch.inference_mode()` drops more bookkeeping than `torch.no_grad()`, a distribution
built with `validate_args=False` skips its checks, and one forward for all sub-environments (no
Python loop over them) pays the fixed cost once. The saving is between LOW_SAVING and HIGH_SAVING of
the measured policy-inference share (the range of the estimate); results are the same numbers.

Not offered where Stable-Baselines3's own algorithm collects the rollout: its collect_rollouts
already calls the policy once per vector step on the batched observations under torch.no_grad(),
and the loop is SB3's, not the program's to edit."""

from gpuprof.advise.env_terms import leading_part, leading_part_words, sb3_collects
from gpuprof.advise.fix import Fix
from gpuprof.priors.rollout_fixes import POLICY_CALL_SAVING
from gpuprof.judge.verdict import bottlenecks
LOW_SAVING, HIGH_SAVING = POLICY_CALL_SAVING.ends()


def build(ev, s):
    if sb3_collects(ev.env):
        return None         # SB3's own collect_rollouts: see the module's note
    found = leading_part(ev, "inference", LOW_SAVING, HIGH_SAVING)
    if found is None:
        return None
    phases, first, share, (low, gain, high) = found
    per_call = phases.get("inference_per_call_s")
    calls = (f"{phases['inference_calls']} policy forwards of {per_call * 1e3:.2f} ms" if per_call else
             "the policy's forwards")
    return {
        "estimated_speedup": gain, "estimate_low": low, "estimate_high": high, "where": None, "first": first,
        "detail": ("run the rollout under torch.inference_mode(), build the action distribution with "
                   "validate_args=False, and call the policy once per vector step on the batched observations"),
        "snippet": ("with torch.inference_mode():          # the rollout: no autograd bookkeeping\n"
                    "    logits = agent.actor(next_obs)   # one forward for every sub-environment\n"
                    "    dist = Categorical(logits=logits, validate_args=False)\n"
                    "    action = dist.sample()"),
        "why": (f"policy inference is {share:.0%} of the training time ({calls}, and drawing actions): "
                + leading_part_words(LOW_SAVING, HIGH_SAVING, (low, gain, high))),
        "change": None,
    }


FIX = Fix(id="rollout-inference", title="Make the rollout's policy calls cheaper (inference_mode, one batched call)",
          effort=2, addresses=(bottlenecks.COMPUTE.id, bottlenecks.HOST_OVERHEAD.id),
          build=build, leads=True, yields_to_larger=True)
