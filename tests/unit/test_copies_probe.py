"""The copy probe's logic through its device seam, with real CPU tensors, a stand-in copy, fake
CUDA events whose device times the test sets, and a fake clock for the host."""

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from gpuprof.capture.probes import copies  # noqa: E402


class FakeStream:
    def __init__(self, device):
        self.device = device


class FakeEvent:
    """A CUDA event on the fake device clock; `done` says whether the device has reached it."""

    def __init__(self, clock):
        self.clock = clock
        self.recorded = None
        self.stream = None
        self.done = False

    def record(self, stream=None):
        self.recorded = self.clock[0]
        self.stream = stream

    def query(self):
        return self.done

    def elapsed_time(self, end):
        return (end.recorded - self.recorded) * 1000.0


class FakeSeam:
    """CUDA through the probe's seam: streams per device (the current device is 0)."""

    def __init__(self, initialized=True):
        self.initialized = initialized
        self.clock = [0.0]
        self.events = []
        self.streams = {}

    def is_initialized(self):
        return self.initialized

    def event(self):
        event = FakeEvent(self.clock)
        self.events.append(event)
        return event

    def stream(self, device):
        device = 0 if device is None else device
        return self.streams.setdefault(device, FakeStream(device))

    def is_compiling(self):
        return False


class FakeClock:
    """time.monotonic for the probe: each copy's host time is what the stand-in copy says."""

    def __init__(self):
        self.now = 100.0

    def monotonic(self):
        return self.now

    def perf_counter(self):
        return self.now


def fake_copy(seam, device_s, host_s=None, clock=None):
    def original(tensor, *args, **kwargs):
        seam.clock[0] += device_s        # the device spends this long on the copy
        if clock is not None:
            clock.now += host_s          # the host is held this long by the call
        return tensor
    return original


@pytest.mark.parametrize("args, kwargs, expected", [
    (("cuda",), {}, True), (("cuda:1",), {}, True), ((torch.device("cuda", 0),), {}, True),
    ((0,), {}, True), (("cpu",), {}, False), ((torch.float16,), {}, False), ((), {"device": "cuda"}, True),
    ((), {"dtype": torch.float16}, False), ((True,), {}, False),
])
def test_which_calls_go_to_a_cuda_device(args, kwargs, expected):
    assert copies.targets_cuda(args, kwargs) is expected


@pytest.mark.parametrize("target, index", [
    ("cuda", None), ("cuda:1", 1), (torch.device("cuda", 3), 3), (torch.device("cuda"), None), (2, 2), (None, None),
    (SimpleNamespace(device=torch.device("cuda", 1)), 1),
])
def test_the_target_device_of_a_copy(target, index):
    assert copies.target_device(target) == index


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
    assert event["timed_bytes"] == 2 * 1024 * 1024
    assert event["t0"] is not None and event["t0"] <= event["t1"] <= event["t"]
    assert tally.totals["n"] == 0                   # published and reset


