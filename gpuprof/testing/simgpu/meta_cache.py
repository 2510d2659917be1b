"""What torch's meta kernels answer for an op on device tensors, remembered per op and signature.

Device tensors are meta tensors: what an op gives back depends only on its arguments' shapes,
strides, dtypes and other arguments, never on values. Torch works it out with meta kernels, many
of them Python (torch._refs, torch._meta_registrations) that take tens of microseconds to
milliseconds of host time per op, while a training loop repeats the same ops on the same shapes
every step. So the first call of each signature runs torch's kernel and the outcome is kept: for
an op that makes new storage, the layout of each output (later calls make empty tensors of that
layout); for an in-place op, which of its arguments it returned (later calls return them). Only
ops whose tensors are all device tensors are kept (host tensors hold values that must be
computed), only strided real-valued tensors, and only outcomes that fit: outputs that are fresh,
exactly-sized, unshared storages, or in-place ops that left every argument's layout as it was.
Views, allocations and everything else always run torch's kernel."""

_SCALARS = (int, float, bool, str, type(None))
_LIMIT = 50_000             # signatures kept; a program that keeps making new shapes starts over


class _NotKept(Exception):
    """An argument the cache does not describe: the op runs torch's kernel every time."""


class MetaCache:
    def __init__(self, torch):
        self.Tensor = torch.Tensor
        self.real_is_meta = torch._C.TensorBase.is_meta.__get__
        self.strided = torch.strided
        self.META = torch.device("meta")
        self.empty_strided = torch.ops.aten.empty_strided.default
        self.plain_types = _SCALARS + (torch.dtype, torch.device, torch.layout, torch.memory_format)
        self.plain_kinds = {}       # tensor type -> whether ops on it are the device's own
        self.entries = {}           # signature -> ("fresh", many, container, specs) | ("inplace", template) | None

    def call(self, func, args, kwargs, inplace: bool):
        """func(*args, **kwargs) on device tensors, from what the same signature gave before when known."""
        return self.call_keyed(func, args, kwargs, inplace)[0]

    def call_keyed(self, func, args, kwargs, inplace: bool):
        """(the outcome `call` gives, the op's signature or None): the signature is handed back so the
        kernel's cost can be kept by it too."""
        leaves = []
        try:
            key = self._signature(func, args, kwargs, leaves)
        except _NotKept:
            return func(*args, **kwargs), None
        entry = self.entries.get(key, self)
        if entry is None:
            return func(*args, **kwargs), key
        if entry is not self:
            return self._replay(entry, leaves), key
        out = func(*args, **kwargs)
        if len(self.entries) >= _LIMIT:
            self.entries.clear()
        self.entries[key] = self._learn(out, leaves, inplace)
        return out, key

    # ---- signatures

    def signature(self, func, args, kwargs):
        """What the op's outcome depends on (its arguments, tensors by layout), or None when an
        argument is not one the cache describes."""
        try:
            return self._signature(func, args, kwargs, [])
        except _NotKept:
            return None

    def _signature(self, func, args, kwargs, leaves) -> tuple:
        parts = [func]
        for arg in args:
            parts.append(self._part(arg, leaves))
        if kwargs:
            for name in sorted(kwargs):
                parts.append(name)
                parts.append(self._part(kwargs[name], leaves))
        return tuple(parts)

    def _part(self, value, leaves):
        kind = type(value)
        if kind in self.plain_types:
            return kind, value              # the type too: 1, 1.0 and True are equal keys but not equal ops
        if kind is self.Tensor or isinstance(value, self.Tensor):
            if not self._plain_tensor_type(kind) or not self.real_is_meta(value) or value.layout != self.strided:
                raise _NotKept
            dtype = value.dtype
            if dtype.is_complex:
                raise _NotKept
            layout = (value.shape, value.stride(), value.storage_offset(), dtype)
            leaves.append((value, layout))
            return layout
        if kind is list or kind is tuple:
            return kind, tuple([self._part(item, leaves) for item in value])
        if isinstance(value, self.plain_types):
            return kind, value
        if isinstance(value, (list, tuple)):
            return kind, tuple([self._part(item, leaves) for item in value])
        raise _NotKept

    def _plain_tensor_type(self, kind) -> bool:
        """A tensor type whose ops the device answers itself (Tensor, Parameter); a subclass with a
        dispatch of its own (DTensor, which FSDP2 shards with) wraps what the op gives, so its
        outcome is not a layout to give again."""
        found = self.plain_kinds.get(kind)
        if found is None:
            found = self.plain_kinds[kind] = kind.__torch_dispatch__ is self.Tensor.__torch_dispatch__
        return found

    # ---- learning an outcome, and giving it again

    def _learn(self, out, leaves, inplace: bool):
        """What to keep of `out`, or None where the outcome cannot be given again without the kernel."""
        for tensor, layout in leaves:
            if (tensor.shape, tensor.stride(), tensor.storage_offset()) != layout[:3]:
                return None                 # the kernel resized or restrided an argument
        many = isinstance(out, (tuple, list))
        outputs = list(out) if many else [out]
        if not all(isinstance(t, self.Tensor) for t in outputs):
            return ("inplace", None) if inplace and out is None else None
        if inplace:
            positions = []
            for tensor in outputs:
                found = next((i for i, (leaf, _) in enumerate(leaves) if leaf is tensor), None)
                if found is None:
                    return None
                positions.append(found)
            return "inplace", (type(out) if many else None, tuple(positions))
        return self._fresh(outputs, leaves, type(out) if many else None)

    def _fresh(self, outputs, leaves, container):
        storages = {leaf.untyped_storage()._cdata for leaf, _ in leaves}
        specs = []
        for tensor in outputs:
            if not self.real_is_meta(tensor) or tensor.layout != self.strided or tensor.storage_offset() != 0:
                return None
            storage = tensor.untyped_storage()
            if storage._cdata in storages:
                return None                 # an output that shares storage: a view, not a fresh one
            storages.add(storage._cdata)
            spec = (tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)
            if self._make(spec).untyped_storage().nbytes() != storage.nbytes():
                return None
            specs.append(spec)
        return "fresh", container, tuple(specs)

    def _replay(self, entry, leaves):
        if entry[0] == "fresh":
            _, container, specs = entry
            made = [self._make(spec) for spec in specs]
            return made[0] if container is None else container(made)
        template = entry[1]
        if template is None:
            return None
        container, positions = template
        returned = [leaves[i][0] for i in positions]
        return returned[0] if container is None else container(returned)

    def _make(self, spec):
        shape, stride, dtype = spec
        return self.empty_strided(shape, stride, dtype=dtype, device=self.META)
