"""Step probe: step boundaries from any optimizer's step(), and the host time from the end of one
step to the first module forward of the next (the data time of hand-written batching loops).

A loop that updates its parameters by hand (`p.data.add_(p.grad, alpha=-lr)`) has no optimizer:
until an optimizer steps, each backward() outside an optimizer's step is a step boundary of its own
kind (`bstep`), which the analysis uses only when no optimizer step was seen. Backward passes inside
`optimizer.step(closure)` (LBFGS calls the closure many times) never count; with gradient
accumulation the optimizer steps are the steps.

The end of a step is taken at the class level, from `Optimizer._optimizer_step_code` (which torch's
step wrapper calls after every `step()`), so that no hook shows among the program's global optimizer
hooks and no handle is made per step; where torch lacks that method, global optimizer step hooks do
it. The forward pre-hook is put in torch's global hook table once per timed step and removes itself
on its first call, so the model runs hook-free the rest of the step. It is a global module hook,
except in a program that uses torch.compile, where it sits on each compiled module (a compiled
module warns while any global hook exists). It is armed only in a loop that took no DataLoader batch
during the step: on each of the first 64 such steps, then on one of each 8 (which one is
scrambled), whose gap is recorded times 8 (it stands for the steps left untimed): the hook sends
that call through nn.Module's slow path, microseconds a step. A loop with several optimizers has it
on every step, as it tells whether a forward came between two optimizers' steps. A program that reads torch's global
forward pre-hooks between a step's end and its next forward may see it there: the one trace of
the probes a program can find, kept because a hook for one call is far cheaper than wrapping every
module's call."""

import os
import signal
import sys
import threading
import time
import weakref

from . import runtime, dataloader, device_wait, memory, self_cost
from .stream import PENDING_LIMIT, Stream
from ...record import kinds

#: Per step: host time before the first forward (f), this thread's CPU in it (fc) and the part of it the
#: host spent waiting for the GPU (fw: blocking copies, `.item()`; probes.device_wait); seconds spent in
#: backward() during the step (b): in DDP, where a rank waits for the others' gradients.
STEP_FIELDS = kinds.columns(kinds.STEP)

# Hooks of each_second run after gaps doubling from this one up to a second, so that a run of a
# second or two is read too.
FIRST_HOOK_GAP_S = 0.125

_state = {"backward_s": 0.0, "stream": None, "bstream": None, "last_end": None, "armed": None, "first_forward": None,
          "eligible": 0, "forward_weight": 1, "forward_pick": 0, "gap_cpu": True, "several_optimizers": False,
          "last_optimizer": None, "count": 0, "register_pre_hook": None, "optimizer_seen": False,
          "in_optimizer": 0, "stop_pending": False,
          "batches_at_step": -1, "stop_at": None,     # stop_at: None unknown yet, 0 nothing (more) to stop at
          "hook_gap": FIRST_HOOK_GAP_S, "hooks_due": 0.0}


_first_step_hooks = runtime.FIRST_STEP_HOOKS     # registered through runtime.at_first_step
_second_hooks = runtime.SECOND_HOOKS             # registered through runtime.each_second


def count() -> int:
    """The steps this process has taken so far."""
    return _state["count"]


def install(torch) -> None:
    from torch.nn.modules import module as module_module

    _state["register_pre_hook"] = module_module.register_module_forward_pre_hook
    _state["global_pre_hooks"] = getattr(module_module, "_global_forward_pre_hooks", None)
    _state["stream"] = Stream(kinds.STEP, STEP_FIELDS)
    _state["bstream"] = Stream(kinds.BSTEP, STEP_FIELDS)
    if not _patch_step_end(torch.optim.Optimizer):
        from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
        register_optimizer_step_pre_hook(_before_step)
        register_optimizer_step_post_hook(_after_step)
    _wrap_backward(torch.Tensor)
    self_cost.install({"step": lambda: _state["count"]})
    runtime.at_close(_flush)
    runtime.at_fork_child(_reset_in_child)


