"""more-envs-per-call: more sub-environments per vector env, fewer steps per rollout.

Every vector step costs a policy forward, the conversions of its batch and the loop's Python
whatever the number of sub-envs: with n sub-envs and the rollout's steps divided by the same
factor, the samples per update stay the same and those per-step costs fall by up to half for twice
the sub-environments (a quarter where the batch's own work grows with it); env stepping itself
stays (each sub-env still steps). Where the rollout's parts were measured the estimate is that
range over the per-step parts' share; otherwise not estimated. It changes what the model trains on
(shorter rollouts of more episodes at once; PPO's advantages see fewer steps ahead; on-policy data
stays on-policy). In Stable-Baselines3's terms: n_envs doubled in the program's make_vec_env call and
the algorithm's n_steps (steps per env per rollout) halved."""

import math

from gpuprof.advise.env_terms import (SB3, env_finding, env_name, library, made_words, make_vec_env_call, part_range,
                                      rollout_phases)
from gpuprof.advise.fix import MIN_GAIN, Fix
from gpuprof.advise.flag_terms import ENVS, command_first
from gpuprof.priors.rollout_fixes import PER_CALL_SAVING
from gpuprof.judge.verdict import bottlenecks
PER_STEP_PARTS = ("inference", "conversions", "rest")
LOW_SAVING, HIGH_SAVING = PER_CALL_SAVING.ends()


def build(ev, s):
    env = ev.env or {}
    n = env.get("num_envs")
    phases = rollout_phases(ev)
    per_step = sum((phases["parts"].get(k) or 0.0) for k in PER_STEP_PARTS) if phases else None
    if not n or (env_finding(s) is None and not (phases and phases["largest"] in PER_STEP_PARTS)):
        return None
    more = n * 2
    built = {
        "estimated_speedup": None,
        "where": (env.get("make_where") if library(env) == SB3 else None) or env.get("where"),
        "detail": (f"{env_name(env)} -> {more} sub-environments and half the steps per rollout (the same samples "
                   "per update; each rollout then holds more, shorter episode pieces)"),
        "snippet": command_first(ev, ENVS, more, _snippet(env, more)),
        "why": (f"each of the {env.get('calls') or 'measured'} vector steps pays a policy forward and a step call for "
                f"{n} sub-environments; twice as many per call halves the calls. Not estimated (the calls' fixed cost "
                "is not measured apart from their work)"),
        "change": None,
    }
    if per_step:
        low, gain, high = part_range(per_step, LOW_SAVING, HIGH_SAVING)
        if high >= MIN_GAIN:
            built.update(estimated_speedup=gain, estimate_low=low, estimate_high=high, why=(
                f"policy inference, conversions and the loop's Python are {per_step:.0%} of the training time and are "
                f"paid once per vector step for {n} sub-environments; twice as many per call halves the calls, saving "
                f"{LOW_SAVING:.0%} to {HIGH_SAVING:.0%} of that: {math.floor(low * 100) / 100:.2f}x to "
                f"{math.ceil(high * 100) / 100:.2f}x; the advantages then see half as many steps ahead"))
    return built


def _snippet(env: dict, more: int) -> str:
    if library(env) != SB3:
        return (f"envs = gymnasium.vector.SyncVectorEnv([make_env(...) for i in range({more})])\n"
                "num_steps = num_steps // 2   # the rollout's steps per env: the same samples per update")
    if env.get("made_with") == "make_vec_env":
        make = make_vec_env_call(env, more, _given_cls(env)) + made_words(env)
    else:
        make = f"envs = {env.get('vector_cls') or 'DummyVecEnv'}([make_env(i) for i in range({more})])"
    if not env.get("n_steps"):      # an algorithm without n_steps (off-policy), or the program's own loop
        return f"{make}\n# and half the steps per env between updates: the same samples per update"
    return (f"{make}\nmodel = {env.get('algorithm') or 'PPO'}(policy, envs, n_steps={env['n_steps'] // 2})   "
            f"# half of {env['n_steps']}: the same samples per update; your other arguments as before")


def _given_cls(env: dict):
    """The vec_env_cls the program passed to make_vec_env, kept as it was (None where it left SB3's default)."""
    given = env.get("vec_env_cls_given")
    return given if given and given != "DummyVecEnv" else None


FIX = Fix(id="more-envs-per-call", title="Step more environments per policy call", effort=1,
          addresses=(bottlenecks.INPUT_ENV.id, bottlenecks.COMPUTE.id, bottlenecks.HOST_OVERHEAD.id), build=build,
          changes_training=True)
