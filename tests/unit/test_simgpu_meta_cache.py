"""The simulated GPU's memory of torch's meta-kernel answers: the kernel runs once per op signature,
later calls get outputs of the same layout (or, in place, the same arguments back), and nothing
that depends on values, aliasing or a resized argument is ever answered from memory."""

import pytest

torch = pytest.importorskip("torch")

from gpuprof.testing.simgpu.meta_cache import MetaCache  # noqa: E402

aten = torch.ops.aten


class Counted:
    """An op that counts how often its kernel really ran."""

    def __init__(self, op):
        self.op, self.calls = op, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.op(*args, **kwargs)


def meta(*shape, dtype=torch.float32):
    return torch.empty(*shape, dtype=dtype, device="meta")


def layout(tensor):
    return tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype, tensor.storage_offset()


def test_a_fresh_op_runs_its_kernel_once_per_signature():
    cache, add = MetaCache(torch), Counted(aten.add.Tensor)
    a, b = meta(8, 1), meta(1, 16)
    first = cache.call(add, (a, b), {}, inplace=False)
    again = cache.call(add, (meta(8, 1), meta(1, 16)), {}, inplace=False)
    assert add.calls == 1
    assert layout(again) == layout(first) == ((8, 16), (16, 1), torch.float32, 0)
    assert again.untyped_storage()._cdata not in {a.untyped_storage()._cdata, first.untyped_storage()._cdata}
    cache.call(add, (meta(8, 2), meta(1, 2)), {}, inplace=False)        # another shape: its own signature
    assert add.calls == 2


def test_strides_and_argument_types_are_part_of_the_signature():
    cache, mul = MetaCache(torch), Counted(aten.mul.Tensor)
    transposed = meta(16, 8).t()
    got = cache.call(mul, (transposed, transposed), {}, inplace=False)
    again = cache.call(mul, (meta(16, 8).t(), meta(16, 8).t()), {}, inplace=False)
    assert layout(again) == layout(got) and again.stride() == (1, 8) and mul.calls == 1
    ints, add = meta(4, dtype=torch.int64), Counted(aten.add.Tensor)
    assert cache.call(add, (ints, 1), {}, inplace=False).dtype == torch.int64
    assert cache.call(add, (ints, 1.0), {}, inplace=False).dtype == torch.float32     # 1 == 1.0, yet not the same op
    assert add.calls == 2


def test_an_inplace_op_gives_back_its_argument_without_the_kernel():
    cache, add_ = MetaCache(torch), Counted(aten.add_.Tensor)
    x, y = meta(4, 4), meta(4, 4)
    assert cache.call(add_, (x, y), {"alpha": 2}, inplace=True) is x
    z = meta(4, 4)
    assert cache.call(add_, (z, y), {"alpha": 2}, inplace=True) is z
    assert add_.calls == 1


def test_an_out_argument_the_kernel_resized_is_never_answered_from_memory():
    cache, add_out = MetaCache(torch), Counted(aten.add.out)
    for _ in range(2):
        out = meta(0)
        got = cache.call(add_out, (meta(3), meta(3)), {"out": out}, inplace=True)
        assert got is out and tuple(out.shape) == (3,)
    assert add_out.calls == 2


def test_host_tensors_are_always_computed():
    cache, add = MetaCache(torch), Counted(aten.add.Tensor)
    for value in (1.0, 2.0):
        got = cache.call(add, (torch.full((2,), value), torch.ones(2)), {}, inplace=False)
        assert got.tolist() == [value + 1, value + 1]
    assert add.calls == 2


def test_an_output_sharing_its_inputs_storage_is_not_kept():
    cache = MetaCache(torch)
    alias = Counted(lambda tensor: tensor.view(-1))      # a view passed off as a fresh op
    x = meta(2, 3)
    for _ in range(2):
        got = cache.call(alias, (x,), {}, inplace=False)
        assert got.untyped_storage()._cdata == x.untyped_storage()._cdata
    assert alias.calls == 2


class OwnDispatch(torch.Tensor):
    """A tensor subclass that answers ops itself (as DTensor, which FSDP2 shards with, does)."""

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        with torch._C._DisableTorchDispatch():
            out = func(*args, **(kwargs or {}))
        return cls._make_subclass(cls, out)


def test_a_tensor_subclass_with_its_own_dispatch_is_never_answered_from_memory():
    cache, zeros_like = MetaCache(torch), Counted(aten.zeros_like.default)
    wrapped = OwnDispatch._make_subclass(OwnDispatch, meta(4, 4))
    assert cache.signature(zeros_like, (wrapped,), {}) is None
    cache.call(zeros_like, (wrapped,), {}, inplace=False)
    again = cache.call(zeros_like, (wrapped,), {}, inplace=False)
    assert zeros_like.calls == 2 and type(again) is OwnDispatch
    parameter = torch.nn.Parameter(meta(4, 4))
    assert cache.signature(zeros_like, (parameter,), {}) is not None
