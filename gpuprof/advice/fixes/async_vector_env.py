"""async-vector-env: step the sub-environments in parallel processes (gymnasium's AsyncVectorEnv).

A SyncVectorEnv (or a loop of the program's own over gymnasium envs) steps its n sub-environments
one after another in the training process; an AsyncVectorEnv runs one process per sub-environment
(gymnasium's API reference, "Vectorize"), so a vector step takes about the slowest sub-env's step
instead of the sum: on the c cores the job has (its cores less those other processes held) at most
min(n, c) at a time, and each vector step then sends actions and observations to and from every
process (MESSAGE_S per sub-env step, measured: bench/env_messages.py), so the env's share s becomes
s (1 / min(n, c) + n MESSAGE_S / t), t its vector step today (gpuprof.advice.env_terms). Not offered
where one sub-env step takes less than CHEAP_STEP_S, nor for Stable-Baselines3's vector envs (its
own SubprocVecEnv: subproc-vec-env). It leads where the env has no registered vectorised version:
the other env fix is then a rewrite whose figure is the env made free (env_terms.processes_lead)."""

import math

from gpuprof.advice.env_terms import (GYMNASIUM, env_finding, env_id, env_name, env_share, library,
                                      parallel_estimate, parallel_words, processes_lead)
from gpuprof.advice.fix import MIN_GAIN, Fix
from gpuprof.advice.flag_terms import PARALLEL_ENVS, command_first
from gpuprof.priors.rollout_fixes import ASYNC_MESSAGES, ASYNC_STEP_FLOOR
from gpuprof.analysis import bottlenecks

CHEAP_STEP_S = ASYNC_STEP_FLOOR.value
MESSAGE_S = ASYNC_MESSAGES.value


def build(ev, s):
    env = ev.env or {}
    n = env.get("num_envs") or 0
    if env_finding(s) is None or env.get("async") or library(env) != GYMNASIUM or n < 2 or ev.cpu_count < 2 \
            or not env.get("per_call_s") or env["per_call_s"] / n < CHEAP_STEP_S:
        return None
    estimate = parallel_estimate(ev, MESSAGE_S)
    if estimate is None or estimate[0] < MIN_GAIN:
        return None
    gain, parallel, after = estimate
    snippet = (f"envs = gymnasium.vector.AsyncVectorEnv([make_env(...) for i in range({n})])\n"
               f"# or: gymnasium.make_vec({env_id(env)}, num_envs={n}, vectorization_mode=\"async\")")
    return {
        "estimated_speedup": gain, "where": env.get("where"),
        "detail": f"{env_name(env)} -> AsyncVectorEnv: each sub-environment steps in its own process",
        "snippet": command_first(ev, PARALLEL_ENVS, True, snippet),
        "why": (f"env steps take {env_share(ev):.0%} of the training time, {env['per_call_s'] * 1e3:.2f} ms a vector "
                f"step for {n} sub-environments in turn; {parallel_words(ev, parallel)}, with "
                f"{MESSAGE_S * 1e6:.0f} µs of messages per sub-env step, cut that share to {after:.0%}: about "
                f"{math.floor(gain * 100) / 100:.2f}x at these figures"),
        "change": None, "first": processes_lead(env),
    }


FIX = Fix(id="async-vector-env", title="Step the environments in parallel processes (AsyncVectorEnv)", effort=1,
          addresses=(bottlenecks.INPUT_ENV.id,), build=build, leads=True)
