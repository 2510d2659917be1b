"""more-envs-per-call: more sub-environments per vector env, fewer steps per rollout.

Every vector step costs a policy forward and a step call whatever the number of sub-envs: with n
sub-envs and the rollout's steps divided by the same factor, the samples per update stay the same
and the calls fall by that factor. The saving is the calls' fixed cost, which one run does not
measure apart from their work: not estimated. It changes what the model trains on (shorter
rollouts of more episodes at once; PPO's advantages see fewer steps ahead)."""

from gpuprof.advice.env_terms import env_finding, env_name
from gpuprof.advice.fix import Fix
from gpuprof.analysis import bottlenecks


def build(ev, s):
    env = ev.env or {}
    n = env.get("num_envs")
    if env_finding(s) is None or not n:
        return None
    more = n * 2
    return {
        "estimated_speedup": None, "where": env.get("where"),
        "detail": (f"{env_name(env)} -> {more} sub-environments and half the steps per rollout (the same samples "
                   "per update)"),
        "snippet": (f"envs = gymnasium.vector.SyncVectorEnv([make_env(...) for i in range({more})])\n"
                    "num_steps = num_steps // 2   # the rollout's steps per env: the same samples per update"),
        "why": (f"each of the {env.get('calls') or 'measured'} vector steps pays a policy forward and a step call for "
                f"{n} sub-environments; twice as many per call halves the calls. Not estimated (the calls' fixed cost "
                "is not measured apart from their work)"),
        "change": None,
    }


FIX = Fix(id="more-envs-per-call", title="Step more environments per policy call", effort=1,
          addresses=(bottlenecks.INPUT_ENV.id,), build=build, changes_training=True)