def test_a_blocking_copy_held_by_earlier_kernels_is_device_wait_not_copying(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(copies, "time", clock)
    seam = FakeSeam()
    emitted = []
    tally = copies.CopyTally(seam, emit=emitted.append)
    to = copies.wrap_to(fake_copy(seam, device_s=0.002, host_s=0.050, clock=clock), tally)
    to(torch.zeros(256, 1024), "cuda")              # pageable, blocking: 50 ms on the host, 2 ms on the device
    for event in seam.events:
        event.done = True
    tally.publish()
    (event,) = emitted
    assert event["host_s"] == pytest.approx(0.050)
    assert event["gpu_s"] == pytest.approx(0.002)   # the copy's own time
    assert event["wait_s"] == pytest.approx(0.048)  # the host waiting for the device


def test_a_non_blocking_pinned_copy_waits_for_nothing(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(copies, "time", clock)
    seam = FakeSeam()
    tally = copies.CopyTally(seam, emit=lambda e: None)
    batch = torch.zeros(4, 4)
    monkeypatch.setattr(type(batch), "is_pinned", lambda self: True)
    copies.wrap_to(fake_copy(seam, device_s=0.010, host_s=0.001, clock=clock), tally)(batch, "cuda", non_blocking=True)
    for event in seam.events:
        event.done = True
    tally.read_back()
    assert tally.totals["gpu_s"] == pytest.approx(0.010) and tally.totals["wait_s"] == 0.0


@pytest.mark.parametrize("call, expected", [
    (lambda to, cuda, x: to(x, "cuda:1"), 1),
    (lambda to, cuda, x: to(x, device=torch.device("cuda", 2)), 2),
    (lambda to, cuda, x: to(x, "cuda"), 0),
    (lambda to, cuda, x: cuda(x, 3), 3),
    (lambda to, cuda, x: cuda(x, device="cuda:1", non_blocking=True), 1),
    (lambda to, cuda, x: cuda(x), 0),
])
def test_events_go_on_the_stream_of_the_copys_target_device(call, expected):
    seam = FakeSeam()
    tally = copies.CopyTally(seam, emit=lambda e: None)
    to = copies.wrap_to(fake_copy(seam, 0.001), tally)
    cuda = copies.wrap_cuda(fake_copy(seam, 0.001), tally)
    call(to, cuda, torch.ones(4))
    start, end = seam.events
    assert start.stream is end.stream is seam.streams[expected]


def test_a_target_cuda_cannot_give_a_stream_for_leaves_the_copy_to_the_program():
    seam = FakeSeam()

    def no_such_device(device):
        raise RuntimeError("invalid device ordinal")

    seam.stream = no_such_device
    tally = copies.CopyTally(seam, emit=lambda e: None)
    copies.wrap_to(fake_copy(seam, 0.001), tally)(torch.ones(4), "cuda:7")
    assert tally.totals["n"] == 1 and tally.pending == []      # counted, untimed, nothing raised


def test_before_cuda_is_initialised_the_probe_creates_no_event():
    seam = FakeSeam(initialized=False)
    tally = copies.CopyTally(seam, emit=lambda e: None)
    copies.wrap_cuda(fake_copy(seam, 0.001), tally)(torch.ones(4))
    assert seam.events == [] and tally.totals["n"] == 1
    assert tally.totals["pageable_bytes"] == 0      # pinned-ness unknown until CUDA is up


def test_a_block_with_only_late_read_backs_is_still_published():
    seam = FakeSeam()
    emitted = []
    tally = copies.CopyTally(seam, emit=emitted.append)
    copies.wrap_to(fake_copy(seam, 0.003), tally)(torch.ones(4), "cuda", non_blocking=True)
    tally.publish()                                 # the copy is still running on the device
    for event in seam.events:
        event.done = True
    tally.publish()
    assert [e["n"] for e in emitted] == [1, 0] and emitted[1]["timed"] == 1
    assert emitted[1]["t0"] == emitted[0]["t0"]         # where the copy itself was made
    assert emitted[1]["gpu_s"] == pytest.approx(0.003)


def test_a_failing_copy_raises_the_programs_own_error():
    seam = FakeSeam()
    tally = copies.CopyTally(seam, emit=lambda e: None)

    def broken(tensor, *args, **kwargs):
        raise RuntimeError("CUDA out of memory (from the program's own call)")

    with pytest.raises(RuntimeError, match="out of memory"):
        copies.wrap_to(broken, tally)(torch.ones(2), "cuda")
    assert tally.totals["n"] == 0


def test_a_late_read_back_does_not_stretch_a_blocks_span(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(copies, "time", clock)
    seam = FakeSeam()
    emitted = []
    tally = copies.CopyTally(seam, emit=emitted.append)
    to = copies.wrap_to(fake_copy(seam, 0.001), tally)
    to(torch.ones(4), "cuda", non_blocking=True)          # made at 100, still running when its block ends
    tally.publish()
    clock.now = 200.0
    for event in seam.events:
        event.done = True
    to(torch.ones(4), "cuda", non_blocking=True)          # made at 200
    tally.publish()
    assert (emitted[1]["t0"], emitted[1]["t1"]) == (200.0, 200.0)     # not stretched back to 100
    assert emitted[1]["timed"] == 1 and emitted[1]["gpu_s"] == pytest.approx(0.001)   # the late one, read here


def test_a_forked_child_forgets_the_parents_copies_without_destroying_their_events():
    """Destroying a CUDA event in a child forked after CUDA was initialised aborts the child (an H200
    with torch 2.11: every DataLoader worker "killed by signal: Aborted")."""
    import gc
    destroyed = []

    class Event(FakeEvent):
        def __del__(self):
            destroyed.append(self)

    seam = FakeSeam()
    seam.event = lambda: Event(seam.clock)
    tally = copies.CopyTally(seam, emit=lambda event: None)
    to = copies.wrap_to(fake_copy(seam, 0.002), tally)
    to(torch.zeros(16), "cuda")
    assert len(tally.pending) == 1 and tally.totals["n"] == 1
    copies.forget_in_child(tally)
    gc.collect()
    assert tally.pending == [] and tally.totals["n"] == 0
    assert destroyed == []
