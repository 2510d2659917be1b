"""async-vector-env: step the sub-environments in parallel processes (gymnasium's AsyncVectorEnv).

A SyncVectorEnv steps its n sub-environments one after another in the training process; an
AsyncVectorEnv runs one process per sub-environment (gymnasium's API reference, "Vectorize"), so a
vector step takes about the slowest sub-env's step instead of the sum: on c cores at most min(n, c)
at a time, so env stepping of share s falls to s / min(n, c) and the speed-up is at most
1 / (1 - s (1 - 1 / min(n, c))). Each step then sends actions and observations to and from every
process (tens of microseconds), so it is not offered where one sub-env step takes less than
CHEAP_STEP_S."""

import math

from gpuprof.advice.env_terms import env_finding, env_id, env_name
from gpuprof.advice.fix import MIN_GAIN, Fix
from gpuprof.advice.model import cheaper_share
from gpuprof.priors.rollout_fixes import ASYNC_STEP_FLOOR
from gpuprof.analysis import bottlenecks

CHEAP_STEP_S = ASYNC_STEP_FLOOR.value


def build(ev, s):
    env = ev.env or {}
    finding = env_finding(s)
    n = env.get("num_envs") or 0
    if finding is None or env.get("async") or n < 2 or ev.cpu_count < 2 or not env.get("per_call_s"):
        return None
    if env["per_call_s"] / n < CHEAP_STEP_S:
        return None
    parallel = min(n, ev.cpu_count)
    share = ev.env_share or 0.0
    gain = cheaper_share(share, 1.0 - 1.0 / parallel)
    if gain < MIN_GAIN:
        return None
    return {
        "estimated_speedup": gain, "where": env.get("where"),
        "detail": f"{env_name(env)} -> AsyncVectorEnv: each sub-environment steps in its own process",
        "snippet": (f"envs = gymnasium.vector.AsyncVectorEnv([make_env(...) for i in range({n})])\n"
                    f"# or: gymnasium.make_vec({env_id(env)}, num_envs={n}, vectorization_mode=\"async\")"),
        "why": (f"env steps take {share:.0%} of the training time, {env['per_call_s'] * 1e3:.2f} ms a vector step "
                f"for {n} sub-environments in turn; {parallel} at a time on {ev.cpu_count} cores cut that share to "
                f"{share / parallel:.0%}: about {math.floor(gain * 100) / 100:.2f}x at these figures"),
        "change": None,
    }


FIX = Fix(id="async-vector-env", title="Step the environments in parallel processes (AsyncVectorEnv)", effort=1,
          addresses=(bottlenecks.INPUT_ENV.id,), build=build)
