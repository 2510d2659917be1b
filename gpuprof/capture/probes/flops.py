"""Counts the floating-point operations of one training step, once per run, off the hot path.

Once the model is known (at the end of the second optimizer step, `model_facts.on_model`), the
third step runs under a counting dispatch mode: every aten op the step runs (forward, backward, on
any thread autograd uses) passes through unchanged, and the ones with a FLOP formula
(`torch.utils.flop_counter`'s, plus the CPU flash-attention kernels) add their count. The
mode leaves at the pre-hook of the same optimizer's next step, so that optimizer's own arithmetic is
not counted and a program of several optimizers (a GAN) has one whole iteration counted; where
nothing was counted by then, a closure (Lightning's, LBFGS's) runs the forward and backward inside
step(), and the mode leaves when that step ends.
Ops with no formula that are not trivially free (element-wise, views, copies, reductions) are
named as uncounted: the count's coverage. Every op dispatched is counted too (`ops`): the host's
share of a GPU step is about that many launches (advise/math_modes.py). The mode never decomposes or
re-runs an op, so the step computes the same numbers; its cost is a Python call per op for that one step.

On a CPU, where an op returns when it is done, one later iteration (at least TIMED_AFTER steps
after the count, at the first step end the step probe's once-a-second hooks see past them: past
the first steps' warm-up, when a CPU step can take 5-20x its settled time while oneDNN and the
allocator warm up) runs under a second mode that times each op with a FLOP formula
(matmuls, convolutions, attention): a `flops` event with `op_times` and `seconds_by_op`, the share
of the step the CPU's mixed-precision estimate moves to bf16.

Transformer-shaped models also get the usual per-token estimate, 6N + 12·L·H·Q·T, from the model's
attention modules and the token shape the step's embeddings (or attention inputs) saw.

Compiled models, DistributedDataParallel/FSDP/DataParallel wrappers are not counted (the mode
would see graphs or other threads' replicas, not the step): the event says why."""

import time

from . import runtime
from ...record import kinds

COUNTED_STEP = 3
TIMED_AFTER = 8          # optimizer steps between the count and the iteration whose ops are timed (CPU only)
TOP_OPS = 8
#: Op-name parts of arithmetic that is not trivially free: such an op with no formula leaves the count short.
HEAVY_PARTS = ("mm", "conv", "attention", "linalg", "fft", "einsum", "lstm", "gru", "rnn", "cholesky", "svd",
               "matmul", "triangular", "linear", "bilinear", "eig", "lu_", "_qr", "tensordot", "int4pack", "int8pack")
HEADS = ("num_heads", "n_head", "n_heads", "num_attention_heads")
WIDTHS = ("embed_dim", "n_embd", "d_model", "hidden_size", "dim")

_state = {"done": False, "mode": None, "handles": [], "started": None, "tokens": None, "model": None,
          "optimizer": None}


def install(torch) -> None:
    from . import model_facts
    _state["torch"] = torch
    model_facts.on_model(_on_model)
    runtime.each_second(_time_when_due)
    runtime.at_fork_child(_reset_in_child)
    runtime.at_cell_start(_rearm)


def _rearm() -> None:
    _stop_counting()
    _state.update(done=False, mode=None, tokens=None, model=None, optimizer=None, timing=False, time_at=None)


def _reset_in_child() -> None:
    _stop_counting()
    _state.update(done=True, time_at=None)     # a worker trains nothing


def _on_model(model, optimizer) -> None:
    """The second optimizer step is over and the model known: count the next step."""
    if _state["done"] or optimizer is None:
        return              # no optimizer, no step end to count to
    _state["done"] = True
    torch = _state["torch"]
    reason = skip_reason(model, torch)
    if reason is not None:
        runtime.emit({"k": kinds.FLOPS, "t": time.monotonic(), "skipped": reason})
        if _device_of(model) == "cpu" and "compiled" not in reason:
            _state.update(model=model, optimizer=optimizer)     # a rank's own ops are timed all the same
            _time_a_later_step()
        return
    from torch.optim.optimizer import register_optimizer_step_pre_hook
    mode = counting_mode(torch)
    _state.update(model=model, optimizer=optimizer, tokens=None, shape=transformer_shape(model, torch))
    _state["handles"] = [register_optimizer_step_pre_hook(_at_next_step)] + _token_hooks(model, torch)
    _state["started"] = time.monotonic()
    mode.__enter__()
    _state["mode"] = mode


def skip_reason(model, torch):
    """Why the step of this model cannot be counted, or None."""
    from . import steps
    parallel = getattr(torch.nn, "parallel", None)
    wrappers = tuple(c for c in (getattr(parallel, "DistributedDataParallel", None), torch.nn.DataParallel) if c)
    if isinstance(model, wrappers) or "FullyShardedDataParallel" in type(model).__name__:
        return f"the model is wrapped in {type(model).__name__} (the count sees one replica's share only)"
    if steps.compiled_modules() or getattr(model, "_orig_mod", None) is not None:
        return "the model is compiled (torch.compile runs graphs the count does not see op by op)"
    return None


