"""Step probe: step boundaries from any optimizer's step(), and the host time from the end of one
step to the first module forward of the next (the data time of hand-written batching loops).

Uses torch's global optimizer step hooks; the forward pre-hook is registered once per step and
removes itself on its first call, so the model runs hook-free the rest of the step. It is a global
module hook, except in a program that uses torch.compile, where it sits on each compiled module
(a compiled module warns while any global hook exists)."""

import os
import signal
import threading
import time
import weakref

from . import boot, dataloader
from .stream import Stream

_state = {"stream": None, "last_end": None, "armed": None, "first_forward": None,
          "last_optimizer": None, "count": 0, "register_pre_hook": None,
          "batches_at_step": -1, "stop_at": None}     # stop_at: None unknown yet, 0 nothing (more) to stop at


def install(torch) -> None:
    from torch.nn.modules.module import register_module_forward_pre_hook
    from torch.optim.optimizer import register_optimizer_step_post_hook

    _state["register_pre_hook"] = register_module_forward_pre_hook
    _state["stream"] = Stream("step", ("f", "fc"))
    register_optimizer_step_post_hook(_after_step)
    boot.at_close(_flush)
    boot.at_fork_child(_reset_in_child)


_monotonic = time.monotonic
_tick = boot.tick
_batches_consumed = dataloader.batches_consumed


def _after_step(optimizer, args, kwargs) -> None:
    try:
        stop = _record_step(optimizer, _monotonic())
    except Exception:
        return
    if stop:
        _stop_program()


def _record_step(optimizer, now: float) -> None:
    # On every step of the program: kept to plain local and dict reads.
    state = _state
    batches = _batches_consumed()
    first_forward = state["first_forward"]
    last_optimizer = state["last_optimizer"]
    if (first_forward is None and last_optimizer is not None and last_optimizer != id(optimizer)
            and batches == state["batches_at_step"]):
        # A second optimizer stepping with no forward in between (GANs, per-group optimizers):
        # the same training step, not a new one.
        state["last_end"] = now
        return False
    if state["armed"] is not None:
        _disarm()
    last_end = state["last_end"]
    if first_forward is not None and last_end is not None:
        # The host time before the forward, and this thread's CPU in it.
        state["stream"].add(now, first_forward - last_end, state["forward_cpu"])
    else:
        state["stream"].add(now, None, None)
    state["count"] += 1
    state["last_end"] = now
    state["last_optimizer"] = id(optimizer)
    state["first_forward"] = None
    # A step fed by a DataLoader has its data wait measured there; the forward hook (a slow path
    # through nn.Module.__call__) is armed only for loops that took no batch during the last step.
    if batches == state["batches_at_step"]:
        _arm()
    state["batches_at_step"] = batches
    _tick(now)
    if state["stop_at"] != 0:
        return _check_step_limit()
    return False


_compiled = weakref.WeakSet()      # torch.compile'd modules alive in this process


def watch_compiled(eval_frame) -> None:
    """Note every module torch.compile makes: a compiled module warns on each call while any
    global module hook exists, so a program that compiles is timed with hooks on its compiled
    modules instead."""
    cls = eval_frame.OptimizedModule
    original = cls.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        try:
            _compiled.add(self)
        except TypeError:
            pass

    __init__.__wrapped__ = original
    cls.__init__ = __init__


def _arm() -> None:
    compiled = list(_compiled)
    if compiled:
        _state["arm_cpu"] = time.thread_time()
        _state["armed"] = [module.register_forward_pre_hook(_first_forward) for module in compiled]
        return
    register = _state["register_pre_hook"]
    if register is not None:
        _state["arm_cpu"] = time.thread_time()
        _state["armed"] = [register(_first_forward)]


def _disarm() -> None:
    handles, _state["armed"] = _state["armed"], None
    for handle in handles or ():
        handle.remove()


def _first_forward(module, inputs):
    if _state["first_forward"] is None:
        _state["first_forward"] = time.monotonic()
        _state["forward_cpu"] = time.thread_time() - _state.get("arm_cpu", 0.0)
    _disarm()           # the pre-hooks stay registered for one call only
    return None


def _check_step_limit() -> bool:
    """With `gpuprof run --steps N`: True once N measured steps are done (the first step, start-up,
    and the warm-up steps are not measured)."""
    stop_at = _state["stop_at"]
    if stop_at is None:
        config = boot.settings()
        limit = config.get("max_steps")
        stop_at = _state["stop_at"] = int(limit) + int(config.get("warmup_steps") or 0) + 1 if limit else 0
    if stop_at and _state["count"] >= stop_at:
        _state["stop_at"] = 0        # once
        boot.emit({"k": "step_limit", "t": time.monotonic(), "steps": int(boot.settings()["max_steps"]),
                   "total": _state["count"]})
        _flush()
        boot.flush()
        return True
    return False


def _stop_program() -> None:
    """End the program at this step boundary as `sys.exit(0)` would: the step is complete, the
    program's `finally` blocks and atexit handlers run, nothing is printed, the status is 0 (so a
    launcher such as torchrun sees every rank succeed). Training on another thread than the main
    one gets a SIGINT instead, which reaches the main thread as a Ctrl-C would."""
    if threading.current_thread() is threading.main_thread():
        raise SystemExit(0)
    os.kill(os.getpid(), signal.SIGINT)


def _flush() -> None:
    if _state["stream"] is not None:
        _state["stream"].flush()


def _reset_in_child() -> None:
    _state.update(stream=Stream("step", ("f", "fc")), last_end=None, armed=None, first_forward=None,
                  last_optimizer=None, count=0, batches_at_step=-1)