_monotonic = time.monotonic
_thread_time = time.thread_time       # the self-cost probe's clock: CPU, not the machine's other jobs
_tick = runtime.tick
_on_memory = memory.on_step
_loader_state = dataloader.shared_state()    # its "batches": taken from any DataLoader in this process
_memory_state = memory.shared_state()
TICK_EVERY = 63            # steps between asks whether the event file is due a flush, less one (a mask)
#: Loops without a DataLoader: the first forward of each of the first FORWARD_ALWAYS steps is timed,
#: then of one step in FORWARD_EVERY (the hook's slow path through nn.Module costs microseconds).
FORWARD_ALWAYS, FORWARD_EVERY = 64, 8
FORWARD_MASK = FORWARD_EVERY - 1
#: From the gaps this long on, the thread's CPU in a timed gap is read too (what share of the
#: batch's preparation ran on the CPU); a shorter gap is no data wait worth a verdict.
GAP_CPU_FROM_S = 50e-6


def _patch_step_end(optimizer_cls) -> bool:
    """End each step from `_optimizer_step_code`, called by torch's step wrapper after every
    `step()`; the original runs first while a profiler is on (torch's profiler watches its code
    object). Whether a
    backward runs inside a step (an LBFGS closure) is read from the stack, and only until the first
    optimizer step: the wrapper's frame is on it."""
    original = getattr(optimizer_cls, "_optimizer_step_code", None)
    make_wrapper = getattr(optimizer_cls, "profile_hook_step", None)
    # The original does nothing; torch's profiler watches its code object. Called only while a
    # profiler runs (a C call asks), it costs no Python frame a step otherwise.
    profiling = getattr(getattr(getattr(sys.modules.get("torch"), "_C", None), "_autograd", None),
                        "_profiler_enabled", None) or (lambda: True)
    if original is None or make_wrapper is None:
        return False
    try:
        _state["step_wrapper_code"] = make_wrapper(_before_step).__code__
    except Exception:
        return False

    def _optimizer_step_code(self):
        if profiling():
            original(self)  # gpuprof's probe: passes the call through unchanged while a profiler looks
        _end_step(self)

    _optimizer_step_code.__wrapped__ = original
    _optimizer_step_code.__doc__ = original.__doc__
    optimizer_cls._optimizer_step_code = _optimizer_step_code
    return True


def _inside_optimizer_step() -> bool:
    code = _state.get("step_wrapper_code")
    if code is None:
        return bool(_state["in_optimizer"])
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


def _before_step(optimizer, args, kwargs) -> None:
    _state["in_optimizer"] += 1


def _after_step(optimizer, args, kwargs) -> None:
    """The global optimizer step post-hook, where torch lacks `_optimizer_step_code`."""
    _state["in_optimizer"] = max(_state["in_optimizer"] - 1, 0)
    _end_step(optimizer)


#: One step end in this many is timed by the self-cost probe (two thread-CPU reads, which cost more
#: in a training loop than in isolation): fewer than batches, as steps are the more frequent call.
STEP_SAMPLE_EVERY = 64
_SAMPLE_MASK = STEP_SAMPLE_EVERY - 1


def _end_step(optimizer) -> None:
    # On every optimizer step of the program: one call below torch's step wrapper.
    state = _state
    if not state["optimizer_seen"]:
        # The backward passes before the first optimizer step were not steps of their own.
        state["optimizer_seen"] = True
        state["count"] -= state.get("bcount", 0)
    try:
        if state["count"] & _SAMPLE_MASK != _SAMPLE_MASK:
            stop = _record_step(optimizer, _monotonic())
        else:                   # the step this call ends is one the self-cost probe times
            started = _thread_time()
            stop = _record_step(optimizer, _monotonic())
            self_cost.note("step", _thread_time() - started)
    except Exception:
        return
    if stop:
        _stop_program()


_backward_listeners = []      # (backward steps so far) -> None, after each backward of a loop with no optimizer


def on_backward_step(func) -> None:
    """Call func(count) after each backward() that ends a step of a loop no optimizer steps."""
    _backward_listeners.append(func)


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
        if not state["optimizer_seen"] and state["bstream"] is not None and not _inside_optimizer_step():
            try:
                state["bcount"] = state.get("bcount", 0) + 1
                if _record_step(None, _monotonic(), stream=state["bstream"]):
                    state["stop_pending"] = True
            except Exception:
                pass
            for listener in _backward_listeners:
                try:
                    listener(state["bcount"])
                except Exception:
                    pass
        return result

    backward.__wrapped__ = original
    tensor_cls.backward = backward


