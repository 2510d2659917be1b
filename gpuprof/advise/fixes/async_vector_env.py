"""async-vector-env: step the sub-environments in parallel processes (gymnasium's AsyncVectorEnv).

A SyncVectorEnv (or a loop of the program's own over gymnasium envs) steps its n sub-environments
one after another in the training process; an AsyncVectorEnv runs one process per sub-environment
(gymnasium's API reference, "Vectorize"), so a vector step takes about the slowest sub-env's step
instead of the sum: on the c cores the job has (its cores less those other processes held) at most
min(n, c) at a time, and each vector step then sends actions and observations to and from every
process (MESSAGE_S per sub-env step, measured: bench/env_messages.py), so the env's share s becomes
s (1 / min(n, c) + n MESSAGE_S / t), t its vector step today (gpuprof.advise.env_terms). Not offered
where one sub-env step takes less than CHEAP_STEP_S, nor for Stable-Baselines3's vector envs (its
own SubprocVecEnv: subproc-vec-env). It leads where the env has no registered vectorised version:
the other env fix is then a rewrite whose figure is the env made free (env_terms.processes_lead)."""

from gpuprof.advise.env_terms import GYMNASIUM, env_id, env_name, in_processes, processes_lead
from gpuprof.advise.fix import Fix
from gpuprof.advise.flag_terms import PARALLEL_ENVS, command_first
from gpuprof.priors.rollout_fixes import ASYNC_MESSAGES, ASYNC_STEP_FLOOR
from gpuprof.judge.verdict import bottlenecks
CHEAP_STEP_S = ASYNC_STEP_FLOOR.value
MESSAGE_S = ASYNC_MESSAGES.value


def build(ev, s):
    found = in_processes(ev, s, GYMNASIUM, MESSAGE_S, CHEAP_STEP_S)
    if found is None:
        return None
    env, n = ev.env, found["n"]
    snippet = (f"envs = gymnasium.vector.AsyncVectorEnv([make_env(...) for i in range({n})])\n"
               f"# or: gymnasium.make_vec({env_id(env)}, num_envs={n}, vectorization_mode=\"async\")")
    return {
        "estimated_speedup": found["gain"], "where": env.get("where"),
        "detail": f"{env_name(env)} -> AsyncVectorEnv: each sub-environment steps in its own process",
        "snippet": command_first(ev, PARALLEL_ENVS, True, snippet),
        "why": found["why"], "change": None, "first": processes_lead(env),
    }


FIX = Fix(id="async-vector-env", title="Step the environments in parallel processes (AsyncVectorEnv)", effort=1,
          addresses=(bottlenecks.INPUT_ENV.id,), build=build, leads=True)
