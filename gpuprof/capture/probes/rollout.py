"""Rollout probe (reinforcement learning): each collection phase between two updates, with the
policy's inference in it and, from the stack sampler, where its samples stood: in env steps, in
module calls, drawing actions from the policy's distribution (torch.distributions), converting
data between numpy and tensors, or elsewhere.

A collection phase opens at the first environment step after an optimizer step (gym_env calls
`on_env_step`); it began at that optimizer step's end (or at the first policy call, before any
update) and it ends at the first forward that records autograd (the update's first minibatch),
or, without one, at its last env step or policy call. It is written when the next one opens, or at
exit. Each phase also counts its env steps and policy calls by duration (a histogram of buckets a
quarter of an octave wide), so that the analysis can tell the pace of their fast calls from that of
calls a busy machine stretched.

Policy inference is the time in outermost `nn.Module.__call__`s that record no autograd
(`torch.no_grad()`, `torch.inference_mode()`) or run a module in eval mode. Module calls are
wrapped only once the program has stepped an environment, so a program without one pays nothing;
a nested inference call costs one thread-local read, a call of the update a few dictionary reads
(about 1.5 µs more for a four-module policy's forward)."""

import linecache
import math
import re
import sys
import threading
import time

from . import runtime
from ...record import kinds

#: A source line that converts between numpy / Python values and tensors, or copies to the host.
CONVERSION = re.compile(r"\.(numpy|cpu|item|tolist)\(|\b(as_tensor|from_numpy|tensor|Tensor|FloatTensor|LongTensor|"
                        r"asarray|array)\(")
#: torch's own Python functions that convert a tensor for numpy.
TENSOR_CONVERSIONS = ("__array__", "__array_wrap__", "numpy", "tolist", "__float__", "__int__", "__index__")

_local = threading.local()
_state = {"wrapped": False, "steps": None, "pending": None, "segment": None}
_kind_of = {}              # (code, line) -> "conv_us" where a sample there converts data, else None
_place_of = {}             # code -> the place its frames stand for (PLACES), or None
#: Path fragments (a file, or a folder) whose frames on a sampled stack say where the sample stands.
PLACES = (("gpuprof/capture/probes/gym_env.py", "env_us"), ("torch/nn/modules/module.py", "fwd_us"),
          ("torch/distributions", "dist_us"))
MAX_DEPTH = 64             # frames walked per sample
#: Durations are counted in buckets of this many per doubling (bucket b holds [2^(b/4), 2^((b+1)/4)) s).
BUCKETS_PER_OCTAVE = 4
_PER_LOG = BUCKETS_PER_OCTAVE / math.log(2)


def _bucket(seconds: float) -> int:
    return math.floor(math.log(seconds if seconds > 1e-7 else 1e-7) * _PER_LOG)


def _count(histogram: dict, seconds: float) -> None:
    key = _bucket(seconds)
    histogram[key] = histogram.get(key, 0) + 1


def on_env_step(started: float, ended: float) -> None:
    """An outermost env step (gym_env): opens a collection phase after an update, or adds to it."""
    try:
        if not _state["wrapped"]:
            _wrap_module_calls()
        segment = _current_segment()
        if segment is None:
            segment = _open(started)
        segment["env_calls"] += 1
        segment["env_s"] += ended - started
        _count(segment["env_hist"], ended - started)
        segment["last"], segment["learn_at"] = ended, None
    except Exception:
        pass


def _steps_count():
    steps = _state["steps"]
    return steps["count"] if steps is not None else 0


def _current_segment():
    """The open phase if no optimizer step has ended since it opened; a stale one is written."""
    segment = _state["segment"]
    if segment is not None and segment["steps_at"] != _steps_count():
        _write(segment)
        segment = _state["segment"] = None
    return segment


def _open(started: float) -> dict:
    count = _steps_count()
    pending = _state["pending"] if (_state["pending"] or {}).get("steps_at") == count else None
    last_end = (_state["steps"] or {}).get("last_end")
    first = pending["first"] if pending else started
    t0 = last_end if last_end is not None and last_end <= first else first
    segment = {"t0": t0, "first": first, "last": started, "steps_at": count, "learn_at": None,
               "env_calls": 0, "env_s": 0.0, "inf_calls": pending["calls"] if pending else 0,
               "inf_s": pending["seconds"] if pending else 0.0, "sampled_us": 0, "conv_us": 0, "dist_us": 0,
               "env_us": 0, "fwd_us": 0, "env_hist": {}, "inf_hist": dict(pending["hist"]) if pending else {}}
    _state.update(segment=segment, pending=None)
    return segment


