"""vectorised-env: make the environment's step itself faster, or vectorised over the sub-envs.

Where the env's registration has a vectorised version (CartPole-v1's CartPoleVectorEnv), gymnasium
builds it with `vectorization_mode="vector_entry_point"`: one numpy step for every sub-env instead
of a Python step each. Otherwise the env's own step is the code to profile and speed up, in its
library's terms: a gymnasium.vector.VectorEnv computing every sub-env at once, or for Stable-
Baselines3's vector envs a VecEnv of its own (step_async / step_wait over the batch), the sub-env's
wrappers (rendering, resizing) then done on the batch. Either way
the central estimate is env stepping made free, 1 / (1 - share); its high end allows for the
garbage a step leaves, whose collections fall on the other code: GARBAGE_SHARE of that code's time
(replaying CartPole's recorded results measured 1.24x where the env's own 13% gives 1.15x, the rest's
time 7% shorter: docs/benchmarks.md)."""

import math

from gpuprof.advise.env_terms import SB3, env_finding, env_id, env_name, env_share, library
from gpuprof.advise.fix import MIN_GAIN, Fix
from gpuprof.advise.model import TINY, cheaper_share
from gpuprof.priors.rollout_fixes import ENV_GARBAGE
from gpuprof.judge.verdict import bottlenecks
#: The share of the other code's time that collections of the env's garbage may take.
GARBAGE_SHARE = ENV_GARBAGE.value


def build(ev, s):
    env = ev.env or {}
    if env_finding(s) is None:
        return None
    share = env_share(ev)
    gain = cheaper_share(share, 1.0)
    if gain < MIN_GAIN:
        return None
    n = env.get("num_envs") or 1
    if library(env) == SB3:
        snippet, detail = _in_sb3_terms(env, n)
    elif env.get("vector_entry_point") and env.get("spec"):
        snippet = f"envs = gymnasium.make_vec({env_id(env)}, num_envs={n}, vectorization_mode=\"vector_entry_point\")"
        detail = (f"{env_name(env)} -> the registered vectorised env (one numpy step for all {n}); wrappers of "
                  "your own that slow each step must then work on the batch")
    else:
        snippet = ("# profile the env's step (gpuprof's sampled stacks, or py-spy), then vectorise it over the "
                   "sub-envs\n# with numpy as a gymnasium.vector.VectorEnv, or move its physics to compiled code")
        detail = f"{env_name(env)}: a faster step, or one step computed for every sub-env at once"
    return {
        "estimated_speedup": gain, "estimate_high": 1.0 / max((1.0 - share) * (1.0 - GARBAGE_SHARE), TINY),
        "where": (env.get("make_where") if library(env) == SB3 else None) or env.get("where"),
        "detail": detail, "snippet": snippet,
        "why": (f"env steps take {share:.0%} of the training time: made free, about "
                f"{math.floor(gain * 100) / 100:.2f}x by their own time, more with the garbage they leave"),
        "change": None,
    }


def _in_sb3_terms(env: dict, n: int) -> tuple:
    """(snippet, detail) for an SB3 vector env: its sub-env's step and wrappers made cheaper, or one
    VecEnv of the program's own stepping every sub-env with numpy."""
    sub = env.get("sub_env") or env.get("maker") or env.get("spec") or "the env"
    wrappers = [w for w in env.get("sub_wrappers") or () if w != "Monitor"]
    through = f" through {', '.join(wrappers)}" if wrappers else ""
    snippet = (f"# profile {sub}'s step{through} (gpuprof's sampled stacks, or py-spy):\n"
               "# render at the size the policy sees, resize cheaper, or write a\n"
               f"# stable_baselines3.common.vec_env.VecEnv whose step_async/step_wait computes all {n} sub-envs "
               "at once")
    detail = (f"{env_name(env)}: a cheaper step for each sub-env (its wrappers and rendering included), or one "
              "VecEnv step computed for every sub-env at once")
    return snippet, detail


FIX = Fix(id="vectorised-env", title="Make the environment step faster or vectorised", effort=2,
          addresses=(bottlenecks.INPUT_ENV.id,), build=build)