def _record_step(optimizer, now: float, stream=None) -> bool:
    # On every step of the program: kept to plain local and dict reads, the rare parts behind one
    # comparison each.
    state = _state
    batches = _loader_state["batches"]
    first_forward = state["first_forward"]
    last_optimizer = state["last_optimizer"]
    this_optimizer = id(optimizer) if optimizer is not None else None
    same_batch = batches == state["batches_at_step"]
    if last_optimizer != this_optimizer and last_optimizer is not None:
        state["several_optimizers"] = True       # from now on every eligible step is timed: see below
        if first_forward is None and same_batch:
            # A second optimizer stepping with no forward in between (GANs, per-group optimizers):
            # the same training step, not a new one.
            state["last_end"] = now
            return False
    if state["armed"] is not None:
        _disarm()
    stream = stream or state["stream"]
    rows = stream.pending
    backward, state["backward_s"] = state["backward_s"], 0.0
    last_end = state["last_end"]
    if first_forward is None or last_end is None:
        rows.append((now, None, None, backward, None))
    else:
        # The host time before the forward and this thread's CPU in it, times the steps it stands for.
        weight, cpu = state["forward_weight"], state["forward_cpu"]
        rows.append((now, (first_forward - last_end) * weight, cpu * weight if cpu is not None else None,
                     backward, state["forward_held"] * weight))
    if first_forward is not None:
        state["first_forward"] = None
    if len(rows) >= PENDING_LIMIT:
        stream.drain()
    count = state["count"] = state["count"] + 1
    if now >= state["hooks_due"] or count == 1:
        _run_hooks(state, now)
    if _memory_state["cuda"] is not None or not 0.0 <= now - _memory_state["rss_at"] < memory.RSS_EVERY_S \
            or (this_optimizer != last_optimizer and this_optimizer not in _memory_state["seen"]):
        _on_memory(optimizer, now)      # (asked here first: a call per step costs more than the question)
    if not count & TICK_EVERY:
        _tick(now)
    if this_optimizer != last_optimizer:
        state["last_optimizer"] = this_optimizer
    # A step fed by a DataLoader has its data wait measured there; the forward hook (a slow path
    # through nn.Module.__call__) is armed only for loops that took no batch during the last step.
    if same_batch:
        # The first FORWARD_ALWAYS such steps are all timed, then one of each FORWARD_EVERY, whose
        # row stands for the others; which one is scrambled, so that work every 2nd, 4th or 8th step
        # is neither always nor never seen.
        # With several optimizers the hook tells one optimizer's step from the next one's (a forward
        # between them, or none): it is armed on every step there.
        eligible = state["eligible"] = state["eligible"] + 1
        sampled = eligible > FORWARD_ALWAYS and not state["several_optimizers"]
        if not sampled or eligible == state["forward_pick"]:
            state["forward_weight"] = FORWARD_EVERY if sampled else 1
            _arm()
        if not eligible & FORWARD_MASK:
            state["forward_pick"] = eligible + 1 + ((eligible * 2654435761) >> 13 & FORWARD_MASK)
    else:
        state["batches_at_step"] = batches
    # A timed gap starts when the program has its thread back: gpuprof's own work at this step's end
    # (rows drained, the each-second hooks, a memory reading, a flush, the arming) is not the
    # batch's wait, and on a sampled step it would count eight times over.
    state["last_end"] = now if state["armed"] is None else _monotonic()
    if state["stop_at"] != 0:
        return _check_step_limit()
    return False


def _run_hooks(state: dict, now: float) -> None:
    """The rare part of a step's end: the first step's hooks, and those of each_second when due."""
    if now >= state["hooks_due"]:
        state["hook_gap"] = min(state["hook_gap"] * 2, 1.0)
        state["hooks_due"] = now + state["hook_gap"]
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


_compiled = weakref.WeakSet()      # torch.compile'd modules alive in this process
_compiled_seen = [False]           # any module ever compiled here (cheaper to ask than the set)


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
            _compiled_seen[0] = True
        except TypeError:
            pass

    __init__.__wrapped__ = original
    cls.__init__ = __init__


def note_compiled(module) -> None:
    """A module whose forward was compiled from outside (`gpuprof try --fix compile`)."""
    try:
        _compiled.add(module)
        _compiled_seen[0] = True
    except TypeError:
        pass


