"""The report's line about environment stepping (reinforcement learning): its share of the
training time whatever the verdict, and the collection and learning phases where they were told
apart (gpuprof.judge.sections.environment), with the rollout's parts where they were measured."""

from gpuprof.judge.sections.environment import env_words
from gpuprof.judge.sections.rollout import PARTS, WORDS


def environment_notes(environment) -> list:
    if not environment or environment.get("share") is None:
        return []
    env = environment
    what = env_words(env)
    at = f" at {env['where']}" if env.get("where") else ""
    per_call = f", {env['per_call_s'] * 1e3:.2f} ms a step call" if env.get("per_call_s") else ""
    if per_call and env.get("vector") and (env.get("num_envs") or 0) > 1 and env.get("per_env_step_s"):
        per_call += f" ({env['per_env_step_s'] * 1e3:.2f} ms per env)"
    free = 1 / (1 - env["share"]) if env["share"] < 1 else None
    # Not a bound: the objects a step allocates bring collections that fall on other code, which
    # replaying the env's results also saves (docs/benchmarks.md: 1.15x by its own time, 1.24x measured).
    bound = f" (made free: about {free:.2f}x by its own time, more with the garbage its steps leave)" if free else ""
    line = f"environment stepping ({what}{at}) took {env['share']:.1%} of the training time{per_call}{bound}"
    phases = env.get("phases")
    if phases and phases.get("parts"):
        return [line, rollout_line(phases)]
    if phases:
        line += (f"; collection (the rollout) {phases['collection']['share']:.0%} and learning (the update) "
                 f"{phases['learning']['share']:.0%} of it, estimated from step times, environment steps being "
                 f"{phases['rollout']['env_share']:.0%} of the rollout and policy inference with host work "
                 f"the other {phases['rollout']['other_share']:.0%}")
    return [line]


def rollout_line(phases: dict) -> str:
    """'collection (the rollout) 64% and learning (the update) 36% of the training time, measured over 9
    rollouts: env stepping 12%, policy inference 20% (...), host conversions 9%, the rest 23%'."""
    parts = phases["parts"]
    words = []
    for key in PARTS:
        share = parts.get(key)
        if share is None:
            words.append(f"{WORDS[key]} not measured (no stack samples)")
            continue
        text = f"{WORDS[key]} {share:.0%}"
        if key == "inference" and phases.get("inference_per_call_s"):
            text += (f" ({phases['inference_calls']} forward calls of {phases['inference_per_call_s'] * 1e3:.2f} ms, "
                     "and drawing actions)")
        words.append(text)
    return (f"collection (the rollout) {phases['collection']['share']:.0%} and learning (the update) "
            f"{phases['learning']['share']:.0%} of the training time, measured over {phases['count']} rollouts: "
            + ", ".join(words) + f"; the largest part of the rollout is {WORDS[phases['largest']]}")
