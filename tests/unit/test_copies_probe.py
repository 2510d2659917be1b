"""The copy probe's logic through its device seam, with real CPU tensors and a stand-in copy."""

import pytest

torch = pytest.importorskip("torch")

from gpuprof.probes import copies  # noqa: E402


class FakeEvent:
    def __init__(self, clock):
        self.clock = clock
        self.recorded = None
        self.done = False

    def record(self):
        self.recorded = self.clock[0]

    def query(self):
        return self.done

    def elapsed_time(self, end):
        return (end.recorded - self.recorded) * 1000.0


class FakeSeam:
    def __init__(self, initialized=True):
        self.initialized = initialized
        self.clock = [0.0]
        self.events = []

    def is_initialized(self):
        return self.initialized

    def event(self):
        event = FakeEvent(self.clock)
        self.events.append(event)
        return event

    def is_compiling(self):
        return False


def fake_copy(seam, seconds):
    def original(tensor, *args, **kwargs):
        seam.clock[0] += seconds     # the "device" spends this long
        return tensor
    return original


@pytest.mark.parametrize("args, kwargs, expected", [
    (("cuda",), {}, True), (("cuda:1",), {}, True), ((torch.device("cuda", 0),), {}, True),
    ((0,), {}, True), (("cpu",), {}, False), ((torch.float16,), {}, False), ((), {"device": "cuda"}, True),
    ((), {"dtype": torch.float16}, False), ((True,), {}, False),
])
def test_which_calls_go_to_a_cuda_device(args, kwargs, expected):
    assert copies.targets_cuda(args, kwargs) is expected


def test_copies_are_tallied_and_read_back_without_waiting():
    seam = FakeSeam()
    emitted = []
    tally = copies.CopyTally(seam, emit=emitted.append)
    to = copies.wrap_to(fake_copy(seam, 0.002), tally)
    batch = torch.zeros(256, 1024)                 # 1 MiB float32, pageable
    assert to(batch, "cuda") is batch               # the program gets the original call's result
    to(batch, "cuda", non_blocking=True)
    to(batch, torch.float16)                        # not a device copy: untouched, not counted
    assert tally.totals["n"] == 2 and tally.totals["bytes"] == 2 * 1024 * 1024
    assert tally.totals["pageable_bytes"] == 2 * 1024 * 1024 and tally.totals["non_blocking"] == 1
    assert tally.totals["dtypes"] == {"float32": 2 * 1024 * 1024}
    tally.read_back()                               # the device has not finished: nothing read
    assert tally.totals["timed"] == 0 and len(tally.pending) == 2
    for event in seam.events:
        event.done = True
    tally.publish()
    (event,) = emitted
    assert event["timed"] == 2 and event["gpu_s"] == pytest.approx(0.004)
    assert tally.totals["n"] == 0                   # published and reset


def test_before_cuda_is_initialised_the_probe_creates_no_event():
    seam = FakeSeam(initialized=False)
    tally = copies.CopyTally(seam, emit=lambda e: None)
    copies.wrap_cuda(fake_copy(seam, 0.001), tally)(torch.ones(4))
    assert seam.events == [] and tally.totals["n"] == 1
    assert tally.totals["pageable_bytes"] == 0      # pinned-ness unknown until CUDA is up


def test_a_failing_copy_raises_the_programs_own_error():
    seam = FakeSeam()
    tally = copies.CopyTally(seam, emit=lambda e: None)

    def broken(tensor, *args, **kwargs):
        raise RuntimeError("CUDA out of memory (from the program's own call)")

    with pytest.raises(RuntimeError, match="out of memory"):
        copies.wrap_to(broken, tally)(torch.ones(2), "cuda")
    assert tally.totals["n"] == 0
