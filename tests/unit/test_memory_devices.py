"""The memory probe on several devices (a fake torch.cuda), and out of memory recognised by the
exception's type and by its message."""

import json

import pytest

torch = pytest.importorskip("torch")

from gpuprof.capture.probes import cuda_devices, memory as probe  # noqa: E402
from gpuprof.capture.probes.stream import Stream  # noqa: E402
from gpuprof.record.packed import rows_of  # noqa: E402

GIB = 1 << 30


class TwoDevices:
    """torch.cuda with memory on devices 0 and 2; the peaks grow as the test says."""

    def __init__(self):
        self.held = {0: [1 * GIB, 2 * GIB, 3 * GIB], 2: [4 * GIB, 5 * GIB, 6 * GIB]}   # allocated, peak, reserved
        self.reads = 0

    def current_device(self):
        return 0

    def memory_stats_as_nested_dict(self, index):
        self.reads += 1
        alloc, peak, reserved = self.held.get(index, [0, 0, 0])
        return {"allocated_bytes": {"all": {"current": alloc, "peak": peak}},
                "reserved_bytes": {"all": {"current": reserved, "peak": reserved}}}


class Collect:
    def __init__(self):
        self.events = []

    def emit(self, event):
        self.events.append(event)

    def emit_line(self, line):
        self.events.append(line)


@pytest.fixture
def probed(monkeypatch):
    sink, emitted, fake = Collect(), [], TwoDevices()
    monkeypatch.setitem(probe._state, "stream", Stream("mem", ("rss", "alloc", "peak", "reserved"), full=100, sink=sink))
    monkeypatch.setitem(probe._state, "cuda", fake)
    monkeypatch.setitem(probe._state, "seen", set())
    monkeypatch.setitem(probe._state, "peaks", {})
    monkeypatch.setitem(probe._state, "peaks_noted", {})
    monkeypatch.setitem(probe._state, "peaks_at", 0.0)
    monkeypatch.setitem(cuda_devices._state, "used", (0, 2))
    monkeypatch.setattr(probe.runtime, "emit", emitted.append)
    return sink, emitted, fake


def rows(sink):
    return [row for event in sink.events if isinstance(event, str) for row in rows_of(json.loads(event))]


def test_the_counters_sum_every_device_the_process_uses(probed):
    sink, emitted, fake = probed
    probe.on_step(None, 10.0)
    probe._state["stream"].flush()
    (row,) = rows(sink)
    assert row[2:] == [5 * GIB, 7 * GIB, 9 * GIB]          # allocated, peak, reserved over devices 0 and 2
    assert fake.reads == 2                                   # one read of each device's statistics


def test_each_devices_peak_is_noted_when_it_grows_at_most_once_a_second(probed):
    sink, emitted, fake = probed
    probe.on_step(None, 10.0)
    peaks = [e for e in emitted if e.get("k") == "device_memory"]
    assert peaks[-1]["devices"] == [{"cuda_index": 0, "peak_bytes": 2 * GIB, "reserved_peak_bytes": 3 * GIB},
                                    {"cuda_index": 2, "peak_bytes": 5 * GIB, "reserved_peak_bytes": 6 * GIB}]
    fake.held[2][1] = 8 * GIB
    probe.on_step(None, 10.5)                                # grown, but within the second
    assert len([e for e in emitted if e.get("k") == "device_memory"]) == 1
    probe.on_step(None, 11.5)
    probe.on_step(None, 13.0)                                # unchanged since: nothing more
    peaks = [e for e in emitted if e.get("k") == "device_memory"]
    assert len(peaks) == 2 and peaks[-1]["devices"][1]["peak_bytes"] == 8 * GIB


def test_the_peaks_at_the_end_are_written_by_the_exit_flush(probed):
    sink, emitted, fake = probed
    probe.on_step(None, 10.0)
    fake.held[0][1] = 9 * GIB                                 # the step that ran out of memory
    probe._flush()
    assert [e for e in emitted if e.get("k") == "device_memory"][-1]["devices"][0]["peak_bytes"] == 9 * GIB


class OutOfMemoryError(RuntimeError):
    pass


class Unprintable(Exception):
    def __str__(self):
        raise ValueError("no message for you")


def _raised_from(outer, inner):
    try:
        try:
            raise inner
        except Exception as caught:
            raise outer from caught
    except Exception as error:
        return error


@pytest.mark.parametrize("error, expected", [
    (OutOfMemoryError("anything"), True),
    (MemoryError(), True),
    (RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.1 GiB total capacity)"), True),
    (RuntimeError("CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported"), True),
    (RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"), True),
    (RuntimeError("cuDNN error: CUDNN_STATUS_ALLOC_FAILED"), True),
    (RuntimeError("HIP out of memory. Tried to allocate 20.00 MiB"), True),
    (RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory: you tried to "
                  "allocate 1099511627776 bytes"), True),
    (RuntimeError("CUDA error: device-side assert triggered"), False),
    (ValueError("memory layout out of order"), False),
    (Unprintable(), False),
])
def test_out_of_memory_by_type_and_message(error, expected):
    assert probe.is_out_of_memory(type(error), error) is expected


def test_out_of_memory_raised_from_another_error_is_still_out_of_memory():
    wrapped = _raised_from(RuntimeError("training step failed"), RuntimeError("CUDA out of memory. Tried to allocate"))
    assert probe.is_out_of_memory(type(wrapped), wrapped)
    hidden = RuntimeError("retry failed")
    hidden.__context__, hidden.__suppress_context__ = RuntimeError("CUDA out of memory"), True
    assert not probe.is_out_of_memory(type(hidden), hidden)


def test_the_exception_hook_notes_an_out_of_memory_message(monkeypatch):
    emitted, handed_on = [], []
    monkeypatch.setattr(probe.runtime, "emit", emitted.append)
    monkeypatch.setattr(probe.runtime, "flush", lambda: None)
    monkeypatch.setattr(probe.sys, "excepthook", lambda *args: handed_on.append(args))
    probe._watch_exceptions()
    error = RuntimeError("CUDA error: out of memory")
    probe.sys.excepthook(RuntimeError, error, None)
    (event,) = [e for e in emitted if e.get("k") == "exception"]
    assert event["memory"] is True and event["type"] == "RuntimeError"
    assert handed_on == [(RuntimeError, error, None)]           # the program's own hook still runs