def compiled_modules() -> list:
    return list(_compiled)


_ARM_KEY = -1      # the forward pre-hook's key in torch's global table (torch's own keys count up from 0)


def _arm() -> None:
    _state["arm_held"] = device_wait.held[0]
    _state["arm_held_cpu"] = device_wait.held_cpu[0]
    compiled = list(_compiled) if _compiled_seen[0] else None
    cpu = _thread_time() if _state["gap_cpu"] else None
    if compiled:
        _state["arm_cpu"] = cpu
        _state["armed"] = [module.register_forward_pre_hook(_first_forward) for module in compiled]
        return
    table = _state.get("global_pre_hooks")
    if table is not None and _ARM_KEY not in table:
        # Straight into the table: no handle object per step.
        table[_ARM_KEY] = _first_forward
        _state["arm_cpu"] = cpu
        _state["armed"] = _ARM_KEY
        return
    register = _state["register_pre_hook"]
    if register is not None:
        _state["arm_cpu"] = cpu
        _state["armed"] = [register(_first_forward)]


def _disarm() -> None:
    handles, _state["armed"] = _state["armed"], None
    if handles == _ARM_KEY:
        _state["global_pre_hooks"].pop(_ARM_KEY, None)
        return
    for handle in handles or ():
        handle.remove()


def _first_forward(module, inputs):
    state = _state
    if state["first_forward"] is None:
        now = state["first_forward"] = _monotonic()
        arm_cpu = state.get("arm_cpu")
        # The thread's CPU before the forward, less what it spun away waiting for the device.
        state["forward_cpu"] = max(_thread_time() - arm_cpu - (device_wait.held_cpu[0] - state.get("arm_held_cpu", 0.0)),
                                   0.0) if arm_cpu is not None else None
        state["forward_held"] = device_wait.held[0] - state.get("arm_held", 0.0)
        # The thread's CPU in the next gap is read (two system calls, microseconds each in a
        # training loop) only while the gaps are long enough for it to matter.
        last_end = state["last_end"]
        state["gap_cpu"] = state["eligible"] <= FORWARD_ALWAYS or last_end is None or \
            now - last_end >= GAP_CPU_FROM_S
    _disarm()           # the pre-hooks stay registered for one call only
    return None


def _start_sampling() -> None:
    """Sample where this (training) thread spends its steps, from the first step on."""
    if runtime.settings().get("sample_stacks", True) is False:
        return
    try:
        from . import sampling
        sampling.start(threading.get_ident(), threading.get_native_id(), _state)
    except Exception:
        pass


def _check_step_limit() -> bool:
    """With `gpuprof run --steps N`: True once N measured steps are done (the first step, start-up,
    and the warm-up steps are not measured)."""
    stop_at = _state["stop_at"]
    if stop_at is None:
        config = runtime.settings()
        limit = config.get("max_steps")
        stop_at = _state["stop_at"] = int(limit) + int(config.get("warmup_steps") or 0) + 1 if limit else 0
    if stop_at and _state["count"] >= stop_at:
        _state["stop_at"] = 0        # once
        runtime.emit({"k": kinds.STEP_LIMIT, "t": time.monotonic(), "steps": int(runtime.settings()["max_steps"]),
                      "total": _state["count"]})
        _flush()
        runtime.flush()
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
    # Never an import here: a thread of the parent may have held an import lock at the fork, and
    # the child would wait on it for ever. The sampler is reset only where the parent loaded it.
    sampling = sys.modules.get(__package__ + ".sampling")
    try:
        if sampling is not None:
            sampling.reset_in_child()
    except Exception:
        pass
    _state.update(stream=Stream(kinds.STEP, STEP_FIELDS), bstream=Stream(kinds.BSTEP, STEP_FIELDS), last_end=None, backward_s=0.0,
                  armed=None, first_forward=None, last_optimizer=None, count=0, batches_at_step=-1,
                  optimizer_seen=False, in_optimizer=0, stop_pending=False, bcount=0, hook_gap=FIRST_HOOK_GAP_S,
                  eligible=0, forward_weight=1, forward_pick=0, gap_cpu=True, several_optimizers=False,
                  hooks_due=0.0,
                  stop_at=None)
