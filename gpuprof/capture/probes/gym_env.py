"""Environment probe: how long the program waits on environment steps, in the structures of the
library that steps them.

Every `step` defined by a class of a watched family is wrapped, the classes defined later included:
gymnasium's two (`gymnasium.Env`, which includes its wrappers, and `gymnasium.vector.VectorEnv`,
which includes SyncVectorEnv, AsyncVectorEnv and vector wrappers), and those other libraries' probes
hand over (Stable-Baselines3's VecEnv: gpuprof.capture.probes.sb3_vec_env). Only the outermost call in a
thread is timed, so a vector env stepping wrapped sub-environments counts once, as one vector step
on the program's own clock (wall time, the clock the rest of the loop is measured on). A vector env
in processes (AsyncVectorEnv, SubprocVecEnv) is timed in the program as the wait for them.

A loop of the program's own that steps several plain envs in turn from one line (a vector env
that is no library's) is noticed among the first FAN_OUT_WATCH outermost calls and described as a
vector env of that many sub-environments.

Aggregates only: a running sum of calls and seconds written at most every EMIT_EVERY_S, and at exit;
the call's arguments and result pass through untouched."""

import os
import sys
import threading
import time
import types

from . import runtime, rollout
from .where import package_of, user_location
from ...record import kinds

EMIT_EVERY_S = 0.5
MAX_DESCRIBED = 8          # environment classes described per process
FAN_OUT_WATCH = 256        # outermost plain-env calls watched for one line stepping several envs in turn
LIBRARY = "gymnasium"
PROBE = __name__           # this module, as the wrappers find it in sys.modules


class _Depth(threading.local):
    """How deep this thread is in env steps (0 outside them). Pickles as an empty dict, whose
    missing depth a wrapper unpickled elsewhere reads as "inside": it then passes calls through."""
    depth = 0

    def __reduce__(self):
        return dict, ()


_local = _Depth()
_tally = {"calls": 0, "seconds": 0.0, "emitted_at": None}
_described = set()
_fan_out = {"watching": True, "calls": 0, "lines": {}}
_started = []
_describers = {}           # library -> describe(env, cls, now)


def install(gymnasium) -> None:
    start()
    families = [gymnasium.Env]
    vector = getattr(getattr(gymnasium, "vector", None), "VectorEnv", None)
    if vector is not None:
        families.append(vector)
    for base in families:
        watch_family(base, LIBRARY, _describe)


def start() -> None:
    """Write the sums at exit and start them afresh in a forked child (once per process)."""
    if _started:
        return
    _started.append(True)
    runtime.at_close(_emit)
    runtime.at_fork_child(_reset_in_child)


