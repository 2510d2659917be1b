"""What the trained model is and how it runs, noted once: the model-side fixes rest on it.

After the first optimizer step a forward pre-hook and a forward hook (module-wide, for one step
only) note the outermost modules called: the line that calls each, whether autocast was on, the
memory format of its image-shaped inputs. At the second optimizer step the hooks are gone and the
module holding most of the parameters the optimizer updates is taken as the model: its class,
parameter dtypes and device, whether it is compiled, its convolutions, the optimizer's class and
its foreach/fused settings, the global matmul flags and what the device supports, and the framework
seen on the stack of the first optimizer step (accelerate, Lightning, a Trainer, Ray Train: whose
settings make the model-side changes). One event; the program's steps after the second run as they did.
A loop with no optimizer (parameters updated by hand after backward()) is watched the same way over
its second backward-ended step and concluded at the third: the called module holding most of the
parameters with a gradient is the model.
A program with several optimizers (a GAN's generator and discriminator) may step one whose module
was called before the hooks came on: the hooks then stay for the next step, up to MAX_WATCHED_STEPS,
until a called module holds parameters of the optimizer that steps.

Other probes (the `try` variants) ask to be told the model and optimizer (`on_model`)."""

import time
import weakref

from . import runtime
from .where import locate, user_location
from ...record import kinds

_listeners = []      # (model, optimizer) -> None, called once the model is known
_state = {"steps": 0, "handles": [], "depth": 0, "calls": {}, "done": False}
MAX_OUTERMOST = 64   # outermost modules noted in the one observed step
MAX_WATCHED_STEPS = 6   # optimizer steps watched for a called module the stepping optimizer trains


def on_model(func) -> None:
    _listeners.append(func)


def install(torch) -> None:
    from torch.optim.optimizer import register_optimizer_step_post_hook
    import os
    _state["torch"] = torch
    _state["torch_dir"] = os.path.dirname(os.path.abspath(torch.__file__))
    _state["step_handle"] = register_optimizer_step_post_hook(_after_step)
    from . import steps
    steps.on_backward_step(_after_backward_step)
    runtime.at_fork_child(_reset_in_child)
    runtime.at_cell_start(_rearm)


def _rearm() -> None:
    """A notebook cell's run begins (after the fork-style reset): its model is noted afresh."""
    _state.update(steps=0, depth=0, calls={}, done=False)


def _reset_in_child() -> None:
    _remove_hooks()
    _state.update(steps=0, depth=0, calls={}, done=True)   # a worker trains nothing


def after_next_step(func) -> None:
    """Call func(previous step's seconds, next step's seconds) once the step after the model became
    known is over (a change made then shows its one-off cost in that step)."""
    _state.setdefault("next_step", []).append(func)


def _after_step(optimizer, args, kwargs) -> None:
    now = time.monotonic()
    try:
        if _state["done"]:
            _finish_next_step(now)
            return
        _state["steps"] += 1
        _state.setdefault("times", []).append(now)
        if _state["steps"] == 1:
            _state["framework"] = _framework_on_stack()
            _remove_hooks()         # a watch a backward-only start began
            _watch_one_step()
        else:
            if not _conclude(optimizer) and _state["steps"] < MAX_WATCHED_STEPS:
                return          # none of the modules called trains with this optimizer: watch one more step
            _remove_hooks()
            _state["done"] = True
            if not _state.get("next_step"):
                _stop_watching_steps()
    except Exception:
        _remove_hooks()
        _state["done"] = True
        _stop_watching_steps()


def _after_backward_step(count: int) -> None:
    """A loop with no optimizer (a hand-written update after backward()): the outermost modules are
    watched over its second step, and at the third the one holding most parameters with a gradient
    is the model. No FLOP count follows (it ends at an optimizer step)."""
    if _state["done"] or _state["steps"]:
        return
    try:
        # Every program's first backward comes before its first optimizer step: only a second one
        # without an optimizer step between says the loop has none.
        if count == 2:
            _watch_one_step()
        elif count >= 3:
            _remove_hooks()
            _state["done"] = True
            _conclude(None)
            _stop_watching_steps()
    except Exception:
        _remove_hooks()
        _state["done"] = True


def _framework_on_stack():
    """The framework on the stack of the optimizer's step (accelerate's wrapped optimizer, a
    Trainer's loop, Lightning's fit): the one whose settings make the model-side changes."""
    try:
        return locate((_state["torch_dir"],))["framework"]
    except Exception:
        return None


def _finish_next_step(now: float) -> None:
    callbacks, _state["next_step"] = _state.get("next_step") or [], []
    _stop_watching_steps()
    first, second = _state["times"][-2:]
    for func in callbacks:
        try:
            func(second - first, now - second)
        except Exception:
            pass


def _stop_watching_steps() -> None:
    handle = _state.pop("step_handle", None)
    if handle is not None:
        handle.remove()


def _watch_one_step() -> None:
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
    from . import steps
    compiled = steps.compiled_modules()
    if compiled:
        # A compiled module warns under module-wide hooks: watch the compiled ones themselves.
        _state["handles"] = [m.register_forward_pre_hook(_before_forward) for m in compiled] + \
                            [m.register_forward_hook(_after_forward) for m in compiled]
    else:
        _state["handles"] = [register_module_forward_pre_hook(_before_forward),
                             register_module_forward_hook(_after_forward)]


def _remove_hooks() -> None:
    handles, _state["handles"] = _state["handles"], []
    for handle in handles:
        handle.remove()


def _before_forward(module, inputs):
    depth = _state["depth"]
    _state["depth"] = depth + 1
    if depth == 0 and id(module) not in _state["calls"] and len(_state["calls"]) < MAX_OUTERMOST:
        try:
            _state["calls"][id(module)] = _call_facts(module, inputs)
        except Exception:
            pass
    return None


