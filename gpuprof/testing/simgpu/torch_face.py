"""The simulated GPU inside torch: what `install(torch)` changes so that a program written for a
real GPU runs unchanged on a CPU-only torch and times as CUDA would.

- `torch.cuda` (and `torch.accelerator`, which DataLoader asks whether to pin) answer from the
  simulated machine (cuda_api.py); `torch.version.cuda` is set, as a CUDA build has it.
- Device tensors are meta tensors that say they are CUDA tensors: `.device` is `cuda:<n>`,
  `.is_cuda` is True and `.is_meta` False, except to the face itself and to torch's decompositions
  and meta kernels (which build tensors on their inputs' device).
- A TorchFunctionMode turns every CUDA device argument (`device="cuda:1"`, `x.to("cuda")`,
  `x.cuda()`, `torch.tensor(data, device="cuda")`) into the meta device, with the target device
  current for the call; a TorchDispatchMode (torch_ops.py) times every aten op. Both are pushed in
  the thread that installs the face and in every thread started afterwards (popped again when
  that thread's target is done).
- `pin_memory()` returns a real host copy marked pinned; `is_pinned()` reads the mark.
- `torch.autocast("cuda")` casts the inputs of device ops as it would on a GPU (torch_autocast.py).

docs/simulated-gpu.md lists each behaviour, the document it follows, and what is not simulated."""

import atexit
import os
import sys
import threading

from . import collectives, cuda_api, fsdp_face, torch_autocast, torch_compile
from .machine import load
from .runtime import InvalidDevice, Runtime
from .torch_ops import OpHandler

CUDA_VERSION = "12.4"
# torch's own code that builds tensors like its inputs' (decompositions, meta kernels, tracing)
META_VIEWERS = ("_refs", "_prims", "_prims_common", "_decomp", "_meta_registrations.py", "_library", "_subclasses",
                "_higher_order_ops", "fx", "_functorch", "_dynamo", "_inductor", "export", "_export", "_ops.py")
DATA_FACTORIES = ("tensor", "as_tensor", "asarray")

_installed = {}


def install(torch, folder: str = None, environ=None):
    """Switch the simulated machine in `folder` (default: GPUPROF_SIMGPU) on inside `torch`; once."""
    if "face" in _installed:
        return _installed["face"]
    folder = folder or os.environ["GPUPROF_SIMGPU"]
    runtime = Runtime(load(folder), folder, environ)
    face = _installed["face"] = TorchFace(torch, runtime)
    face.install()
    return face


