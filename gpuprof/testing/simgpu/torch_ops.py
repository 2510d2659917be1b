"""What each aten op does on the simulated device, seen from a TorchDispatchMode.

Device tensors are meta tensors (shape and dtype, no data). An op whose outputs are device tensors
is a kernel on the current stream of the device its first device input lives on (the current device
for factories); views and `empty*` launch nothing; outputs that are new storage are allocated on the
device (and freed when the storage is collected). Copies between host and device, reading a scalar
back (`.item()`, `bool(t)`) and data-dependent shapes (`nonzero`) follow CUDA's synchronisation
rules (device.py): values are never computed, what comes back to the host is zeros.

A kernel's cost: its flops (torch.utils.flop_counter's formulas for matmuls, convolutions and
attention; 0 for the rest) at the dtype's peak and the bytes its tensors hold at the memory
bandwidth. float32 matmuls run at the TF32 peak when torch allows TF32 for them (convolutions when
cuDNN does, its default)."""

import os
import weakref

from .meta_cache import MetaCache

VIEW, EMPTY, INPLACE, FRESH, SPECIAL = range(5)
EMPTY_OPS = {"empty", "empty_strided", "new_empty", "new_empty_strided", "empty_like", "empty_permuted"}
METADATA_OPS = {"_unsafe_view", "lift_fresh", "lift_fresh_copy", "sym_size", "sym_stride", "sym_numel",
                "is_same_size", "_has_compatible_shallow_copy_type", "_nested_tensor_size", "set_", "resize_",
                "_reshape_alias", "is_pinned"}
CONV_OPS = {"convolution", "_convolution", "cudnn_convolution", "convolution_overrideable", "convolution_backward",
            "_slow_conv2d_forward"}
TESTS_REDUCED = {"all", "any"}  # reductions of a test that keep its one value
_UNKNOWN = object()
COSTS_KEPT = 50_000          # kernel costs kept; a program that keeps making new shapes starts over
DTYPE_KEYS = {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16", "int8": "int8",
              "uint8": "int8", "float64": "float64"}


def _tf32(settings, older, default: bool) -> bool:
    """Whether float32 work under `settings` (torch.backends.cuda.matmul, torch.backends.cudnn.conv)
    runs on TF32: its fp32_precision where set ("tf32" or "ieee"), else `older()`, else `default`."""
    try:
        newer = getattr(settings, "fp32_precision", "none")
    except RuntimeError:
        newer = "none"
    if newer in ("tf32", "ieee"):
        return newer == "tf32"
    try:
        return bool(older())
    except RuntimeError:
        return default


