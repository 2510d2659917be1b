"""Step probe: step boundaries from any optimizer's step(), and the host time from the end of one
step to the first module forward of the next (the data time of hand-written batching loops).

A loop that updates its parameters by hand (`p.data.add_(p.grad, alpha=-lr)`) has no optimizer:
until an optimizer steps, each backward() outside an optimizer's step is a step boundary of its own
kind (`bstep`), which the analysis uses only when no optimizer step was seen. Backward passes inside
`optimizer.step(closure)` (LBFGS calls the closure many times) never count; with gradient
accumulation the optimizer steps are the steps.

Uses torch's global optimizer step hooks; the forward pre-hook is registered once per step and
removes itself on its first call, so the model runs hook-free the rest of the step. It is a global
module hook, except in a program that uses torch.compile, where it sits on each compiled module
(a compiled module warns while any global hook exists)."""

import os
import signal
import threading
import time
import weakref

from . import boot, dataloader, device_wait, memory
from .stream import Stream
from ..record import kinds

#: Per step: host time before the first forward (f), this thread's CPU in it (fc) and the part of it the
#: host spent waiting for the GPU (fw: blocking copies, `.item()`; probes.device_wait); seconds spent in
#: backward() during the step (b): in DDP, where a rank waits for the others' gradients.
STEP_FIELDS = kinds.columns(kinds.STEP)

# Hooks of each_second run after gaps doubling from this one up to a second, so that a run of a
# second or two is read too.
FIRST_HOOK_GAP_S = 0.125

_state = {"backward_s": 0.0, "stream": None, "bstream": None, "last_end": None, "armed": None, "first_forward": None,
          "last_optimizer": None, "count": 0, "register_pre_hook": None, "optimizer_seen": False,
          "in_optimizer": 0, "stop_pending": False,
          "batches_at_step": -1, "stop_at": None,     # stop_at: None unknown yet, 0 nothing (more) to stop at
          "hook_gap": FIRST_HOOK_GAP_S}


_first_step_hooks = []     # run once, after the first step (the program's functions exist by then)
_second_hooks = []         # run after a step at most once a second (reading what a library keeps of itself)


def at_first_step(func) -> None:
    _first_step_hooks.append(func)


def each_second(func) -> None:
    _second_hooks.append(func)


def install(torch) -> None:
    from torch.nn.modules.module import register_module_forward_pre_hook
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    _state["register_pre_hook"] = register_module_forward_pre_hook
    _state["stream"] = Stream(kinds.STEP, STEP_FIELDS)
    _state["bstream"] = Stream(kinds.BSTEP, STEP_FIELDS)
    register_optimizer_step_pre_hook(_before_step)
    register_optimizer_step_post_hook(_after_step)
    _wrap_backward(torch.Tensor)
    boot.at_close(_flush)
    boot.at_fork_child(_reset_in_child)


_monotonic = time.monotonic
_tick = boot.tick
_on_memory = memory.on_step
_batches_consumed = dataloader.batches_consumed


def _before_step(optimizer, args, kwargs) -> None:
    _state["in_optimizer"] += 1


def _after_step(optimizer, args, kwargs) -> None:
    _state["in_optimizer"] = max(_state["in_optimizer"] - 1, 0)
    if not _state["optimizer_seen"]:
        # The backward passes before the first optimizer step were not steps of their own.
        _state["optimizer_seen"] = True
        _state["count"] -= _state.get("bcount", 0)
    try:
        stop = _record_step(optimizer, _monotonic())
    except Exception:
        return
    if stop:
        _stop_program()


def _wrap_backward(tensor_cls) -> None:
    """backward() as a step boundary for loops without an optimizer; the step limit stops such a
    loop at the start of the next backward, once the update after the last one is done."""
    original = tensor_cls.backward

    def backward(self, *args, **kwargs):
        state = _state
        if state["stop_pending"]:
            state["stop_pending"] = False
            _stop_program()
        started = _monotonic()
        result = original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        state["backward_s"] += _monotonic() - started
        if not state["optimizer_seen"] and not state["in_optimizer"] and state["bstream"] is not None:
            try:
                state["bcount"] = state.get("bcount", 0) + 1
                if _record_step(None, _monotonic(), stream=state["bstream"]):
                    state["stop_pending"] = True
            except Exception:
                pass
        return result

    backward.__wrapped__ = original
    tensor_cls.backward = backward


def _record_step(optimizer, now: float, stream=None) -> None:
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
    stream = stream or state["stream"]
    backward, state["backward_s"] = state["backward_s"], 0.0
    if first_forward is not None and last_end is not None:
        # The host time before the forward, and this thread's CPU in it.
        stream.add(now, first_forward - last_end, state["forward_cpu"], backward, state["forward_held"])
    else:
        stream.add(now, None, None, backward, None)
    state["count"] += 1
    if _second_hooks and now - state.get("hooked", 0.0) >= state["hook_gap"]:
        state["hooked"] = now
        state["hook_gap"] = min(state["hook_gap"] * 2, 1.0)
        for hook in _second_hooks:
            try:
                hook(now)
            except Exception:
                pass
    if state["count"] == 1:
        _start_sampling()
        hooks, _first_step_hooks[:] = list(_first_step_hooks), []     # once, even if the count is revised
        for hook in hooks:
            try:
                hook()
            except Exception:
                pass
    _on_memory(optimizer, now)
    state["last_end"] = now
    state["last_optimizer"] = id(optimizer) if optimizer is not None else None
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
        original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        try:
            _compiled.add(self)
        except TypeError:
            pass

    __init__.__wrapped__ = original
    cls.__init__ = __init__


def note_compiled(module) -> None:
    """A module whose forward was compiled from outside (`gpuprof try --fix compile`)."""
    try:
        _compiled.add(module)
    except TypeError:
        pass


def compiled_modules() -> list:
    return list(_compiled)


def _arm() -> None:
    _state["arm_held"] = device_wait.held[0]
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
        _state["forward_held"] = device_wait.held[0] - _state.get("arm_held", 0.0)
    _disarm()           # the pre-hooks stay registered for one call only
    return None


def _start_sampling() -> None:
    """Sample where this (training) thread spends its steps, from the first step on."""
    if boot.settings().get("sample_stacks", True) is False:
        return
    try:
        from . import sampling
        sampling.start(threading.get_ident(), threading.get_native_id())
    except Exception:
        pass


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
        boot.emit({"k": kinds.STEP_LIMIT, "t": time.monotonic(), "steps": int(boot.settings()["max_steps"]),
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
    for name in ("stream", "bstream"):
        if _state[name] is not None:
            _state[name].flush()


def _reset_in_child() -> None:
    try:
        from . import sampling
        sampling.reset_in_child()
    except Exception:
        pass
    _state.update(stream=Stream(kinds.STEP, STEP_FIELDS), bstream=Stream(kinds.BSTEP, STEP_FIELDS), last_end=None, backward_s=0.0,
                  armed=None, first_forward=None, last_optimizer=None, count=0, batches_at_step=-1,
                  optimizer_seen=False, in_optimizer=0, stop_pending=False, bcount=0, hook_gap=FIRST_HOOK_GAP_S,
                  stop_at=None)