def watch_family(base, library: str, describe) -> None:
    """Wrap `step` in the base, in every subclass defined so far and in every one defined later;
    `describe(env, cls, now)` writes what the first step of each class shows of it in `library`'s terms."""
    _describers[library] = describe
    for cls in _family(base):
        _wrap_step(cls, library)
    own = base.__dict__.get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if own is not None:
            own.__func__(cls, **kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        try:
            _wrap_step(cls, library)
        except Exception:
            pass

    base.__init_subclass__ = classmethod(__init_subclass__)


def _family(base) -> list:
    seen, pending = [], [base]
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.append(cls)
        try:
            pending.extend(cls.__subclasses__())
        except TypeError:
            pass
    return seen


def _wrap_step(cls, library: str) -> None:
    """Wrap the class's own `step`. The wrapper holds only what pickles without gpuprof: a class
    pickled by value with its methods (cloudpickle, as SB3's SubprocVecEnv sends an env class of the
    program's __main__ to its processes) unpickles where gpuprof is not loaded, its step untimed
    there (the depth turns into an empty dict, see _Depth); the describer is named by its library."""
    original = cls.__dict__.get("step")
    if not isinstance(original, types.FunctionType) or getattr(original, "_gpuprof", False):
        return          # none of its own, a static or class method, or wrapped already
    depth, clock = _local, time.monotonic

    def step(self, *args, **kwargs):
        if getattr(depth, "depth", 1):
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        depth.depth = 1
        started = clock()
        try:
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        finally:
            depth.depth = 0
            probe = sys.modules.get(PROBE)
            if probe is not None:
                probe._on_step(self, started, library)

    step.__wrapped__ = original
    step._gpuprof = True
    step.__name__ = getattr(original, "__name__", "step")
    step.__qualname__ = getattr(original, "__qualname__", "step")
    step.__doc__ = getattr(original, "__doc__", None)
    cls.step = step


def _on_step(env, started: float, library: str) -> None:
    try:
        now = time.monotonic()
        if _tally["emitted_at"] is None:
            _tally["emitted_at"] = started
            runtime.emit({"k": kinds.ENV_STEPS, "t": started, "calls": 0, "seconds": 0.0})
        _tally["calls"] += 1
        _tally["seconds"] += now - started
        rollout.on_env_step(started, now)
        cls = type(env)
        if cls not in _described and len(_described) < MAX_DESCRIBED:
            _described.add(cls)
            (_describers.get(library) or _describe)(env, cls, now)
        if _fan_out["watching"] and library == LIBRARY:
            _watch_fan_out(env, sys._getframe(2), now)      # the frame that called the env's step
        if now - _tally["emitted_at"] >= EMIT_EVERY_S:
            _emit(now)
            runtime.tick(now)
    except Exception:
        pass


def _describe(env, cls, now: float) -> None:
    num_envs = getattr(env, "num_envs", None)
    name = cls.__name__
    inner = _innermost_vector(env)
    spec = _spec_of(env)
    runtime.emit({"k": kinds.ENV, "t": now, "cls": name, "module": cls.__module__, "library": LIBRARY,
                  "vector": num_envs is not None, "num_envs": num_envs if isinstance(num_envs, int) else None,
                  "vector_cls": inner, "async": "Async" in (inner or name),
                  "spec": _spec_id(spec), "vector_entry_point": bool(getattr(spec, "vector_entry_point", None)),
                  "where": user_location((gymnasium_dir(),))})


def _watch_fan_out(env, caller, now: float) -> None:
    """A plain env's outermost step from `caller`'s line: once that line has stepped several envs
    and comes back to the first, it is a vector env of the program's own (see the module's note)."""
    state = _fan_out
    state["calls"] += 1
    if state["calls"] > FAN_OUT_WATCH or caller is None or getattr(env, "num_envs", None) is not None:
        state["watching"] = state["calls"] <= FAN_OUT_WATCH
        return
    key = (caller.f_code, caller.f_lineno)
    stepped = state["lines"].setdefault(key, [])
    if stepped is None or id(env) not in stepped:
        if stepped is not None:
            stepped.append(id(env))
        return
    state["lines"][key] = None          # a full round: this line is decided
    if len(stepped) < 2:
        return
    state["watching"] = False
    while caller.f_back is not None and caller.f_code.co_name.startswith("<") and caller.f_code.co_name != "<module>":
        caller = caller.f_back          # a comprehension's own frame (before Python 3.12): the function holding it
    owner = caller.f_locals.get("self") if caller.f_code.co_varnames[:1] == ("self",) else None
    if owner is not None:
        looping = type(owner).__name__
    elif caller.f_code.co_name == "<module>":
        looping = "the program's loop"
    else:
        looping = getattr(caller.f_code, "co_qualname", caller.f_code.co_name)
    path = os.path.abspath(caller.f_code.co_filename)
    spec = _spec_of(env)
    runtime.emit({"k": kinds.ENV, "t": now, "cls": looping, "module": caller.f_globals.get("__name__"),
                  "library": package_of(path), "vector": True, "fan_out": True, "num_envs": len(stepped),
                  "vector_cls": looping, "async": False, "sub_env": type(env).__name__, "spec": _spec_id(spec),
                  "vector_entry_point": bool(getattr(spec, "vector_entry_point", None)),
                  "where": user_location((gymnasium_dir(),))})


def _innermost_vector(env):
    """The vector env's own class under any vector wrappers (AsyncVectorEnv under RecordEpisodeStatistics)."""
    seen = 0
    while hasattr(env, "env") and seen < 16:
        env, seen = env.env, seen + 1
    return type(env).__name__ if hasattr(env, "num_envs") else None


def _spec_of(env):
    """The registered spec of the env, or of a vector env's first sub-environment (SyncVectorEnv built
    from a list of functions has none of its own)."""
    spec = getattr(env, "spec", None)
    if spec is None:
        subs = getattr(env, "envs", None)
        if subs:
            spec = getattr(subs[0], "spec", None)
    return spec


def _spec_id(spec):
    return getattr(spec, "id", None) if spec is not None else None


def gymnasium_dir():
    import sys
    module = sys.modules.get("gymnasium")
    path = getattr(module, "__file__", None)
    return os.path.dirname(os.path.abspath(path)) if path else None


def _emit(now: float = None) -> None:
    if _tally["emitted_at"] is None:
        return
    now = time.monotonic() if now is None else now
    _tally["emitted_at"] = now
    runtime.emit({"k": kinds.ENV_STEPS, "t": now, "calls": _tally["calls"], "seconds": round(_tally["seconds"], 6)})


def _reset_in_child() -> None:
    """A forked process (an AsyncVectorEnv worker) starts its own sums."""
    _tally.update(calls=0, seconds=0.0, emitted_at=None)
    _described.clear()
    _fan_out.update(watching=True, calls=0, lines={})
    _local.depth = 0
