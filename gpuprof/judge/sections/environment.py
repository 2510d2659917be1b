"""The environment section: how much of the training window the loop spent stepping environments
(gymnasium's envs and vector envs, Stable-Baselines3's VecEnvs, a loop of the program's own over
sub-envs), and, for a collect-then-learn loop (PPO's rollouts), the two phases' shares.

The env is described in its library's terms: the library, the class the program steps and its
wrapper chain, the vector env inside and its number of envs, and how the program made it where a
probe saw that (SB3's make_vec_env: the env id or maker, n_envs, wrapper_class, the line). Its
time is given per vector step (`per_call_s`) and per sub-env step (`per_env_step_s`).

The probe writes a running sum of environment-step seconds a few times a second; the window's
share is the sum's rise between the window's ends (interpolated between the written points).

Phases are measured where the rollout probe wrote them (gpuprof.judge.sections.rollout: each collection
phase's span, with env stepping, policy inference, host conversions and the rest apart). Without
them they are estimated from the step times: an update step takes about the median step time, so
the learning phase is the measured steps times that median and collection (the rollout) is the
rest of the window; estimated phases are given only where the environment's time lies within the
collection phase (a loop that steps its environment inside every update, like DQN, has no separate
rollout)."""

from gpuprof.stats.digits import FINE_DIGITS, REPORT_DIGITS
from gpuprof.judge.sections.rollout import measured_phases

#: Collection phase share from which the loop is taken to collect and learn in turns.
PHASES_NOTABLE = 0.05
#: The environment's time may exceed the collection estimate by this share of the window (noise).
PHASE_SLACK = 0.05


def analyse_environment(described: list, sums: list, steps: dict, rollouts=()):
    """`described`: env events; `sums`: env_steps events (every process); `steps`: the loop section;
    `rollouts`: the rollout probe's collection phases.
    {} when no environment was stepped, else {"environment": {...}}."""
    if not sums:
        return {}
    pid = _training_pid(sums, steps)
    points = sorted(((e["t"], e.get("seconds") or 0.0, e.get("calls") or 0) for e in sums if e.get("pid") == pid),
                    key=lambda p: p[0])
    if not points:
        return {}
    section = dict(_description(described, pid), processes=len({e.get("pid") for e in sums}))
    start, end = steps.get("window_start"), steps.get("window_end")
    if start is None or end is None or end <= start:
        section.update(seconds=round(points[-1][1], FINE_DIGITS), calls=points[-1][2], share=None)
        return {"environment": section}
    seconds = _at(points, end, 1) - _at(points, start, 1)
    calls = int(round(_at(points, end, 2) - _at(points, start, 2)))
    window = max(end - start - ((steps.get("evaluation") or {}).get("seconds") or 0.0), 0.0)
    share = min(seconds / window, 1.0) if window > 0 else None
    if section.get("fan_out") and section.get("num_envs"):
        calls = int(round(calls / section["num_envs"]))     # the sums count each sub-env's step
    section.update(seconds=round(seconds, FINE_DIGITS), calls=calls,
                   share=round(share, REPORT_DIGITS) if share is not None else None,
                   per_call_s=round(seconds / calls, FINE_DIGITS) if calls else None)
    section["per_env_step_s"] = (round(section["per_call_s"] / section["num_envs"], FINE_DIGITS)
                                 if section["per_call_s"] and section.get("vector") and section.get("num_envs")
                                 else section["per_call_s"])
    phases = measured_phases(rollouts, pid, start, end, window) or _phases(steps, window, seconds)
    if phases:
        section["phases"] = phases
    return {"environment": section}


def _training_pid(sums: list, steps: dict):
    """The process whose steps are judged; without one, the process that stepped environments most."""
    pids = {e.get("pid") for e in sums}
    if steps.get("pid") in pids:
        return steps["pid"]
    return max(pids, key=lambda pid: max((e.get("calls") or 0) for e in sums if e.get("pid") == pid))


def _at(points: list, t: float, column: int) -> float:
    """The running sum at time t, linear between written points; 0 before the first, the last after."""
    if t <= points[0][0]:
        return 0.0 if t < points[0][0] else points[0][column]
    for (t0, *a), (t1, *b) in zip(points, points[1:]):
        if t0 <= t <= t1:
            v0, v1 = a[column - 1], b[column - 1]
            return v0 + (v1 - v0) * ((t - t0) / (t1 - t0) if t1 > t0 else 1.0)
    return points[-1][column]


def _description(described: list, pid) -> dict:
    """The env the loop steps: its vector env where there is one (the class the program calls)."""
    mine = [e for e in described if e.get("pid") == pid] or list(described)
    if not mine:
        return {}
    chosen = next((e for e in mine if e.get("vector")), mine[0])
    keys = ("cls", "vector", "vector_cls", "num_envs", "async", "spec", "vector_entry_point", "where")
    env = {key: chosen.get(key) for key in keys}
    env["library"] = chosen.get("library") or ("gymnasium" if "library" not in chosen else None)
    env.update({key: chosen[key] for key in LIBRARY_KEYS if chosen.get(key) not in (None, [], "")})
    return env


#: What a probe may add about the env in its library's terms (gpuprof.capture.probes.sb3_vec_env, gym_env).
LIBRARY_KEYS = ("wrappers", "sub_env", "sub_wrappers", "fan_out", "built_in", "algorithm", "n_steps", "made_with",
                "maker", "maker_is_id", "n_envs", "wrapper_class", "vec_env_cls_given", "make_where")


def env_words(env: dict) -> str:
    """The env as the report names it: 'DummyVecEnv of 4 DrawnBalls (stable-baselines3; under
    VecTransposeImage)', 'SyncVectorEnv of 4 CartPole-v1', 'SyncVectorEnv (CartPole-v1)', or the env's class."""
    name = env.get("vector_cls") or env.get("cls") or "the environment"
    if env.get("num_envs"):
        name += f" of {env['num_envs']} {env.get('spec') or env.get('maker') or env.get('sub_env') or 'environments'}"
    elif env.get("spec"):
        name += f" ({env['spec']})"
    said = [env["library"]] if env.get("library") and env["library"] != "gymnasium" else []
    if env.get("wrappers"):
        said.append("under " + ", ".join(env["wrappers"]))
    return name + (f" ({'; '.join(said)})" if said else "")


def _phases(steps: dict, window: float, env_seconds: float):
    """{"collection": {...}, "learning": {...}, "rollout": {...}} or None (see the module's note)."""
    median, measured = steps.get("median_step_s"), steps.get("measured") or 0
    if not median or not measured or window <= 0:
        return None
    learning = min(median * measured, window)
    collection = window - learning
    if collection / window < PHASES_NOTABLE or env_seconds > collection + PHASE_SLACK * window:
        return None
    env_in_rollout = min(env_seconds, collection)
    return {
        "basis": "step times: learning is the measured steps at the median step time; collection the rest",
        "collection": {"seconds": round(collection, REPORT_DIGITS),
                       "share": round(collection / window, REPORT_DIGITS)},
        "learning": {"seconds": round(learning, REPORT_DIGITS), "share": round(learning / window, REPORT_DIGITS)},
        "rollout": {"env_share": round(env_in_rollout / collection, REPORT_DIGITS),
                    "other_share": round(1 - env_in_rollout / collection, REPORT_DIGITS)},
    }

