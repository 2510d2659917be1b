"""Step probe: step boundaries from any optimizer's step(), and the host time from the end of one
step to the first module forward of the next (the data time of hand-written batching loops).

Uses torch's global optimizer step hooks; the global forward pre-hook is registered once per step
and removes itself on its first call, so the model runs hook-free the rest of the step."""

import os
import signal
import threading
import time

from gpuprof.probes import boot, dataloader
from gpuprof.probes.stream import Stream

_state = {"stream": None, "last_end": None, "armed": None, "first_forward": None,
          "last_optimizer": None, "count": 0, "register_pre_hook": None, "stopping": False,
          "batches_at_step": -1}


def install(torch) -> None:
    from torch.nn.modules.module import register_module_forward_pre_hook
    from torch.optim.optimizer import register_optimizer_step_post_hook

    _state["register_pre_hook"] = register_module_forward_pre_hook
    _state["stream"] = Stream("step")
    register_optimizer_step_post_hook(_after_step)
    boot.at_close(_flush)
    boot.at_fork_child(_reset_in_child)


def _after_step(optimizer, args, kwargs) -> None:
    try:
        _record_step(optimizer, time.monotonic())
    except Exception:
        pass


def _record_step(optimizer, now: float) -> None:
    merged = (_state["last_optimizer"] is not None and _state["last_optimizer"] != id(optimizer)
              and _state["first_forward"] is None
              and dataloader.batches_consumed() == _state["batches_at_step"])
    if merged:
        # A second optimizer stepping with no forward in between (GANs, per-group optimizers):
        # the same training step, not a new one.
        _state["last_end"] = now
        return
    _disarm()
    values = {}
    if _state["first_forward"] is not None and _state["last_end"] is not None:
        values["f"] = _state["first_forward"] - _state["last_end"]      # host time before the forward
        values["fc"] = _state["forward_cpu"]                             # this thread's CPU in it
    _state["count"] += 1
    _state["stream"].add(now, **values)
    _state["last_end"] = now
    _state["last_optimizer"] = id(optimizer)
    _state["first_forward"] = None
    # A step fed by a DataLoader has its data wait measured there; the forward hook (a slow path
    # through nn.Module.__call__) is armed only for loops that took no batch during the last step.
    batches = dataloader.batches_consumed()
    if batches == _state["batches_at_step"]:
        _arm()
    _state["batches_at_step"] = batches
    _check_step_limit()


def _arm() -> None:
    register = _state["register_pre_hook"]
    if register is not None:
        _state["arm_cpu"] = time.thread_time()
        _state["armed"] = register(_first_forward)


def _disarm() -> None:
    handle, _state["armed"] = _state["armed"], None
    if handle is not None:
        handle.remove()


def _first_forward(module, inputs):
    if _state["first_forward"] is None:
        _state["first_forward"] = time.monotonic()
        _state["forward_cpu"] = time.thread_time() - _state.get("arm_cpu", 0.0)
    handle = _state["armed"]
    if handle is not None:
        handle.remove()     # the global pre-hook stays registered for one call only
    return None


def _check_step_limit() -> None:
    """With `gpuprof run --steps N`, end the program politely after N measured steps, as a
    user's Ctrl-C would: one SIGINT to this process (the main training process only)."""
    config = boot.settings()
    limit = config.get("max_steps")
    if not limit or _state["stopping"]:
        return
    # The first step (start-up) and the warm-up steps are not measured: stop after N measured ones.
    if _state["count"] >= int(limit) + int(config.get("warmup_steps") or 0) + 1:
        _state["stopping"] = True
        boot.emit({"k": "step_limit", "t": time.monotonic(), "steps": int(limit), "total": _state["count"]})
        _flush()
        boot.flush()
        # Sent from another thread, the SIGINT interrupts the program wherever it is, as a Ctrl-C
        # would, instead of raising KeyboardInterrupt inside this hook.
        threading.Thread(target=_interrupt, args=(os.getpid(),), name="gpuprof-steps", daemon=True).start()


def _interrupt(pid: int) -> None:
    time.sleep(0.01)        # let the hook return first
    os.kill(pid, signal.SIGINT)


def _flush() -> None:
    if _state["stream"] is not None:
        _state["stream"].flush()


def _reset_in_child() -> None:
    _state.update(stream=Stream("step"), last_end=None, armed=None, first_forward=None,
                  last_optimizer=None, count=0, batches_at_step=-1)
