"""What the environment fixes share: whether the run's env stepping is a bottleneck worth fixing
(the verdict, or a finding beside it), the env in gymnasium's words, and the rollout's measured
parts that the reinforcement-learning fixes estimate from."""

import math

from gpuprof.advice.model import cheaper_share
from gpuprof.analysis import bottlenecks


def env_finding(s):
    """The environment bottleneck's verdict or finding in this run, else None."""
    for finding in (s.verdict,) + tuple(s.findings):
        if finding.get("bottleneck") == bottlenecks.INPUT_ENV.id:
            return finding
    return None


def env_name(env: dict) -> str:
    """'SyncVectorEnv of 4 CartPole-v1', 'CartPole-v1', or the env's class."""
    name = env.get("vector_cls") or env.get("cls") or "the environment"
    if env.get("num_envs"):
        return f"{name} of {env['num_envs']} {env.get('spec') or 'environments'}"
    return env.get("spec") or name


def env_id(env: dict) -> str:
    return repr(env.get("spec") or "YourEnv-v0")


def rollout_phases(ev):
    """The environment's measured collection and learning phases (with the rollout's parts), or None."""
    phases = (ev.env or {}).get("phases") or {}
    return phases if phases.get("parts") else None


def rollout_leads(phases: dict, part: str):
    """The reason a fix for the rollout's `part` goes first (before operator-level fixes of the model),
    or None: the rollout is most of the time and `part` its largest part."""
    if phases is None or phases.get("largest") != part:
        return None
    collection, learning = phases["collection"]["share"], phases["learning"]["share"]
    if collection <= learning:
        return None
    return (f"first: the rollout is {collection:.0%} of the training time and the update {learning:.0%}, so a "
            "faster model operator (mixed precision, compile, a fused optimizer) speeds up the minority")


def part_range(share: float, low_saving: float, high_saving: float) -> tuple:
    """(low, figure, high) speed-ups from saving between `low_saving` and `high_saving` of a part
    taking `share` of the time; the figure at their midpoint."""
    mid = (low_saving + high_saving) / 2
    return cheaper_share(share, low_saving), cheaper_share(share, mid), cheaper_share(share, high_saving)


def leading_part(ev, part: str, low_saving: float, high_saving: float):
    """(phases, why it goes first, the part's share, (low, figure, high)) for a fix of the rollout's
    `part` that leads and is worth showing, else None."""
    from gpuprof.advice.fix import MIN_GAIN
    phases = rollout_phases(ev)
    first = rollout_leads(phases, part)
    if first is None:
        return None
    share = phases["parts"][part]
    estimate = part_range(share, low_saving, high_saving)
    return None if estimate[2] < MIN_GAIN else (phases, first, share, estimate)


def leading_part_words(low_saving: float, high_saving: float, estimate) -> str:
    """The end of a leading rollout fix's why: the largest part, and what saving it gives."""
    low, _, high = estimate
    return (f"the largest part of the rollout; saving {low_saving:.0%} to {high_saving:.0%} of it gives "
            f"{math.floor(low * 100) / 100:.2f}x to {math.ceil(high * 100) / 100:.2f}x")