def _at_next_step(optimizer, args, kwargs) -> None:
    if _state.get("optimizer") is not None and optimizer is not _state["optimizer"]:
        return              # another optimizer of the same iteration (a GAN's generator)
    mode = _state["mode"]
    if mode is not None and not mode.worked() and not _state.get("closure"):
        # Nothing counted yet: a closure (Lightning's, LBFGS's) runs the forward and backward inside
        # step(), so the count ends when this step does.
        from torch.optim.optimizer import register_optimizer_step_post_hook
        _state["closure"] = True
        _state["handles"].append(register_optimizer_step_post_hook(_at_step_end))
        return
    _finish_count()


def _at_step_end(optimizer, args, kwargs) -> None:
    if optimizer is _state.get("optimizer"):
        _finish_count()


def _finish_count() -> None:
    timing = _state.get("timing")
    try:
        mode, ended = _state["mode"], time.monotonic()
        if not _stop_counting():
            return
        device = _device_of(_state["model"])
        if timing:
            runtime.emit({"k": kinds.FLOPS, "t": ended, "op_times": True, "step": COUNTED_STEP + TIMED_AFTER + 1,
                          "seconds": round(ended - _state["started"], 6),
                          "seconds_by_op": {op: round(s, 6) for op, s in mode.seconds.items()}, "device": device})
        else:
            runtime.emit(dict(mode.summary(), k=kinds.FLOPS, t=ended, step=COUNTED_STEP,
                              seconds=round(ended - _state["started"], 6),
                              transformer=_with_tokens(_state.get("shape"), _state["tokens"]), device=device))
            if device == "cpu":
                _time_a_later_step()
                return
    except Exception:
        pass
    _state.update(model=None, optimizer=None, closure=False, timing=False)


def _time_a_later_step() -> None:
    """Time the ops of an iteration at least TIMED_AFTER steps later (`_time_when_due`)."""
    from . import steps
    _state.update(closure=False, timing=True, time_at=steps.count() + TIMED_AFTER)


def _time_when_due(now: float) -> None:
    """At a step's end (at most once a second): once TIMED_AFTER steps have passed since the count,
    the next iteration runs under the timing mode. Read from the step probe's count, so that no hook
    waits in torch's optimizer tables meanwhile: a program that reads them sees what it would without
    gpuprof."""
    from torch.optim.optimizer import register_optimizer_step_pre_hook
    from . import steps
    at = _state.get("time_at")
    if at is None or _state["mode"] is not None or steps.count() < at:
        return
    _state["time_at"] = None
    mode = timing_mode(_state["torch"])
    _state["handles"] = [register_optimizer_step_pre_hook(_at_next_step)]
    _state["started"] = time.monotonic()
    mode.__enter__()
    _state["mode"] = mode


def _stop_counting() -> bool:
    """Leave the mode (only from the top of the mode stack) and drop the hooks; True if counted."""
    handles, _state["handles"] = _state["handles"], []
    for handle in handles:
        try:
            handle.remove()
        except Exception:
            pass
    mode, _state["mode"] = _state["mode"], None
    if mode is None:
        return False
    torch = _state["torch"]
    try:
        depth = torch._C._len_torch_dispatch_stack()
        if depth and torch._C._get_dispatch_stack_at(depth - 1) is mode:
            mode.__exit__(None, None, None)
            return True
    except Exception:
        pass
    return False


