"""What the environment fixes share: whether the run's env stepping is a bottleneck worth fixing
(the verdict, or a finding beside it), the env in its library's words (gymnasium's, or Stable-
Baselines3's: the program's own make_vec_env call given back with one argument changed), the
rollout's measured parts that the reinforcement-learning fixes estimate from (the job's own, at
each part's uncontended pace, beside other processes), and what stepping the sub-envs in parallel
processes gains on the cores the job has."""

import math

from gpuprof.advise.fix import MIN_GAIN
from gpuprof.advise.model import TINY, cheaper_share
from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.verdict.bottlenecks.input_env import job_alone
from gpuprof.judge.sections.environment import env_words

GYMNASIUM, SB3 = "gymnasium", "stable-baselines3"
#: A count of sub-envs at a time this near a whole number is written whole.
WHOLE_WITHIN = 0.05


def env_finding(s):
    """The environment bottleneck's verdict or finding in this run, else None."""
    for finding in (s.verdict,) + tuple(s.findings):
        if finding.get("bottleneck") == bottlenecks.INPUT_ENV.id:
            return finding
    return None


def env_name(env: dict) -> str:
    """'SyncVectorEnv of 4 CartPole-v1', 'DummyVecEnv of 4 DrawnBalls (stable-baselines3)',
    'CartPole-v1', or the env's class."""
    if env.get("num_envs"):
        return env_words(env)
    return env.get("spec") or env.get("cls") or "the environment"


def env_id(env: dict) -> str:
    return repr(env.get("spec") or "YourEnv-v0")


def library(env: dict) -> str:
    """The library whose structures step the env: SB3, else gymnasium (whose envs a loop of the
    program's own steps too)."""
    return SB3 if (env or {}).get("library") == SB3 else GYMNASIUM


def sb3_collects(env: dict) -> bool:
    """SB3's own algorithm collects the rollout (its collect_rollouts steps the env): the policy's
    calls are already one batched forward per vector step under no_grad, and its buffers are SB3's."""
    return library(env) == SB3 and bool((env or {}).get("algorithm"))


def env_share(ev) -> float:
    """Env stepping's share of the training time: the job's own (each part at its uncontended pace)
    beside other processes that held notable cores, else as measured."""
    alone = job_alone(ev)
    return alone["parts"]["env"] if alone else (ev.env_share or 0.0)


def make_vec_env_call(env: dict, n_envs: int, vec_env_cls: str = None) -> str:
    """The program's make_vec_env call with n_envs (and vec_env_cls) set, its env id or maker and
    wrapper_class as the probe saw them ('make_env' where the maker has no name)."""
    if env.get("maker_is_id") and env.get("maker"):
        maker = repr(env["maker"])
    else:
        maker = env.get("maker") or (repr(env["spec"]) if env.get("spec") else "make_env")
    args = [maker, f"n_envs={n_envs}"]
    if env.get("wrapper_class"):
        args.append(f"wrapper_class={env['wrapper_class']}")
    if vec_env_cls:
        args.append(f"vec_env_cls={vec_env_cls}")
    return f"envs = make_vec_env({', '.join(args)})"


def made_words(env: dict) -> str:
    """'# your other arguments as at train.py:40' where the program's make_vec_env call was seen."""
    return f"   # your other arguments as at {env['make_where']}" if env.get("make_where") else ""


def cores_for_envs(ev) -> float:
    """The cores the job's env processes can have: the job's cores less those other processes
    held over the measured steps, at least one."""
    return max(float(ev.cpu_count or 1) - (ev.other_cores or 0.0), 1.0)


def parallel_estimate(ev, message_s: float):
    """(speed-up, sub-envs at a time, the env's share after) for stepping the n sub-envs of a
    vector step in their own processes, or None without the figures: on c cores at most min(n, c)
    at a time, so the env's share s falls to s / min(n, c), and each vector step then sends actions
    and results to and from each process (`message_s` per sub-env step, measured), which adds
    n * message_s over the vector step's measured time of the share."""
    env = ev.env or {}
    n, per_call = env.get("num_envs") or 0, env.get("per_call_s")
    if n < 2 or not per_call:
        return None
    parallel = min(float(n), cores_for_envs(ev))
    share = env_share(ev)
    after = share * (1.0 / parallel + n * message_s / per_call)
    return 1.0 / max(1.0 - share + after, TINY), parallel, after


def parallel_words(ev, parallel: float) -> str:
    """'4 at a time on 4 cores', or '1.3 at a time on the 1.3 cores left of 2 (other processes held 0.7)'."""
    at_once = f"{parallel:.0f}" if abs(parallel - round(parallel)) < WHOLE_WITHIN else f"{parallel:.1f}"
    if ev.other_cores:
        return (f"{at_once} at a time on the {cores_for_envs(ev):.1f} cores left of {ev.cpu_count} (other processes "
                f"held {ev.other_cores:.1f})")
    return f"{at_once} at a time on {ev.cpu_count} cores"


def in_processes(ev, s, wanted_library: str, message_s: float, cheapest_step_s: float):
    """Stepping a vector env of `wanted_library` in processes, where it applies: {"n", "gain", "why"},
    else None. Not where the env steps in processes already, a sub-env step takes less than
    `cheapest_step_s`, the job has one core, or the gain is under MIN_GAIN. The why states the
    estimate's figures (parallel_estimate) the same way for every library."""
    env = ev.env or {}
    n = env.get("num_envs") or 0
    if env_finding(s) is None or env.get("async") or library(env) != wanted_library or n < 2 or ev.cpu_count < 2 \
            or not env.get("per_call_s") or env["per_call_s"] / n < cheapest_step_s:
        return None
    estimate = parallel_estimate(ev, message_s)
    if estimate is None or estimate[0] < MIN_GAIN:
        return None
    gain, parallel, after = estimate
    why = (f"env steps take {env_share(ev):.0%} of the training time, {env['per_call_s'] * 1e3:.2f} ms a vector "
           f"step for {n} sub-environments in turn; {parallel_words(ev, parallel)}, with "
           f"{message_s * 1e6:.0f} µs of messages per sub-env step, cut that share to {after:.0%}: about "
           f"{math.floor(gain * 100) / 100:.2f}x at these figures")
    return {"n": n, "gain": gain, "why": why}


def processes_lead(env: dict):
    """Why stepping the sub-envs in processes goes first, or None: where the env's step has no
    registered vectorised version, the other env fix (a faster or vectorised step) is a rewrite of
    the env whose figure is its time made free, a bound no rewrite reaches, while this is one
    argument estimated from the run's own figures."""
    if env.get("vector_entry_point") and env.get("spec"):
        return None
    return ("first: one argument, estimated from this run's figures; making the env's step itself cheaper is a "
            "rewrite, and its figure the env's time made free, a bound")


def rollout_phases(ev):
    """The environment's measured collection and learning phases (with the rollout's parts), or None;
    beside other processes that held notable cores, the parts and phases at their uncontended pace."""
    phases = (ev.env or {}).get("phases") or {}
    if not phases.get("parts"):
        return None
    alone = job_alone(ev)
    if alone:
        return dict(phases, parts=alone["parts"], largest=alone["largest"], collection=alone["collection"],
                    learning=alone["learning"])
    return phases


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
    from gpuprof.advise.fix import MIN_GAIN
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