class OpHandler:
    """The device side of every aten op in a process (one per process, shared by its threads)."""

    def __init__(self, torch, runtime, pinned):
        from torch.utils.flop_counter import flop_registry

        self.torch = torch
        self.runtime = runtime
        self.is_pinned = pinned            # Tensor -> bool, the face's own mark of pinned memory
        self.flops = flop_registry
        self.kinds = {}
        self.Tensor = torch.Tensor
        self.real_is_meta = torch._C.TensorBase.is_meta.__get__
        self.real_device = torch._C.TensorBase.device.__get__
        aten = torch.ops.aten
        self.special = {
            aten._to_copy.default: self._to_copy,
            aten.copy_.default: self._copy_,
            aten._local_scalar_dense.default: self._scalar,
            aten.record_stream.default: lambda func, args, kwargs: None,
            aten.nonzero.default: self._nonzero,
            aten.masked_select.default: self._masked_select,
            aten.is_pinned.default: lambda func, args, kwargs: self.is_pinned(args[0]),
            aten.index.Tensor: self._masked_index,
            aten.index_put.default: self._masked_index,
            aten.index_put_.default: self._masked_index,
            aten._index_put_impl_.default: self._masked_index,
        }
        self.META = torch.device("meta")
        self.meta = MetaCache(torch)
        self.flop_counts = {}               # op signature -> flops
        self.costs = {}                     # (signature, device, math modes) -> (seconds, SM share)
        self.held = {}                      # weak reference to a live device storage -> [ordinal, bytes, pid]

    # ---- which ops do what

    def kind(self, func) -> int:
        found = self.kinds.get(func)
        if found is None:
            found = self.kinds[func] = self._classify(func)
        return found

    def _classify(self, func, special: bool = True) -> int:
        if special and func in self.special:
            return SPECIAL
        name = func._schema.name.split("::")[-1]
        tags = {t.name for t in getattr(func, "tags", ())}
        if func.is_view or name in METADATA_OPS or "inplace_view" in tags:
            return VIEW
        if name in EMPTY_OPS:
            return EMPTY
        returns = func._schema.returns
        if returns and all(r.alias_info is not None for r in returns):
            return INPLACE if any(r.alias_info.is_write for r in returns) else VIEW
        if not returns:
            writes = any(a.alias_info is not None and a.alias_info.is_write for a in func._schema.arguments)
            return INPLACE if writes else VIEW
        return FRESH

    # ---- the dispatch

    def dispatch(self, func, args, kwargs):
        kind = self.kind(func)
        if kind == SPECIAL:
            return self.special[func](func, args, kwargs)
        return self.plain(func, args, kwargs, kind)

    def plain(self, func, args, kwargs, kind: int = None):
        """An op as a kernel (or a view, or an allocation) on the device of its inputs."""
        if kind is None:
            kind = self._classify(func, special=False)
        tls = self.runtime.tls
        tls.inside = True
        key = None
        try:
            if kind == FRESH or kind == INPLACE:
                out, key = self.meta.call_keyed(func, args, kwargs, inplace=kind == INPLACE)
            else:
                out = func(*args, **kwargs)
        finally:
            tls.inside = False
        if kind == VIEW:
            return out
        outputs = self._device_tensors(out)
        if kind == INPLACE and not outputs:
            outputs = self._device_tensors(args[0]) if args else ()
        if not outputs:
            return out
        ordinal = self._ordinal_of_inputs(args)
        device = self.runtime.device(ordinal)
        if kind != INPLACE:
            for tensor in outputs:
                self.allocate(tensor, device)
        if kind != EMPTY:
            self._launch(func, args, kwargs, out, outputs, device, key)
            if kind == FRESH and out.__class__ is not tuple and getattr(out, "dtype", None) is self.torch.bool:
                self._run(self._mark_test, (func, args, kwargs, out), {})
        return out

    def _device_tensors(self, value) -> list:
        Tensor, is_meta = self.Tensor, self.real_is_meta
        if isinstance(value, Tensor):
            return [value] if is_meta(value) else []
        if isinstance(value, (tuple, list)):
            return [v for v in value if isinstance(v, Tensor) and is_meta(v)]
        return []

    def _ordinal_of_inputs(self, args) -> int:
        """The device of the first device tensor among the arguments; the current device without one."""
        Tensor, is_meta = self.Tensor, self.real_is_meta
        for arg in args:
            if isinstance(arg, Tensor):
                if is_meta(arg):
                    return self.ordinal(arg)
            elif isinstance(arg, (tuple, list)) and arg and isinstance(arg[0], Tensor) and is_meta(arg[0]):
                return self.ordinal(arg[0])
        return self.runtime.current()

    def ordinal(self, tensor) -> int:
        """The CUDA device a device tensor's storage was made on (the current device if unknown)."""
        found = getattr(tensor.untyped_storage(), "_simgpu", None)
        return self.runtime.current() if found is None else found[0]

    # ---- memory

    def allocate(self, tensor, device) -> None:
        """Account a new device storage on `device` until it is collected."""
        storage = tensor.untyped_storage()
        if getattr(storage, "_simgpu", None) is not None:
            return
        nbytes = storage.nbytes()
        try:
            device.allocate(nbytes)
        except Exception as error:
            raise self.torch.OutOfMemoryError(str(error)) from None
        held = storage._simgpu = [device.index, nbytes, os.getpid()]    # [ordinal, bytes, pid]
        self.held[weakref.ref(storage, self._collected)] = held    # a plain weak reference: cheaper than finalize

    def _collected(self, ref) -> None:
        """A device storage was collected (in whatever thread collected it): its bytes go back."""
        held = self.held.pop(ref, None)
        if held is not None:
            self.runtime.freed(held)

    def relocate(self, tensor, ordinal: int) -> None:
        """A storage that moved to another device (a copy between devices made on the source)."""
        held = getattr(tensor.untyped_storage(), "_simgpu", None)
        if held is None or held[0] == ordinal:
            return
        target = self.runtime.device(ordinal)
        try:
            target.allocate(held[1])
        except Exception as error:
            raise self.torch.OutOfMemoryError(str(error)) from None
        source = self.runtime.devices.get(held[0])
        if source is not None:
            source.free(held[1])
        held[0] = ordinal

    # ---- kernels

    def _launch(self, func, args, kwargs, out, outputs, device, key=None) -> None:
        """Queue the op's kernel. Its cost depends only on its signature, the device and the math
        modes torch allows, so it is worked out once per signature (`key`, from the meta cache) and
        kept: what the face costs the host per op stays near what a dispatch mode must cost."""
        cost = None
        if key is not None:
            # a matmul's or convolution's rate follows the math modes torch allows now
            modes = self.tf32_modes() if func._overloadpacket in self.flops else None
            cost_key = (key, device.index, modes)
            cost = self.costs.get(cost_key)
        if cost is None:
            cost = self._cost(func, args, kwargs, out, outputs, device, key)
            if key is not None:
                if len(self.costs) >= COSTS_KEPT:
                    self.costs.clear()
                self.costs[cost_key] = cost
        self.runtime.apply_frees()
        device.kernel(self.runtime.current_stream(device.index), cost[0], cost[1])

    def _cost(self, func, args, kwargs, out, outputs, device, key) -> tuple:
        """(device seconds, SM share) of the op's kernel: its FLOPs at the math mode's rate and the
        bytes its tensors hold at the memory bandwidth, the longer of the two."""
        nbytes = 0
        for tensor in self._all_tensors(args, outputs):
            nbytes += tensor.numel() * tensor.element_size()
        formula = self.flops.get(func._overloadpacket)
        first = outputs[0]
        if formula is not None:
            flops = self._flops(func, formula, args, kwargs, out, key)
            name = func._schema.name.split("::")[-1]
            conv = name in CONV_OPS
            attention = "attention" in name
            fill = 1.0 if conv or attention else device.matmul_fill(first.numel(), flops)
            seconds = device.kernel_seconds(flops, nbytes, self._compute_dtype(first, conv), conv=conv,
                                            attention=attention, fill=fill)
            return seconds, device.sm_share(first.numel(), per_sm=128 * 128)
        return device.kernel_seconds(0, nbytes), device.sm_share(max(t.numel() for t in outputs))

    def _flops(self, func, formula, args, kwargs, out, key=None) -> float:
        """torch.utils.flop_counter's count for the op, remembered per signature (it reads shapes only)."""
        if key is None:
            key = self.meta.signature(func, args, kwargs)
        found = self.flop_counts.get(key) if key is not None else None
        if found is None:
            try:
                found = formula(*args, out_val=out, **kwargs)
            except Exception:
                found = 0
            if key is not None:
                self.flop_counts[key] = found
        return found

    def _all_tensors(self, args, outputs):
        Tensor, is_meta = self.Tensor, self.real_is_meta
        seen = list(outputs)
        for arg in args:
            if isinstance(arg, Tensor):
                if is_meta(arg) and not any(arg is o for o in outputs):
                    seen.append(arg)
            elif isinstance(arg, (tuple, list)):
                seen.extend(a for a in arg if isinstance(a, Tensor) and is_meta(a) and not any(a is o for o in outputs))
        return seen

    def tf32_modes(self) -> tuple:
        """(float32 matmuls on TF32, float32 convolutions on TF32), read through torch's newer
        fp32_precision settings where a program set them, else through the older flags (torch
        refuses to read the older ones once the newer were set)."""
        return (_tf32(self.torch.backends.cuda.matmul, lambda: self.torch.get_float32_matmul_precision() != "highest",
                      False),
                _tf32(getattr(self.torch.backends.cudnn, "conv", None), lambda: self.torch.backends.cudnn.allow_tf32,
                      True))

    def _compute_dtype(self, tensor, conv: bool) -> str:
        dtype = str(tensor.dtype)[6:]
        if dtype == "float32" and self.tf32_modes()[1 if conv else 0]:
            return "tf32"
        return DTYPE_KEYS.get(dtype, "float32")

    # ---- copies and reading back

    def _stream(self, ordinal):
        return self.runtime.device(ordinal), self.runtime.current_stream(ordinal)

    def _to_copy(self, func, args, kwargs):
        source = args[0]
        target = kwargs.get("device")
        from_device = self.real_is_meta(source)
        to_device = target is not None and self.torch.device(target).type == "meta"
        if target is None:
            to_device = from_device
        if not from_device and to_device:           # host to device
            out = self._run(func, args, kwargs)
            device, stream = self._stream(self.runtime.current())
            self.allocate(out, device)
            device.copy_to_device(stream, source.numel() * source.element_size(), self.is_pinned(source),
                                  bool(kwargs.get("non_blocking", False)))
            return out
        if from_device and not to_device:           # device to host
            non_blocking = bool(kwargs.get("non_blocking", False))
            device, stream = self._stream(self.ordinal(source))
            dtype = kwargs.get("dtype") or source.dtype
            out = self.torch.zeros(tuple(source.shape), dtype=dtype)
            device.copy_to_host(stream, source.numel() * source.element_size(), pinned=non_blocking,
                                non_blocking=non_blocking)
            if non_blocking:
                out._simgpu_pinned = True           # torch's _to_copy pins the destination then
            return out
        out = self._run(func, args, kwargs)
        if from_device:                              # a cast on the device: a kernel
            device = self.runtime.device(self.ordinal(source))
            self.allocate(out, device)
            self._launch(func, args, kwargs, out, [out], device)
        return out

    def _copy_(self, func, args, kwargs):
        dest, source = args[0], args[1]
        non_blocking = bool(args[2]) if len(args) > 2 else bool(kwargs.get("non_blocking", False))
        dest_device, source_device = self.real_is_meta(dest), self.real_is_meta(source)
        if dest_device and not source_device:
            device, stream = self._stream(self.ordinal(dest))
            device.copy_to_device(stream, source.numel() * source.element_size(), self.is_pinned(source), non_blocking)
            return dest
        if source_device and not dest_device:
            device, stream = self._stream(self.ordinal(source))
            device.copy_to_host(stream, dest.numel() * dest.element_size(), self.is_pinned(dest), non_blocking)
            with self.torch.no_grad():
                self._run(self.torch.ops.aten.zero_.default, (dest,), {})
            return dest
        out = self._run(func, args, kwargs)
        if dest_device:
            device = self.runtime.device(self.ordinal(dest))
            self._launch(func, args, kwargs, out, [dest], device)
        return out

    def value_of(self, value):
        """What an argument holds, for working out a test's outcome: a device tensor its known value
        (zeros unless a test made it hold another), a one-element host tensor its value, a number
        itself; _UNKNOWN otherwise."""
        if isinstance(value, self.Tensor):
            if self.real_is_meta(value):
                return getattr(value.untyped_storage(), "_simgpu_value", 0)
            return value.item() if value.numel() == 1 else _UNKNOWN
        return value if isinstance(value, (int, float, bool)) else _UNKNOWN

    def _mark_test(self, func, args, kwargs, out) -> None:
        """`out`, a fresh bool device tensor: a test on device tensors (a comparison, isnan, a logical op, all/any: a bool result) holds
        one value wherever its inputs each hold one: work it out on one element, so that
        `torch.isfinite(loss)` on a device holding zeros is True, as zeros are finite."""
        if kwargs.get("dim") is not None:
            return
        name = func._schema.name.split("::")[-1]
        if name not in TESTS_REDUCED and self.torch.Tag.pointwise not in func.tags:
            return
        values = [self.value_of(a) for a in args]
        if any(v is _UNKNOWN for v in values) or len(args) > 1 and name in TESTS_REDUCED:
            return
        try:
            one = [self.torch.tensor(v) if isinstance(a, self.Tensor) else v for a, v in zip(args, values)]
            found = func(*one, **kwargs)
            out.untyped_storage()._simgpu_value = bool(found.item() if isinstance(found, self.Tensor) else found)
        except Exception:
            return

    def _scalar(self, func, args, kwargs):
        tensor = args[0]
        if not self.real_is_meta(tensor):
            return self._run(func, args, kwargs)
        device, stream = self._stream(self.ordinal(tensor))
        device.copy_to_host(stream, tensor.element_size(), pinned=False, non_blocking=False)
        known = getattr(tensor.untyped_storage(), "_simgpu_value", None)
        if known is not None:
            return known
        if tensor.dtype == self.torch.bool:
            return False
        if tensor.is_complex():
            return 0j
        return 0.0 if tensor.is_floating_point() else 0

    def _nonzero(self, func, args, kwargs):
        """A data-dependent shape: CUDA waits for the stream; zeros have no non-zero element."""
        return self._data_dependent(func, args, kwargs, lambda t: ((0, t.dim()), self.torch.long))

    def _masked_select(self, func, args, kwargs):
        return self._data_dependent(func, args, kwargs, lambda t: ((0,), t.dtype))

    def _data_dependent(self, func, args, kwargs, empty_of):
        """An op whose output shape depends on the values: one pass over the input, then the host
        waits for the stream (as CUDA does to learn the size); values are zeros, so it is empty."""
        tensor = args[0]
        if not self.real_is_meta(tensor):
            return self._run(func, args, kwargs)
        device, stream = self._stream(self.ordinal(tensor))
        device.kernel(stream, device.kernel_seconds(0, tensor.numel() * tensor.element_size()), 1.0)
        device.stream_synchronize(stream)
        shape, dtype = empty_of(tensor)
        out = self.torch.empty(shape, dtype=dtype, device=self.META)
        self.allocate(out, device)
        return out

    def _masked_index(self, func, args, kwargs):
        """Indexing with a boolean mask on the device: CUDA waits for the stream to learn how many
        elements the mask selects; the mask holds zeros, so it selects none."""
        tensor, indices = args[0], args[1]
        masks = [i for i in indices if isinstance(i, self.Tensor) and self.real_is_meta(i)
                 and i.dtype in (self.torch.bool, self.torch.uint8)]
        if not masks:
            return self.plain(func, args, kwargs)
        device, stream = self._stream(self.ordinal(tensor))
        device.stream_synchronize(stream)
        none = self.torch.empty((0,), dtype=self.torch.long, device=self.META)
        rewritten = []
        for index in indices:
            if any(index is mask for mask in masks):
                rewritten.extend([none] * index.dim())
            else:
                rewritten.append(index)
        return self.plain(func, (tensor, rewritten) + tuple(args[2:]), kwargs)

    def _run(self, func, args, kwargs):
        tls = self.runtime.tls
        tls.inside = True
        try:
            return func(*args, **kwargs)
        finally:
            tls.inside = False
