"""subproc-vec-env: step Stable-Baselines3's sub-environments in parallel processes (SubprocVecEnv).

SB3's DummyVecEnv steps its n sub-environments one after another in the training process, each
through its wrappers and rendering; its SubprocVecEnv runs each in a process of its own, so a
vector step takes about the slowest sub-env's step instead of the sum ("SubprocVecEnv ...
allowing significant speed up when the environment is computationally complex", SB3's docs). In
SB3's terms the change is one argument of the program's own make_vec_env call, `vec_env_cls=
SubprocVecEnv`, with its env id or maker, n_envs and wrapper_class as the probe saw them (or the
script's own option that picks the vector env, where it has one).

The estimate is async-vector-env's (gpuprof.advise.env_terms.parallel_estimate): on the c cores the
job has at most min(n, c) sub-envs at a time, and each vector step sends actions and results to and
from every process, MESSAGE_S per sub-env step (measured for SubprocVecEnv: bench/env_messages.py).
Not offered where one sub-env step takes less than CHEAP_STEP_S or the envs step in processes
already. It leads: SB3's envs have no registered vectorised version, so the other env fix is a
rewrite whose figure is the env made free (env_terms.processes_lead)."""

from gpuprof.advise.env_terms import SB3, env_name, in_processes, made_words, make_vec_env_call, processes_lead
from gpuprof.advise.fix import Fix
from gpuprof.advise.flag_terms import PARALLEL_ENVS, command_first
from gpuprof.priors.rollout_fixes import ASYNC_STEP_FLOOR, SUBPROC_MESSAGES
from gpuprof.judge.verdict import bottlenecks
CHEAP_STEP_S = ASYNC_STEP_FLOOR.value
MESSAGE_S = SUBPROC_MESSAGES.value
IMPORT = "from stable_baselines3.common.vec_env import SubprocVecEnv"


def build(ev, s):
    found = in_processes(ev, s, SB3, MESSAGE_S, CHEAP_STEP_S)
    if found is None:
        return None
    env = ev.env
    return {
        "estimated_speedup": found["gain"], "where": env.get("make_where") or env.get("where"),
        "detail": (f"{env_name(env)} -> SubprocVecEnv: each sub-environment steps (with its wrappers and rendering) "
                   "in its own process; SB3 starts them with forkserver, so the training must run under "
                   "`if __name__ == \"__main__\":`"),
        "snippet": command_first(ev, PARALLEL_ENVS, True, snippet(env, found["n"])),
        "why": found["why"], "change": None, "first": processes_lead(env),
    }


def snippet(env: dict, n: int) -> str:
    """The program's make_vec_env call with vec_env_cls=SubprocVecEnv, or SubprocVecEnv in place of
    the DummyVecEnv the program built itself."""
    if env.get("made_with") == "make_vec_env":
        lines = [IMPORT, make_vec_env_call(env, env.get("n_envs") or n, "SubprocVecEnv") + made_words(env)]
    else:
        lines = [IMPORT, f"envs = SubprocVecEnv([make_env(i) for i in range({n})])   # in place of "
                         f"{env.get('vector_cls') or 'DummyVecEnv'}([...])"]
    if env.get("wrappers"):
        lines.append(f"# the vector wrappers around it ({', '.join(env['wrappers'])}) stay as they are")
    return "\n".join(lines)


FIX = Fix(id="subproc-vec-env", title="Step the environments in parallel processes (SB3's SubprocVecEnv)", effort=1,
          addresses=(bottlenecks.INPUT_ENV.id,), build=build, leads=True)