class TorchFace:
    def __init__(self, torch, runtime):
        self.torch = torch
        self.runtime = runtime
        self.tls = runtime.tls
        base = torch._C.TensorBase
        self.real_device = base.device.__get__
        self.real_is_meta = base.is_meta.__get__
        self.real_is_cuda = base.is_cuda.__get__
        self.c_to = base.to
        self.c_get_device = base.get_device
        self.META = torch.device("meta")
        self.cuda_devices = {}
        root = os.path.dirname(os.path.abspath(torch.__file__))
        self.meta_folders = tuple(os.path.join(root, name) for name in META_VIEWERS)
        self.meta_viewers = {}
        self.ops = OpHandler(torch, runtime, self.is_pinned)
        self.api = cuda_api.build(torch, runtime)
        self.handlers = torch_autocast.handlers(torch, lambda tensor, dtype: self.c_to(tensor, dtype))
        self.handlers.update({torch.Tensor.to: self._tensor_to, torch.Tensor.cuda: self._tensor_cuda,
                              torch.Tensor.tolist: self._tolist, torch.Tensor.numpy: self._numpy,
                              torch.Tensor.__deepcopy__: self._deepcopy, torch.Tensor.__repr__: self._repr})
        for name in DATA_FACTORIES:
            function = getattr(torch, name, None)
            if function is not None:
                self.handlers[function] = self._data_factory
        self.handlers[torch.Tensor.new_tensor] = self._data_factory
        self.handlers[torch._C._nn._parse_to] = self._parse_to
        self.handlers_before_attention = self.handlers.get(torch.nn.functional.scaled_dot_product_attention) \
            or (lambda func, args, kwargs: func(*args, **kwargs))
        self.handlers[torch.nn.functional.scaled_dot_product_attention] = self._attention
        self.resolved = {}
        self.function_mode_class, self.dispatch_mode_class = _mode_classes(torch, self)

    # ---- installation

    def install(self) -> None:
        torch = self.torch
        torch.version.cuda = CUDA_VERSION
        self._patch_cuda()
        self._patch_accelerator()
        self._patch_tensor()
        self._patch_backward()
        torch_compile.install(torch)
        collectives.install(torch, self)
        fsdp_face.install(torch)
        self.enter_modes()
        self._follow_threads()
        os.register_at_fork(after_in_child=self.runtime.after_fork_in_child)
        atexit.register(self.runtime.close)

    def _patch_cuda(self) -> None:
        torch = self.torch
        cuda = torch.cuda
        modules = [cuda] + [getattr(cuda, name) for name in ("memory", "random", "streams", "graphs")
                            if hasattr(cuda, name)]
        for name, value in self.api.items():
            for module in modules:
                if module is cuda or hasattr(module, name):
                    setattr(module, name, value)
        if not hasattr(torch._C, "_host_emptyCache"):
            # torch.cuda.graph empties the pinned-memory cache before a capture; the CPU build has none
            torch._C._host_emptyCache = cuda_api.noop("_host_emptyCache")
        nvtx = getattr(cuda, "nvtx", None)
        if nvtx is not None:
            for name in ("range_push", "range_pop", "range_start", "range_end", "mark"):
                setattr(nvtx, name, cuda_api.noop(name, 0))
        backends = getattr(torch.backends, "cuda", None)
        if backends is not None:
            backends.is_built = lambda: True
        cudnn = getattr(torch.backends, "cudnn", None)
        if cudnn is not None and hasattr(cudnn, "is_acceptable"):
            real_acceptable = cudnn.is_acceptable

            def is_acceptable(tensor):
                # an RNN asks it before flattening its weights for cuDNN (one buffer: no cost to
                # model); the CPU build would warn, for a device tensor, that it has no cuDNN
                on_device = tensor.untyped_storage().device.type == "meta"
                return False if on_device else real_acceptable(tensor)
            cudnn.is_acceptable = is_acceptable

    def _patch_accelerator(self) -> None:
        """torch.accelerator answers for CUDA (DataLoader pins memory only when it is available)."""
        accelerator = getattr(self.torch, "accelerator", None)
        if accelerator is None:
            return
        api, torch = self.api, self.torch
        cuda_type = torch.device("cuda")

        def current_accelerator(check_available: bool = False):
            return cuda_type if not check_available or api["is_available"]() else None

        def answering(name):
            # an object of its own under each name (torch.compile's tables refuse one under two)
            def function(*args, **kwargs):
                return api[name](*args, **kwargs)
            return function

        replacements = {"current_accelerator": current_accelerator, "is_available": answering("is_available"),
                        "device_count": answering("device_count"), "current_device_index": answering("current_device"),
                        "current_device_idx": answering("current_device"), "set_device_index": answering("set_device"),
                        "set_device_idx": answering("set_device"), "synchronize": answering("synchronize"),
                        "current_stream": answering("current_stream"), "set_stream": answering("set_stream")}
        for name, value in replacements.items():
            setattr(accelerator, name, value)
        # torch.distributed and FSDP ask the C binding which accelerator the machine has
        # (FSDP2's default mesh, a barrier's device, init_process_group's default backend).
        self.torch._C._get_accelerator = lambda check_available=False: current_accelerator(check_available) \
            or torch.device("cpu")

    def _patch_backward(self) -> None:
        """The backward pass runs with the function mode on. `loss.backward()` reaches autograd's
        engine from inside the mode's handler, where the mode is off, and the hooks the engine runs
        (FSDP's gathers and reductions) place tensors with device="cuda"."""
        torch = self.torch
        graph = torch.autograd.graph
        real_run = graph._engine_run_backward
        mode_class = self.function_mode_class
        stack = self.torch.overrides._get_current_function_mode_stack

        def run_backward(*args, **kwargs):
            if any(isinstance(mode, mode_class) for mode in stack()):
                return real_run(*args, **kwargs)
            with mode_class():
                return real_run(*args, **kwargs)
        run_backward.__wrapped__ = real_run
        graph._engine_run_backward = run_backward
        if getattr(torch.autograd, "_engine_run_backward", None) is real_run:
            torch.autograd._engine_run_backward = run_backward

    def _patch_tensor(self) -> None:
        Tensor = self.torch.Tensor
        face = self
        sees_meta = self.sees_meta

        def device(self):
            found = face.real_device(self)
            if found.type == "meta" and not sees_meta():
                return face.cuda_device(face.ops.ordinal(self))
            return found

        def is_cuda(self):
            return face.real_is_cuda(self) or (face.real_is_meta(self) and not sees_meta())

        def is_meta(self):
            return face.real_is_meta(self) and sees_meta()

        def get_device(self):
            if face.real_is_meta(self):
                return face.ops.ordinal(self)
            return face.c_get_device(self)

        def is_pinned(self, device=None):
            return face.is_pinned(self)

        def pin_memory(self, device=None):
            return face.pin_memory(self)

        def record_stream(self, stream):
            return None

        Tensor.device = property(device)
        Tensor.is_cuda = property(is_cuda)
        Tensor.is_meta = property(is_meta)
        Tensor.get_device = get_device
        Tensor.is_pinned = is_pinned
        Tensor.pin_memory = pin_memory
        Tensor.record_stream = record_stream

    def enter_modes(self) -> tuple:
        """Push the dispatch mode, then the function mode, in the calling thread."""
        modes = (self.dispatch_mode_class(), self.function_mode_class())
        for mode in modes:
            mode.__enter__()
        return modes

    def leave_modes(self, modes) -> None:
        """Pop `modes` (as enter_modes gave them) in the calling thread, each only while it is on
        top of its stack (a mode the program left pushed above ours stays, and so does ours)."""
        torch_c = self.torch._C
        dispatch, function = modes
        depth = torch_c._len_torch_function_stack()
        if depth and torch_c._get_function_stack_at(depth - 1) is function:
            function.__exit__(None, None, None)
        depth = torch_c._len_torch_dispatch_stack()
        if depth and torch_c._get_dispatch_stack_at(depth - 1) is dispatch:
            dispatch.__exit__(None, None, None)

    def _follow_threads(self) -> None:
        """Every thread started from now on runs its target with the modes pushed, and pops them
        when its target is done.

        Popping matters at exit: torch keeps a thread's modes in C++ thread-local storage, which
        the OS thread destroys after Python has let the thread go. Releasing a Python object there
        takes the GIL; if the interpreter has begun finalising meanwhile (a thread joined or
        stopped from an atexit handler ends just then), Python ends the thread inside that
        destructor and the C++ runtime aborts the process ("terminate called without an active
        exception"). A thread that ends with empty mode stacks releases nothing there."""
        original = threading.Thread._bootstrap_inner
        face = self

        def _bootstrap_inner(thread):
            try:
                modes = face.enter_modes()
            except Exception:
                modes = None
            try:
                original(thread)
            finally:
                if modes is not None:
                    try:
                        face.leave_modes(modes)
                    except Exception:
                        pass

        threading.Thread._bootstrap_inner = _bootstrap_inner

    def sees_meta(self) -> bool:
        """Whether the code asking (the caller of the property calling this) sees device tensors as
        what they are (meta): the face's own ops and torch's decompositions and meta kernels, which
        build their outputs on the device of their inputs. Everyone else (the program, torch.nn,
        torch.optim, gpuprof) sees CUDA."""
        if getattr(self.tls, "inside", False):
            return True
        try:
            name = sys._getframe(2).f_code.co_filename
        except ValueError:
            return False
        found = self.meta_viewers.get(name)
        if found is None:
            found = self.meta_viewers[name] = name.startswith(self.meta_folders)
        return found

    # ---- helpers the modes share

    def cuda_device(self, ordinal: int):
        found = self.cuda_devices.get(ordinal)
        if found is None:
            found = self.cuda_devices[ordinal] = self.torch.device("cuda", ordinal)
        return found

    def is_pinned(self, tensor) -> bool:
        if getattr(tensor, "_simgpu_pinned", False):
            return True
        base = tensor._base
        return base is not None and getattr(base, "_simgpu_pinned", False)

    def pin_memory(self, tensor):
        """A page-locked copy: a real host copy, marked (torch returns a pinned tensor as it is)."""
        if self.real_is_meta(tensor):
            raise RuntimeError(f"cannot pin '{tensor.type().replace('meta', 'cuda')}' only dense CPU tensors "
                               "can be pinned")
        if self.is_pinned(tensor):
            return tensor
        out = tensor.clone()
        out._simgpu_pinned = True
        return out

    def cuda_ordinal(self, device):
        """The CUDA ordinal a device argument names (CUDA initialised), or None for another device."""
        torch = self.torch
        if isinstance(device, str):
            if not device.startswith("cuda"):
                return None
            device = torch.device(device)
        elif isinstance(device, int) and not isinstance(device, bool):
            device = torch.device("cuda", device)
        if not isinstance(device, torch.device) or device.type != "cuda":
            return None
        self.runtime.init()
        ordinal = self.runtime.current() if device.index is None else device.index
        try:
            return self.runtime.check(ordinal)
        except InvalidDevice:
            raise cuda_api.invalid_ordinal(torch) from None

    def on_device(self, ordinal: int, call, *args, **kwargs):
        """`call` with `ordinal` the current device (factories and copies land there)."""
        runtime = self.runtime
        if runtime.current() == ordinal:
            return call(*args, **kwargs)
        previous = runtime.set_current(ordinal)
        try:
            return call(*args, **kwargs)
        finally:
            runtime.set_current(previous)

    # ---- the function mode

    def handler(self, func):
        """The face's handler for `func`, also when someone wrapped it later (gpuprof's probes wrap
        Tensor.to and Tensor.cuda, setting `__wrapped__`), else None."""
        found = self.resolved.get(func, self)
        if found is self:
            inner, found = func, None
            while inner is not None and found is None:
                try:
                    found = self.handlers.get(inner)
                except TypeError:           # an unhashable callable: none of ours
                    break
                inner = getattr(inner, "__wrapped__", None)
            self.resolved[func] = found
        return found

    def call(self, func, args, kwargs):
        handler = self.handler(func)
        if handler is not None:
            return handler(func, args, kwargs)
        if kwargs:
            device = kwargs.get("device")
            if device is not None:
                ordinal = self.cuda_ordinal(device)
                if ordinal is not None:
                    return self.on_device(ordinal, func, *args, **dict(kwargs, device=self.META))
            if kwargs.get("pin_memory"):
                out = func(*args, **dict(kwargs, pin_memory=False))
                out._simgpu_pinned = True
                return out
        return func(*args, **kwargs)

    def _tensor_to(self, func, args, kwargs):
        """Tensor.to(device | dtype | tensor, ...): towards a CUDA device, the meta device instead."""
        tensor, rest, ordinal = args[0], list(args[1:]), None
        if kwargs.get("device") is not None:
            ordinal = self.cuda_ordinal(kwargs["device"])
            if ordinal is not None:
                kwargs = dict(kwargs, device=self.META)
        elif rest:
            first = rest[0]
            if isinstance(first, self.torch.Tensor):
                if self.real_is_meta(first):
                    ordinal = self.ops.ordinal(first)
            elif not isinstance(first, self.torch.dtype):
                ordinal = self.cuda_ordinal(first)
                if ordinal is not None:
                    rest[0] = self.META
        if ordinal is None:
            return self.c_to(tensor, *rest, **kwargs)
        out = self.on_device(ordinal, self.c_to, tensor, *rest, **kwargs)
        if self.real_is_meta(tensor) and self.ops.ordinal(tensor) != ordinal:
            out = self._to_other_device(out, ordinal, tensor)
        return out

    def _to_other_device(self, out, ordinal, source):
        """A copy between two devices: made on the source's stream, its memory on the target."""
        if out is source:
            out = self.torch.Tensor.clone(source)
        self.ops.relocate(out, ordinal)
        return out

    def _tensor_cuda(self, func, args, kwargs):
        """Tensor.cuda(device=None, non_blocking=False): Tensor.to towards that CUDA device."""
        device = kwargs.get("device", args[1] if len(args) > 1 else None)
        non_blocking = kwargs.get("non_blocking", args[2] if len(args) > 2 else False)
        ordinal = self.cuda_ordinal("cuda" if device is None else device)
        if ordinal is None:
            raise RuntimeError(f"Invalid device, must be cuda device: {device}")
        extra = {"memory_format": kwargs["memory_format"]} if "memory_format" in kwargs else {}
        return self._tensor_to(None, (args[0], self.cuda_device(ordinal)), dict(non_blocking=non_blocking, **extra))

    def _data_factory(self, func, args, kwargs):
        """torch.tensor(data, device="cuda") and kin: built on the host, then copied as a pageable
        upload (torch fills a host tensor and copies it)."""
        device = kwargs.get("device")
        ordinal = self.cuda_ordinal(device) if device is not None else None
        if ordinal is None:
            return func(*args, **kwargs)
        host = func(*args, **{k: v for k, v in kwargs.items() if k != "device"})
        if self.real_is_meta(host):
            return host
        return self.on_device(ordinal, self.c_to, host, self.META)

    def _tolist(self, func, args, kwargs):
        tensor = args[0]
        if self.real_is_meta(tensor):
            return self.torch._C.TensorBase.cpu(tensor).tolist()
        return func(*args, **kwargs)

    def _repr(self, func, args, kwargs):
        """A device tensor prints as torch prints a CUDA one: its values read back (zeros here)."""
        tensor = args[0]
        if not self.real_is_meta(tensor):
            return func(*args, **kwargs)
        host = self.torch._C.TensorBase.cpu(tensor.detach())
        text = func(host, *args[1:], **kwargs)
        extra = [f"device='{self.cuda_device(self.ops.ordinal(tensor))}'"]
        if tensor.grad_fn is not None:
            extra.append(f"grad_fn=<{type(tensor.grad_fn).__name__}>")
        elif tensor.requires_grad:
            extra.append("requires_grad=True")
        at = text.rfind(", dtype=")
        if at < 0:
            at = len(text) - 1
            return text[:at] + ", " + ", ".join(extra) + text[at:]
        return text[:at] + ", " + extra[0] + text[at:-1] + "".join(", " + e for e in extra[1:]) + ")"

    def _numpy(self, func, args, kwargs):
        tensor = args[0]
        if self.real_is_meta(tensor):
            raise TypeError(f"can't convert {tensor.device} device type tensor to numpy. Use Tensor.cpu() to copy "
                            "the tensor to host memory first.")
        return func(*args, **kwargs)

    def _attention(self, func, args, kwargs):
        """scaled_dot_product_attention on device tensors as the fused kernel torch picks on a GPU:
        flash (standing for cuDNN's, the default on Hopper) in bfloat16 and float16 without a mask,
        memory-efficient otherwise; one op forward and one backward, costed at the measured fused
        rate, where torch's meta device would take the math path (matmuls and a softmax). Under
        autocast the inputs are cast first, as autocast lists attention among the lower-precision ops."""
        torch = self.torch
        names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal")
        given = dict(zip(names, args), **kwargs)
        q, k, v = given.get("query"), given.get("key"), given.get("value")
        mask = given.get("attn_mask")
        plain = all(isinstance(t, torch.Tensor) and self.real_is_meta(t) for t in (q, k, v))
        if not plain or given.get("enable_gqa") or q.dim() != 4 or not (q.shape[:2] == k.shape[:2] == v.shape[:2]) \
                or (mask is not None and (not isinstance(mask, torch.Tensor) or mask.dtype == torch.bool)):
            return self.handlers_before_attention(func, args, kwargs)
        if torch.is_autocast_enabled("cuda"):
            low = torch.get_autocast_dtype("cuda")
            q, k, v = (self.c_to(t, low) if t.dtype == torch.float32 else t for t in (q, k, v))
            if mask is not None and mask.dtype == torch.float32:
                mask = self.c_to(mask, low)
        dropout, causal, scale = float(given.get("dropout_p") or 0.0), bool(given.get("is_causal")), given.get("scale")
        if q.dtype in (torch.bfloat16, torch.float16) and mask is None and q.shape[-1] <= 256:
            return torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, dropout, causal, False, scale=scale)[0]
        grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
        return torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, mask, grad, dropout, causal,
                                                                     scale=scale)[0]

    def _parse_to(self, func, args, kwargs):
        """`module.to(local_rank)`: a bare index names the accelerator's device, which torch's CPU
        build has none of; here it is that CUDA device."""
        def named(device):
            return self.torch.device("cuda", device) if isinstance(device, int) and not isinstance(device, bool) \
                else device
        if args:
            args = (named(args[0]),) + tuple(args[1:])
        if "device" in kwargs:
            kwargs = dict(kwargs, device=named(kwargs["device"]))
        return func(*args, **kwargs)

    def _deepcopy(self, func, args, kwargs):
        tensor, memo = args[0], args[1] if len(args) > 1 else kwargs.get("memo", {})
        if not self.real_is_meta(tensor):
            return func(*args, **kwargs)
        if id(tensor) in memo:
            return memo[id(tensor)]
        torch = self.torch
        with torch.no_grad():
            new = torch.Tensor.clone(tensor)
        new.requires_grad_(tensor.requires_grad)
        memo[id(tensor)] = new
        return new


def _mode_classes(torch, face):
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class SimulatedCudaFunctions(TorchFunctionMode):
        """CUDA device arguments become the meta device (torch_face.py)."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            return face.call(func, args, kwargs or {})

    class SimulatedCudaDevice(TorchDispatchMode):
        """Every aten op on device tensors timed on the simulated device (torch_ops.py)."""

        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return False        # torch would wrap the handler for dynamo, importing it on first use

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if function_mode_on():
                # an op torch's C++ issued itself (DDP's reducer): the function mode is still on, and
                # the device side must see tensors as they are
                with disabled_functions():
                    return face.ops.dispatch(func, args, kwargs or {})
            return face.ops.dispatch(func, args, kwargs or {})

    function_mode_on = torch._C._is_torch_function_mode_enabled
    disabled_functions = torch._C.DisableTorchFunction
    return SimulatedCudaFunctions, SimulatedCudaDevice
