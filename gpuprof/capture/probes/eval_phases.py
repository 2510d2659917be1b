"""Evaluation phases without a second DataLoader: a trainable model switched to eval mode
(`model.eval()`, which is `model.train(False)`) and back (`model.train()`).

Only the outermost call counts (Module.train recurses into the children), only a model with a
parameter that requires a gradient opens a phase (a frozen teacher is never trained), and a phase
is written when the same model goes back to training: a model left in eval mode writes nothing.
A per-step `model.train()` (as Hugging Face's Trainer calls it) costs one dictionary look-up."""

import threading
import time

from ...record import kinds
from . import runtime

_opened = {}                 # id(model) -> when it went to eval mode
_local = threading.local()


def _trainable(module) -> bool:
    return next((True for p in module.parameters() if p.requires_grad), False)


def _note(module, mode: bool, now: float) -> None:
    key = id(module)
    if not mode:
        if key not in _opened and _trainable(module):
            _opened[key] = now
    elif key in _opened:
        runtime.emit({"k": kinds.EVAL_PHASE, "t0": _opened.pop(key), "t": now})


def install(torch) -> None:
    cls = torch.nn.Module
    original = cls.train

    def train(self, mode=True):
        outermost = not getattr(_local, "inside", False)
        _local.inside = True
        try:
            result = original(self, mode)  # gpuprof's probe: passes the call through unchanged
        finally:
            if outermost:
                _local.inside = False
        if outermost:
            try:
                _note(self, bool(mode), time.monotonic())
            except Exception:
                pass
        return result

    train.__wrapped__ = original
    cls.train = train
