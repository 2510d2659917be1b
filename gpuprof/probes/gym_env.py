"""gymnasium probe: how long the program waits on environment steps.

Every `step` defined by a class of gymnasium's two families (`gymnasium.Env`, which includes its
wrappers, and `gymnasium.vector.VectorEnv`, which includes SyncVectorEnv, AsyncVectorEnv and vector
wrappers), the ones defined later included, is wrapped; only the outermost call in a thread is
timed, so a vector env stepping wrapped sub-environments counts once. An AsyncVectorEnv's step is
timed in the program as the wait for its subprocesses. Aggregates only: a running sum of calls and
seconds written at most every EMIT_EVERY_S, and at exit; the call's arguments and result pass
through untouched."""

import os
import threading
import time
import types

from . import boot, rollout
from .where import user_location
from ..record import kinds

EMIT_EVERY_S = 0.5
MAX_DESCRIBED = 8          # environment classes described per process

_local = threading.local()
_tally = {"calls": 0, "seconds": 0.0, "emitted_at": None}
_described = set()


def install(gymnasium) -> None:
    families = [gymnasium.Env]
    vector = getattr(getattr(gymnasium, "vector", None), "VectorEnv", None)
    if vector is not None:
        families.append(vector)
    for base in families:
        _watch_family(base)
    boot.at_close(_emit)
    boot.at_fork_child(_reset_in_child)


def _watch_family(base) -> None:
    """Wrap `step` in the base, in every subclass defined so far and in every one defined later."""
    for cls in _family(base):
        _wrap_step(cls)
    own = base.__dict__.get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if own is not None:
            own.__func__(cls, **kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        try:
            _wrap_step(cls)
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


def _wrap_step(cls) -> None:
    original = cls.__dict__.get("step")
    if not isinstance(original, types.FunctionType) or getattr(original, "_gpuprof", False):
        return          # none of its own, a static or class method, or wrapped already

    def step(self, *args, **kwargs):
        if getattr(_local, "depth", 0):
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        _local.depth = 1
        started = time.monotonic()
        try:
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        finally:
            _local.depth = 0
            _on_step(self, started)

    step.__wrapped__ = original
    step._gpuprof = True
    step.__name__ = getattr(original, "__name__", "step")
    step.__qualname__ = getattr(original, "__qualname__", "step")
    step.__doc__ = getattr(original, "__doc__", None)
    cls.step = step


def _on_step(env, started: float) -> None:
    try:
        now = time.monotonic()
        if _tally["emitted_at"] is None:
            _tally["emitted_at"] = started
            boot.emit({"k": kinds.ENV_STEPS, "t": started, "calls": 0, "seconds": 0.0})
        _tally["calls"] += 1
        _tally["seconds"] += now - started
        rollout.on_env_step(started, now)
        cls = type(env)
        if cls not in _described and len(_described) < MAX_DESCRIBED:
            _described.add(cls)
            _describe(env, cls, now)
        if now - _tally["emitted_at"] >= EMIT_EVERY_S:
            _emit(now)
            boot.tick(now)
    except Exception:
        pass


def _describe(env, cls, now: float) -> None:
    num_envs = getattr(env, "num_envs", None)
    name = cls.__name__
    inner = _innermost_vector(env)
    spec = _spec_of(env)
    boot.emit({"k": kinds.ENV, "t": now, "cls": name, "module": cls.__module__,
               "vector": num_envs is not None, "num_envs": num_envs if isinstance(num_envs, int) else None,
               "vector_cls": inner, "async": "Async" in (inner or name),
               "spec": _spec_id(spec), "vector_entry_point": bool(getattr(spec, "vector_entry_point", None)),
               "where": user_location((_gymnasium_dir(),))})


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


def _gymnasium_dir():
    import sys
    module = sys.modules.get("gymnasium")
    path = getattr(module, "__file__", None)
    return os.path.dirname(os.path.abspath(path)) if path else None


def _emit(now: float = None) -> None:
    if _tally["emitted_at"] is None:
        return
    now = time.monotonic() if now is None else now
    _tally["emitted_at"] = now
    boot.emit({"k": kinds.ENV_STEPS, "t": now, "calls": _tally["calls"], "seconds": round(_tally["seconds"], 6)})


def _reset_in_child() -> None:
    """A forked process (an AsyncVectorEnv worker) starts its own sums."""
    _tally.update(calls=0, seconds=0.0, emitted_at=None)
    _described.clear()
    _local.depth = 0
