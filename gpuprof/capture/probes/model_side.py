"""Model-side variants for `gpuprof try`: the changes a compute-bound run's fixes make, applied from
outside the program.

- `autocast`, `compile_model`, `channels_last`: applied to the trained model once gpuprof.capture.probes.model_facts
  knows it (after the second optimizer step, inside try's warm-up), on the model instance alone:
  its forward runs under torch.autocast, or compiled by torch.compile (the module's hooks stay
  outside the compiled code), or the model and its image inputs are made channels-last.
- `optimizer_foreach` / `optimizer_fused`: every optimizer the program builds gets the option, as if
  the program had passed it (before any optimizer state exists).
- `allow_tf32` / `cudnn_benchmark`: the global flags, set when torch is imported. TF32 through the
  precision API this torch takes: from torch 2.9 on, `torch.backends.cuda.matmul.fp32_precision` and
  `torch.backends.cudnn.conv.fp32_precision` (torch raises on a legacy flag's read once the two APIs
  disagree, so the legacy flags are left alone: they are what the fix's snippet sets too); before,
  the legacy `allow_tf32` flags.

A change that cannot be made is reported (a `variant` event with its error), never raised. A change
that breaks training fails the variant with its reason: a compile that raises (the model then runs
as it was), a loss that becomes NaN or infinite."""

import os
import time

from . import runtime, model_facts
from .where import user_location
from ...record import kinds

LOSS_CHECK_EVERY = 4       # backward calls between checks of the loss (each check reads one number)
_state = {"failed": False}


def install(torch, variant: dict) -> None:
    if variant.get("allow_tf32") or variant.get("cudnn_benchmark"):
        _set_flags(torch, variant)
    if variant.get("optimizer_foreach") or variant.get("optimizer_fused"):
        _wrap_optimizers(torch, "fused" if variant.get("optimizer_fused") else "foreach")
    wanted = {k: True for k in ("autocast", "compile_model", "channels_last") if variant.get(k)}
    if wanted:
        model_facts.on_model(lambda model, optimizer: _apply(torch, model, wanted))
    _watch_loss(torch)


def _emit(applied: dict, error: str = None, failed: bool = False, **extra) -> None:
    event = {"k": kinds.VARIANT, "t": time.monotonic(), "where": None, "l": None,
             "applied": {} if error else applied, "error": error}
    if failed:
        event["failed"] = True
    event.update(extra)
    runtime.emit(event)


def fail(reason: str) -> None:
    """The variant broke training: said once."""
    if not _state["failed"]:
        _state["failed"] = True
        _emit({}, error=reason, failed=True)


# -- global flags -------------------------------------------------------------------------------
#: The per-backend precision that lets float32 matmuls and convolutions use TF32: the one that
#: model_facts reads as the legacy "high".
TF32 = next(value for value, legacy in model_facts.PRECISION_NAMES.items() if legacy == "high")


def precision_api(torch) -> str:
    """"fp32_precision" where this torch has the per-backend precision API (2.9 and later), else
    "legacy" (as probes.model_facts reports it)."""
    try:
        torch.backends.cuda.matmul.fp32_precision
    except Exception:
        return "legacy"
    return "fp32_precision"


def _allow_tf32(torch) -> str:
    """TF32 for float32 matmuls and convolutions, through one API only; which one it used."""
    backends = torch.backends
    if precision_api(torch) == "fp32_precision":
        backends.cuda.matmul.fp32_precision = TF32
        backends.cudnn.conv.fp32_precision = TF32
        return "fp32_precision"
    backends.cuda.matmul.allow_tf32 = True
    backends.cudnn.allow_tf32 = True
    return "legacy"


def _set_flags(torch, variant: dict) -> None:
    applied, extra = {}, {}
    try:
        if variant.get("allow_tf32"):
            extra["precision_api"] = _allow_tf32(torch)
            applied["allow_tf32"] = True
        if variant.get("cudnn_benchmark"):
            torch.backends.cudnn.benchmark = True
            applied["cudnn_benchmark"] = True
        _emit(applied, **extra)
    except Exception as exc:
        _emit({}, error=f"{exc.__class__.__name__}: {exc}")


