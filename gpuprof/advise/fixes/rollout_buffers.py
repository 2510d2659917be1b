"""rollout-buffers: fewer conversions between numpy and tensors in a reinforcement-learning rollout.

Each vector step of a typical rollout converts the observations, rewards and done flags from numpy
into new tensors (`torch.Tensor(x)`, `torch.tensor(x)` copy) and the actions back (`.cpu().numpy()`),
and logging calls `.item()`. Writing them into tensors allocated once (`buffer[step].copy_(
torch.from_numpy(x))`, which shares the numpy memory instead of copying it twice) and reading
scalars once per rollout saves between LOW_SAVING and HIGH_SAVING of the sampled conversions'
share (the range of the estimate). Not offered where Stable-Baselines3's own algorithm collects the
rollout: its RolloutBuffer is SB3's, not the program's to edit."""

from gpuprof.advise.env_terms import leading_part, leading_part_words, sb3_collects
from gpuprof.advise.fix import Fix
from gpuprof.priors.rollout_fixes import CONVERSION_SAVING
from gpuprof.judge.verdict import bottlenecks
LOW_SAVING, HIGH_SAVING = CONVERSION_SAVING.ends()


def build(ev, s):
    if sb3_collects(ev.env):
        return None         # SB3's own collect_rollouts: see the module's note
    found = leading_part(ev, "conversions", LOW_SAVING, HIGH_SAVING)
    if found is None:
        return None
    _, first, share, (low, gain, high) = found
    return {
        "estimated_speedup": gain, "estimate_low": low, "estimate_high": high, "where": None, "first": first,
        "detail": ("keep observations, rewards and dones in tensors allocated once and fill them from numpy "
                   "without a copy (torch.from_numpy); read .item() once per rollout, not per step"),
        "snippet": ("obs_buf = torch.zeros((num_steps, num_envs) + obs_shape)   # once\n"
                    "obs_buf[step].copy_(torch.from_numpy(next_obs))          # no new tensor per step\n"
                    "rewards[step].copy_(torch.from_numpy(reward))"),
        "why": (f"converting between numpy and tensors is {share:.0%} of the training time (sampled): "
                + leading_part_words(LOW_SAVING, HIGH_SAVING, (low, gain, high))),
        "change": None,
    }


FIX = Fix(id="rollout-buffers", title="Keep the rollout's data in preallocated tensors", effort=2,
          addresses=(bottlenecks.COMPUTE.id, bottlenecks.HOST_OVERHEAD.id),
          build=build, leads=True, yields_to_larger=True)
