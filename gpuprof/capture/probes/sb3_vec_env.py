"""Stable-Baselines3 probe: SB3's vectorised envs stepped as one vector step each, in SB3's terms.

SB3's VecEnv family (DummyVecEnv, SubprocVecEnv, and VecEnvWrapper chains such as VecFrameStack,
VecNormalize, VecMonitor, VecTransposeImage) is no gymnasium class: without this probe its
DummyVecEnv's loop over gymnasium sub-envs looks like separate env steps. `VecEnv.step` (and any
subclass's own) is wrapped by the environment probe (gpuprof.capture.probes.gym_env), so the sub-envs'
steps, their wrappers and rendering count inside one vector step on the program's clock.

Each VecEnv class stepped is described once: the library, the class the program steps and its
wrapper chain, the vector env inside them and its number of envs, whether they step in processes,
the sub-env's class, wrappers and registered id where they live in this process (DummyVecEnv), and,
where SB3's own algorithm steps it, the algorithm and its `n_steps`. `make_vec_env` is wrapped to
note how the program made its vector env (the env id or maker, n_envs, wrapper_class, vec_env_cls
and the line), so that advice can give the same call back with one argument changed.

Installed when the program itself imports SB3's modules (gpuprof.capture.probes.install); this module
never imports SB3. Every wrapper passes the call through unchanged and keeps its own errors."""

import inspect
import os
import sys
import weakref

from . import runtime, gym_env
from .where import locate, user_location
from ...record import kinds

LIBRARY = "stable-baselines3"
MAX_MADE = 16              # vector envs whose making is remembered per process
MAX_CHAIN = 16             # wrappers walked
MAX_FRAMES = 48            # frames walked for SB3's algorithm

_made = {}                 # id(vector env) -> (a weak reference to it, how make_vec_env made it)


def install_vec_env(module) -> None:
    """`stable_baselines3.common.vec_env.base_vec_env` has just been imported by the program."""
    base = getattr(module, "VecEnv", None)
    if base is None:
        return
    gym_env.start()
    gym_env.watch_family(base, LIBRARY, describe)


def install_env_util(module) -> None:
    """`stable_baselines3.common.env_util` has just been imported: note each make_vec_env call."""
    original = getattr(module, "make_vec_env", None)
    if not callable(original) or getattr(original, "_gpuprof", False):
        return

    def make_vec_env(*args, **kwargs):
        made = original(*args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        _note_made(original, made, args, kwargs)
        return made

    make_vec_env.__wrapped__ = original
    make_vec_env._gpuprof = True
    for name in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(make_vec_env, name, getattr(original, name))
        except (AttributeError, TypeError):
            pass
    module.make_vec_env = make_vec_env


def _note_made(original, made, args, kwargs) -> None:
    try:
        bound = inspect.signature(original).bind(*args, **kwargs)
        bound.apply_defaults()
        given = bound.arguments
        maker = given.get("env_id")
        n_envs = given.get("n_envs")
        facts = {"made_with": "make_vec_env", "maker": maker if isinstance(maker, str) else _name(maker),
                 "maker_is_id": isinstance(maker, str), "n_envs": n_envs if isinstance(n_envs, int) else None,
                 "wrapper_class": _name(given.get("wrapper_class")),
                 "vec_env_cls_given": _name(given.get("vec_env_cls")),
                 "make_where": user_location((_sb3_dir(),))}
        if len(_made) >= MAX_MADE:
            _made.clear()
        _made[id(made)] = (_weak(made), facts)
    except Exception:
        pass


def _weak(obj):
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def _name(obj):
    """A class's or function's name as the program wrote it (None for a lambda or no callable)."""
    if obj is None:
        return None
    func = getattr(obj, "func", None)          # functools.partial
    name = getattr(func if func is not None and not isinstance(obj, type) else obj, "__qualname__", None)
    if not isinstance(name, str) or "<" in name:
        return None
    return name


def describe(env, cls, now: float) -> None:
    chain, inner = [], env
    while "venv" in getattr(inner, "__dict__", {}) and len(chain) < MAX_CHAIN:
        chain.append(type(inner).__name__)
        inner = inner.__dict__["venv"]
    num_envs = getattr(inner, "num_envs", None)
    parallel = any(c.__name__ == "SubprocVecEnv" for c in type(inner).__mro__) or "processes" in inner.__dict__
    subs = inner.__dict__.get("envs")
    sub = subs[0] if isinstance(subs, (list, tuple)) and subs else None
    sub_wrappers, sub_env, spec = _sub_env(sub)
    # The user's line, and SB3's line that stepped the env where its algorithm did (its vec_env
    # package and gymnasium passed over).
    found = locate((gym_env.gymnasium_dir(), _sb3_dir("common", "vec_env")))
    event = {"k": kinds.ENV, "t": now, "cls": cls.__name__, "module": cls.__module__, "library": LIBRARY,
             "vector": True, "num_envs": num_envs if isinstance(num_envs, int) else None,
             "vector_cls": type(inner).__name__, "wrappers": chain, "async": bool(parallel),
             "sub_env": sub_env, "sub_wrappers": sub_wrappers, "spec": spec, "vector_entry_point": False,
             "where": found.get("where"), "built_in": found.get("built_in"), **_algorithm()}
    record = _made.get(id(inner))
    if record is not None and record[0]() is inner:
        event.update(record[1])
    runtime.emit(event)


def _sub_env(sub) -> tuple:
    """([the sub-env's wrappers, outermost first], its own class, its registered id) of a sub-env
    that lives in this process; ([], None, None) for one in another process."""
    if sub is None:
        return [], None, None
    wrappers, inner = [], sub
    while "env" in getattr(inner, "__dict__", {}) and len(wrappers) < MAX_CHAIN:
        wrappers.append(type(inner).__name__)
        inner = inner.__dict__["env"]
    spec = getattr(sub, "spec", None)
    return wrappers, type(inner).__name__, getattr(spec, "id", None) if spec is not None else None


def _algorithm() -> dict:
    """{"algorithm", "n_steps"} where SB3's own algorithm (its collect_rollouts) steps the env."""
    sb3 = _sb3_dir()
    frame, depth = sys._getframe(1), 0
    while frame is not None and depth < MAX_FRAMES and sb3:
        if frame.f_code.co_name == "collect_rollouts" and os.path.abspath(frame.f_code.co_filename).startswith(sb3):
            owner = frame.f_locals.get("self")
            n_steps = getattr(owner, "n_steps", None)
            return {"algorithm": type(owner).__name__ if owner is not None else None,
                    "n_steps": n_steps if isinstance(n_steps, int) and not isinstance(n_steps, bool) else None}
        frame, depth = frame.f_back, depth + 1
    return {}


def _sb3_dir(*inside):
    """SB3's installed folder (or a folder inside it), ending in a separator; None before SB3 is imported."""
    module = sys.modules.get("stable_baselines3")
    path = getattr(module, "__file__", None)
    return os.path.join(os.path.dirname(os.path.abspath(path)), *inside, "") if path else None