def _on_inference(started: float, ended: float) -> None:
    try:
        segment = _current_segment()
        if segment is not None:
            if segment["learn_at"] is None:
                segment["inf_calls"] += 1
                segment["inf_s"] += ended - started
                _count(segment["inf_hist"], ended - started)
                segment["last"] = ended
            return
        count = _steps_count()
        pending = _state["pending"]
        if pending is None or pending["steps_at"] != count:
            pending = _state["pending"] = {"steps_at": count, "first": started, "calls": 0, "seconds": 0.0,
                                           "hist": {}}
        pending["calls"] += 1
        pending["seconds"] += ended - started
        _count(pending["hist"], ended - started)
    except Exception:
        pass


def _on_learning_forward() -> None:
    segment = _state["segment"]
    if segment is not None and segment["learn_at"] is None and segment["steps_at"] == _steps_count():
        segment["learn_at"] = time.monotonic()


def _write(segment: dict, final: bool = False) -> None:
    end = segment["learn_at"] if segment["learn_at"] is not None else segment["last"]
    event = {"k": kinds.ROLLOUT, "t0": segment["t0"], "t": end, "first": segment["first"], "last": segment["last"],
             "env_calls": segment["env_calls"], "env_s": round(segment["env_s"], 6),
             "inf_calls": segment["inf_calls"], "inf_s": round(segment["inf_s"], 6),
             **{key: segment[key] for key in ("sampled_us", "env_us", "fwd_us", "conv_us", "dist_us")},
             "env_hist": sorted(segment["env_hist"].items()), "inf_hist": sorted(segment["inf_hist"].items())}
    if final:
        event["final"] = True
    runtime.emit(event)


def _close() -> None:
    segment, _state["segment"] = _state["segment"], None
    if segment is not None:
        try:
            _write(segment, final=True)
        except Exception:
            pass


def _wrap_module_calls() -> None:
    """Time the policy's inference from now on (see the module's note)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return              # asked again at the next env step
    _state["wrapped"] = True
    steps = sys.modules.get(__package__ + ".steps")
    _state["steps"] = getattr(steps, "_state", None)
    cls = torch.nn.Module
    original = cls.__call__
    if getattr(original, "_gpuprof", False):
        return
    grad_enabled, monotonic, local = torch.is_grad_enabled, time.monotonic, _local

    def __call__(self, *args, **kwargs):
        if getattr(local, "inside", False):
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        if grad_enabled() and self.training:
            _on_learning_forward()
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        local.inside = True
        started = monotonic()
        try:
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        finally:
            local.inside = False
            _on_inference(started, monotonic())

    __call__.__wrapped__ = original
    __call__._gpuprof = True
    cls.__call__ = __call__
    runtime.at_close(_close)
    from . import sampling
    sampling.observers.append(observe_sample)


def observe_sample(frame, weight: int) -> None:
    """From the sampler's thread: a sample inside a collection phase, and where it stands."""
    segment = _state["segment"]
    if segment is None or segment["learn_at"] is not None or segment["steps_at"] != _steps_count():
        return
    segment["sampled_us"] += weight
    kind = _sample_kind(frame)
    if kind is not None:
        segment[kind] += weight


def _sample_kind(frame):
    """Where a sample stands: "env_us" inside an env step, "fwd_us" inside a module call (both timed
    apart, so the analysis sets their samples aside), "dist_us" drawing actions (torch.distributions),
    "conv_us" at a line that converts data (the innermost frame), else None (the rest)."""
    walking, depth = frame, 0
    while walking is not None and depth < MAX_DEPTH:
        code = walking.f_code
        place = _place_of.get(code, False)
        if place is False:
            place = _place_of[code] = _place(code.co_filename.replace("\\", "/"))
        if place is not None:
            return place
        walking, depth = walking.f_back, depth + 1
    key = (frame.f_code, frame.f_lineno)
    kind = _kind_of.get(key, False)
    if kind is False:
        kind = _kind_of[key] = "conv_us" if _classify_line(frame.f_code, frame.f_lineno) else None
    return kind


def _place(path: str):
    for fragment, place in PLACES:
        if path.endswith(fragment) or fragment + "/" in path:
            return place
    return None


def _classify_line(code, line: int) -> bool:
    path = code.co_filename.replace("\\", "/")
    if path.endswith("torch/_tensor.py"):
        return code.co_name in TENSOR_CONVERSIONS
    if "/site-packages/" in path or "/lib/python" in path or path.startswith("<"):
        return False
    return bool(CONVERSION.search(linecache.getline(code.co_filename, line)))


def reset_in_child() -> None:
    """A forked process (an AsyncVectorEnv worker) has no phases of its own."""
    _state.update(pending=None, segment=None)


runtime.at_fork_child(reset_in_child)