def _after_forward(module, inputs, output):
    _state["depth"] = max(_state["depth"] - 1, 0)
    return None


def _call_facts(module, inputs) -> dict:
    torch = _state["torch"]
    device = _device_of(module)
    kind = device.split(":")[0] if device else "cpu"
    autocast = None
    try:
        if torch.is_autocast_enabled(kind):
            autocast = str(torch.get_autocast_dtype(kind)).replace("torch.", "")
    except Exception:
        pass
    images = [x for x in inputs if isinstance(x, torch.Tensor) and x.dim() == 4]
    layout = None
    if images:
        x = images[0]
        layout = "channels_last" if x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous() \
            else "nchw"
    return {"module": weakref.ref(module), "where": user_location((_state["torch_dir"],)), "autocast": autocast,
            "input_layout": layout}


def _device_of(module):
    for p in module.parameters():
        return str(p.device)
    return None


def _conclude(optimizer) -> bool:
    """Emit the model event for the called module this optimizer trains most of; False where none."""
    calls, _state["calls"] = _state["calls"], {}
    trained = {id(p) for group in optimizer.param_groups for p in group["params"]} if optimizer is not None else None
    best, best_count = None, 0
    for facts in calls.values():
        module = facts["module"]()
        if module is None:
            continue
        count = sum(1 for p in module.parameters() if (id(p) in trained if trained is not None
                                                        else p.grad is not None))
        if count > best_count:
            best, best_count = (module, facts), count
    if best is None:
        return False
    module, facts = best
    runtime.emit(dict(describe(module, optimizer, _state["torch"]), k=kinds.MODEL, t=time.monotonic(),
                   where=facts["where"], autocast=facts["autocast"], input_layout=facts["input_layout"],
                   framework=_state.get("framework")))
    for listener in _listeners:
        try:
            listener(module, optimizer)
        except Exception:
            pass
    return True


def describe(module, optimizer, torch) -> dict:
    """The facts about a model and its optimizer that decide which model-side fixes apply."""
    dtypes, params, device = {}, 0, None
    for p in module.parameters():
        params += p.numel()
        name = str(p.dtype).replace("torch.", "")
        dtypes[name] = dtypes.get(name, 0) + p.numel()
        device = device or str(p.device)
    inner = getattr(module, "_orig_mod", module)
    convs = sum(1 for m in inner.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Conv3d)))
    compiled = inner is not module or getattr(module, "_compiled_call_impl", None) is not None \
        or hasattr(getattr(module, "forward", None), "_torchdynamo_orig_callable")
    return {"class": type(inner).__name__, "params": params, "dtypes": dtypes, "device": device,
            "compiled": bool(compiled), "convs": convs, "optimizer": _optimizer_facts(optimizer),
            "flags": _flags(torch), "capability": _capability(torch, device),
            "torch_threads": _read(torch.get_num_threads)}


def _optimizer_facts(optimizer):
    if optimizer is None:
        return None         # the program updates the parameters itself
    import inspect
    cls = type(optimizer)
    try:
        accepted = set(inspect.signature(cls.__init__).parameters)
    except (TypeError, ValueError):
        accepted = set()
    defaults = getattr(optimizer, "defaults", {}) or {}
    return {"class": cls.__name__, "module": cls.__module__, "foreach": defaults.get("foreach"),
            "fused": defaults.get("fused"), "takes": sorted(accepted & {"foreach", "fused"})}


#: torch >= 2.9's per-backend fp32 precision (ieee, tf32, bf16; none: not set at this level) as the
#: legacy matmul precision names.
PRECISION_NAMES = dict(ieee="highest", tf32="high", bf16="medium")


def _read(getter):
    """One flag, or None: a flag that cannot be read loses only itself (torch >= 2.9 raises on a
    legacy flag's read once the program set the new precision API)."""
    try:
        return getter()
    except Exception:
        return None


def _flags(torch) -> dict:
    """The float32 matmul and convolution flags. The new API (`torch.backends.cuda.matmul.fp32_precision`,
    `torch.backends.cudnn.conv.fp32_precision`, which resolve their parents' settings) is read first;
    the legacy flags where it says nothing ("none") or does not exist. `precision_api` says which API
    this torch takes ("fp32_precision" from 2.9 on, where PyTorch asks programs not to mix the two)."""
    backends = torch.backends
    matmul = _read(lambda: backends.cuda.matmul.fp32_precision)
    conv = _read(lambda: backends.cudnn.conv.fp32_precision)
    out = {}
    if matmul in PRECISION_NAMES:
        out["matmul_precision"] = PRECISION_NAMES[matmul]
        out["allow_tf32"] = out["matmul_precision"] == "high"
    else:
        out["matmul_precision"] = _read(torch.get_float32_matmul_precision)
        out["allow_tf32"] = _read(lambda: bool(backends.cuda.matmul.allow_tf32))
    if conv in PRECISION_NAMES:
        out["cudnn_allow_tf32"] = PRECISION_NAMES[conv] == "high"
    else:
        out["cudnn_allow_tf32"] = _read(lambda: bool(backends.cudnn.allow_tf32))
    out["cudnn_benchmark"] = _read(lambda: bool(backends.cudnn.benchmark))
    out["precision_api"] = "fp32_precision" if matmul is not None else "legacy"
    return {k: v for k, v in out.items() if v is not None}


def _capability(torch, device):
    if not device or not device.startswith("cuda"):
        return None
    try:
        return list(torch.cuda.get_device_capability(torch.device(device)))
    except Exception:
        return None