# -- optimizers ---------------------------------------------------------------------------------
def _wrap_optimizers(torch, option: str) -> None:
    import inspect
    cls = torch.optim.Optimizer
    original = cls.__init__
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    noted = set()

    def __init__(self, params, defaults, *args, **kwargs):
        error = None
        try:
            kind = type(self)
            if option in inspect.signature(kind.__init__).parameters and isinstance(defaults, dict):
                other = "foreach" if option == "fused" else "fused"
                defaults = dict(defaults, **{option: True})
                if other in defaults:
                    defaults[other] = None if other == "fused" else False
            else:
                error = f"{kind.__name__} takes no {option} option"
        except Exception as exc:
            error = f"{exc.__class__.__name__}: {exc}"
        original(self, params, defaults, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        try:
            if type(self) not in noted:
                noted.add(type(self))
                _emit({f"optimizer_{option}": True}, error=error, where=user_location((torch_dir,)))
        except Exception:
            pass

    __init__.__wrapped__ = original
    cls.__init__ = __init__


# -- the model ----------------------------------------------------------------------------------
def _apply(torch, model, wanted: dict) -> None:
    try:
        device = next((str(p.device) for p in model.parameters()), "cpu")
        kind = device.split(":")[0]
        if wanted.get("channels_last"):
            _channels_last(torch, model)
        if wanted.get("autocast"):
            _autocast(torch, model, kind)
        if wanted.get("compile_model"):
            _compile(torch, model)
        _emit(dict(wanted))
    except Exception as exc:
        _emit({}, error=f"{exc.__class__.__name__}: {exc}")


def _channels_last(torch, model) -> None:
    model.to(memory_format=torch.channels_last)

    def to_channels_last(module, inputs):
        return tuple(x.contiguous(memory_format=torch.channels_last)
                     if isinstance(x, torch.Tensor) and x.dim() == 4 else x for x in inputs)

    model.register_forward_pre_hook(to_channels_last)


def _autocast(torch, model, kind: str) -> None:
    dtype = torch.bfloat16
    if kind == "cuda" and not torch.cuda.is_bf16_supported():
        dtype = torch.float16
    inner = model.forward

    def forward(*args, **kwargs):
        with torch.autocast(kind, dtype=dtype):
            return inner(*args, **kwargs)

    model.forward = forward


def _compile(torch, model) -> None:
    """The model's forward compiled; the first compiled step's extra time is the compile time."""
    from . import steps
    inner = model.forward
    compiled = torch.compile(inner)
    state = {"broken": False, "worked": False}

    def forward(*args, **kwargs):
        if state["broken"]:
            return inner(*args, **kwargs)
        try:
            result = compiled(*args, **kwargs)
        except Exception as exc:
            if state["worked"]:
                raise
            state["broken"] = True
            fail(f"torch.compile failed: {exc.__class__.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                 .rstrip(": "))
            return inner(*args, **kwargs)
        state["worked"] = True
        return result

    model.forward = forward
    steps.note_compiled(model)
    model_facts.after_next_step(
        lambda before, during: _emit({"compile_model": True}, compile_s=round(max(during - before, 0.0), 3)))


# -- the loss -----------------------------------------------------------------------------------
def _watch_loss(torch) -> None:
    """A loss that becomes NaN or infinite under the change fails the variant (checked every few
    backward calls, on one-element tensors only)."""
    original = torch.Tensor.backward
    state = {"calls": 0}

    def backward(self, *args, **kwargs):
        state["calls"] += 1
        if not _state["failed"] and state["calls"] % LOSS_CHECK_EVERY == 0:
            try:
                if self.numel() == 1 and not bool(torch.isfinite(self.detach()).all()):
                    fail(f"the loss became {float(self.detach()):g} at backward call {state['calls']}")
            except Exception:
                pass
        return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged

    backward.__wrapped__ = original
    torch.Tensor.backward = backward
