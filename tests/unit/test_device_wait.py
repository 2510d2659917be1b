"""The host's waits for the GPU: timed on CUDA tensors only, and taken out of a hand-written loop's
batch-preparation time by the steps probe."""

import time
import types

from gpuprof.capture.probes import device_wait


class FakeTensor:
    def __init__(self, is_cuda):
        self.is_cuda = is_cuda

    def item(self):
        time.sleep(0.01)        # as a sync waits for queued kernels
        return 1.0


def test_a_cuda_tensors_item_is_a_wait_for_the_device_and_a_cpu_tensors_is_not():
    item = device_wait._timed(FakeTensor.item, method=True)
    before = device_wait.held[0]
    assert item(FakeTensor(is_cuda=False)) == 1.0
    assert device_wait.held[0] == before
    assert item(FakeTensor(is_cuda=True)) == 1.0
    assert device_wait.held[0] - before >= 0.009


def test_install_wraps_the_synchronising_calls_and_keeps_their_names():
    tensor_cls = type("Tensor", (), {"item": FakeTensor.item, "tolist": lambda self: [], "cpu": lambda self: self})
    torch = types.SimpleNamespace(Tensor=tensor_cls, cuda=types.SimpleNamespace(synchronize=lambda device=None: None))
    device_wait.install(torch)
    assert tensor_cls.item.__wrapped__ is FakeTensor.item and tensor_cls.item.__name__ == "item"
    before = device_wait.held[0]
    torch.cuda.synchronize()
    assert device_wait.held[0] >= before
    assert torch.cuda.synchronize.__wrapped__ is not None


class SpinningTensor:
    """A CUDA tensor whose .item() spins, as CUDA's default schedule waits, and whose .cpu() is a
    timed call made inside it (the simulated GPU's .item() is built that way)."""
    is_cuda = True

    def item(self):
        self.cpu()
        return 1.0

    def cpu(self):
        end = time.thread_time() + 0.02
        while time.thread_time() < end:
            pass
        return self


def test_a_wait_that_spins_is_kept_with_its_cpu_and_a_nested_wait_counts_once(monkeypatch):
    monkeypatch.setattr(SpinningTensor, "cpu", device_wait._timed(SpinningTensor.cpu, method=True))
    monkeypatch.setattr(SpinningTensor, "item", device_wait._timed(SpinningTensor.item, method=True))
    held, cpu = device_wait.held[0], device_wait.held_cpu[0]
    start = time.monotonic()
    assert SpinningTensor().item() == 1.0
    took = time.monotonic() - start
    waited, spun = device_wait.held[0] - held, device_wait.held_cpu[0] - cpu
    # Counted once, not twice: the nested wait's time is inside the outer one's, so twice would be
    # about 2 x took (a bound on wall time itself would fail on a loaded machine).
    assert 0.019 <= spun <= waited + 1e-3 and waited <= took + 1e-6