def counting_mode(torch):
    """A dispatch mode that runs each op as called and counts the FLOPs of those with a formula."""
    from torch.utils import flop_counter
    from torch.utils._python_dispatch import TorchDispatchMode

    formulas = dict(flop_counter.flop_registry)
    formulas.update(_cpu_attention_formulas(torch, flop_counter))

    class StepCount(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.flops, self.by_op, self.by_dtype, self.uncounted, self.failed = 0, {}, {}, {}, 0
            self.ops = 0            # every aten op the step dispatched: what the host launched, views too

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            self.ops += 1
            out = func(*args, **kwargs)   # gpuprof's probe: passes the call through unchanged
            try:
                self._count(func, args, kwargs, out)
            except Exception:
                self.failed += 1
            return out

        def _count(self, func, args, kwargs, out):
            packet = func._overloadpacket
            formula = formulas.get(packet)
            name = packet.__name__
            if formula is None:
                if any(part in name for part in HEAVY_PARTS):
                    self.uncounted[name] = self.uncounted.get(name, 0) + 1
                return
            flops = int(formula(*args, **kwargs, out_val=out))
            self.flops += flops
            self.by_op[name] = self.by_op.get(name, 0) + flops
            dtype = _operand_dtype(args, torch)
            self.by_dtype[dtype] = self.by_dtype.get(dtype, 0) + flops

        def worked(self) -> bool:
            return bool(self.flops)

        def summary(self) -> dict:
            top = dict(sorted(self.by_op.items(), key=lambda kv: -kv[1])[:TOP_OPS])
            return {"flops": self.flops, "by_op": top, "by_dtype": self.by_dtype, "uncounted": self.uncounted,
                    "formula_errors": self.failed, "ops": self.ops}

    return StepCount()


def timing_mode(torch):
    """A dispatch mode that runs each op as called and adds the wall time of those with a FLOP
    formula to `seconds` by op (on a CPU an op returns when it is done)."""
    from torch.utils import flop_counter
    from torch.utils._python_dispatch import TorchDispatchMode

    formulas = set(flop_counter.flop_registry) | set(_cpu_attention_formulas(torch, flop_counter))

    class OpTimes(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seconds = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            packet = func._overloadpacket
            if packet not in formulas:
                return func(*args, **kwargs)   # gpuprof's probe: passes the call through unchanged
            started = time.perf_counter()
            out = func(*args, **kwargs)   # gpuprof's probe: passes the call through unchanged
            name = packet.__name__
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
            return out

        def worked(self) -> bool:
            return bool(self.seconds)

    return OpTimes()


def _cpu_attention_formulas(torch, flop_counter) -> dict:
    """The CPU flash-attention kernels (scaled_dot_product_attention on a CPU), which torch's table lacks."""
    aten = torch.ops.aten
    out = {}
    forward = getattr(aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    backward = getattr(aten, "_scaled_dot_product_flash_attention_for_cpu_backward", None)
    if forward is not None:
        out[forward] = flop_counter.shape_wrapper(
            lambda q, k, v, *a, out_shape=None, **kw: flop_counter.sdpa_flop_count(q, k, v))
    if backward is not None:
        out[backward] = flop_counter.shape_wrapper(
            lambda g, q, k, v, *a, out_shape=None, **kw: flop_counter.sdpa_backward_flop_count(g, q, k, v))
    return out


def _operand_dtype(args, torch) -> str:
    for arg in args:
        if isinstance(arg, torch.Tensor) and arg.dim() >= 2 and arg.is_floating_point():
            return str(arg.dtype).replace("torch.", "")
    return "other"


def transformer_shape(model, torch):
    """{layers, heads, head_dim, params} for a model with attention modules (nn.MultiheadAttention,
    or modules that declare their heads and width with an embedding beside them), else None. N
    leaves out embedding tables, except one tied to an output layer."""
    attention = [m for m in model.modules() if isinstance(m, torch.nn.MultiheadAttention)]
    embeddings = [m for m in model.modules() if isinstance(m, torch.nn.Embedding)]
    if not attention and embeddings:
        attention = [m for m in model.modules() if _heads_and_width(m) is not None]
    if not attention:
        return None
    heads, width = _heads_and_width(attention[0]) or (attention[0].num_heads, attention[0].embed_dim)
    linear_weights = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Linear)}
    tables = {id(m.weight) for m in embeddings if id(m.weight) not in linear_weights}
    params = sum(p.numel() for p in model.parameters() if id(p) not in tables)
    return {"layers": len(attention), "heads": int(heads), "head_dim": int(width) // int(heads), "params": params,
            "_attention": attention[0], "_embeddings": embeddings}


def _heads_and_width(module):
    heads = next((getattr(module, n) for n in HEADS if isinstance(getattr(module, n, None), int)), None)
    width = next((getattr(module, n) for n in WIDTHS if isinstance(getattr(module, n, None), int)), None)
    return (heads, width) if heads and width and heads > 0 else None


def _token_hooks(model, torch) -> list:
    """Pre-hooks on the embeddings (else the first attention module) noting the step's token shape."""
    shape = _state.get("shape")
    if shape is None:
        return []
    if shape["_embeddings"]:
        return [m.register_forward_pre_hook(_note_ids) for m in shape["_embeddings"]]
    attention = shape["_attention"]
    return [attention.register_forward_pre_hook(_note_query, with_kwargs=True)]


def _note_ids(module, inputs):
    x = inputs[0] if inputs else None
    dims = tuple(getattr(x, "shape", ()) or ())
    if dims and (_state["tokens"] is None or _count(dims) > _state["tokens"][1]):
        _state["tokens"] = (int(dims[-1]), _count(dims))
    return None


def _note_query(module, args, kwargs):
    if _state["tokens"] is None:
        query = args[0] if args else kwargs.get("query")
        dims = tuple(getattr(query, "shape", ()) or ())
        if len(dims) == 3:
            first = getattr(module, "batch_first", True)
            length = dims[1] if first else dims[0]
            _state["tokens"] = (int(length), int(dims[0] * dims[1]))
        elif len(dims) == 2:
            _state["tokens"] = (int(dims[0]), int(dims[0]))
    return None


def _count(dims) -> int:
    total = 1
    for d in dims:
        total *= int(d)
    return total


def _with_tokens(shape, tokens):
    if shape is None:
        return None
    out = {k: v for k, v in shape.items() if not k.startswith("_")}
    if tokens is not None:
        out.update(seq_len=tokens[0], tokens=tokens[1])
    return out


def _device_of(model):
    for p in model.parameters():
        return str(p.device)
    return None
