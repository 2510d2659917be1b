"""The simulated GPU's device model with a fake clock: CUDA's queuing, copy and event semantics,
memory, device enumeration and the activity files, without torch and without waiting."""

import pytest

from gpuprof.testing.simgpu import Gpu, Machine, MigInstance, state
from gpuprof.testing.simgpu.activity import Recorder
from gpuprof.testing.simgpu.device import (LAUNCH_QUEUE, Device, Event, EventError, FakeClock, Memory, OutOfMemory,
                                           elapsed_ms)
from gpuprof.testing.simgpu.enumeration import visible_devices, whole_gpu
from gpuprof.testing.simgpu.runtime import FORK_ERROR, NO_DEVICES, Runtime

MB = 1 << 20


class ListRecorder:
    def __init__(self):
        self.records, self.memories = [], []

    def add(self, start, end, sm_active, kind, nbytes=0):
        self.records.append((start, end, sm_active, kind, nbytes))

    def memory(self, now_bytes, peak_bytes):
        self.memories.append((now_bytes, peak_bytes))

    def flush(self):
        pass


def make_device(**gpu):
    """A device whose queuing is exact: no gap between queued kernels and no per-copy latency unless
    a test asks for them (tests/unit/test_simgpu_calibration.py checks the calibrated defaults)."""
    gpu.setdefault("kernel_gap_s", 0.0)
    gpu.setdefault("copy_latency_s", 0.0)
    clock, recorder = FakeClock(), ListRecorder()
    spec = whole_gpu(Machine(gpus=[Gpu(**gpu)]).gpus[0], 0)
    return Device(spec, 0, clock, recorder), clock, recorder


def queue_kernels(device, seconds, count=10):
    for _ in range(count):
        device.kernel(device.default_stream, seconds / count, 1.0)


def test_a_launch_returns_at_once_and_the_work_runs_later():
    device, clock, recorder = make_device()
    t0 = clock.now()
    start, end = device.kernel(device.default_stream, 0.02, 0.5)
    assert clock.now() == t0
    assert (start, end) == (t0, t0 + 0.02)
    start2, end2 = device.kernel(device.default_stream, 0.01, 0.5)
    assert start2 == end and end2 == pytest.approx(t0 + 0.03)
    assert clock.now() == t0 and not device.stream_query(device.default_stream)
    assert [r[3] for r in recorder.records] == [state.KERNEL, state.KERNEL]


def test_a_pageable_copy_waits_for_the_queued_kernels_then_for_itself():
    device, clock, recorder = make_device(pageable_copy_bandwidth=10e9)
    t0 = clock.now()
    queue_kernels(device, 0.05)
    start, end = device.copy_to_device(device.default_stream, 100 * MB, pinned=False, non_blocking=True)
    copy_s = 100 * MB / 10e9
    assert start == pytest.approx(t0 + 0.05)
    assert clock.now() == pytest.approx(t0 + 0.05 + copy_s)
    assert recorder.records[-1][3] == state.H2D and recorder.records[-1][4] == 100 * MB


def test_a_pinned_non_blocking_copy_returns_at_once_and_its_events_time_only_the_copy():
    device, clock, _ = make_device(pinned_copy_bandwidth=20e9)
    t0 = clock.now()
    queue_kernels(device, 0.05)
    stream = device.default_stream
    before, after = Event(enable_timing=True), Event(enable_timing=True)
    device.record(before, stream)
    device.copy_to_device(stream, 200 * MB, pinned=True, non_blocking=True)
    device.record(after, stream)
    assert clock.now() == t0                           # the host never waited
    with pytest.raises(EventError) as not_done:
        elapsed_ms(before, after, clock.now())
    assert not_done.value.code == "runtime"
    device.event_synchronize(after)
    assert clock.now() == pytest.approx(t0 + 0.05 + 200 * MB / 20e9)
    assert elapsed_ms(before, after, clock.now()) == pytest.approx(200 * MB / 20e9 * 1000)


def test_a_pinned_copy_on_another_stream_overlaps_the_kernels():
    device, clock, _ = make_device(pinned_copy_bandwidth=20e9)
    t0 = clock.now()
    queue_kernels(device, 0.05)
    side = device.new_stream()
    start, end = device.copy_to_device(side, 20 * MB, pinned=True, non_blocking=True)
    assert start == t0 and end < t0 + 0.05


def test_a_pinned_blocking_copy_holds_the_host_until_the_stream_is_done():
    device, clock, _ = make_device(pinned_copy_bandwidth=20e9)
    t0 = clock.now()
    queue_kernels(device, 0.03)
    device.copy_to_device(device.default_stream, 20 * MB, pinned=True, non_blocking=False)
    assert clock.now() == pytest.approx(t0 + 0.03 + 20 * MB / 20e9)


def test_a_copy_to_the_host_waits_for_the_stream():
    device, clock, recorder = make_device(pageable_copy_bandwidth=10e9)
    t0 = clock.now()
    queue_kernels(device, 0.02)
    device.copy_to_host(device.default_stream, 4, pinned=False, non_blocking=False)
    assert clock.now() == pytest.approx(t0 + 0.02, abs=1e-6)
    assert recorder.records[-1][3] == state.D2H


def test_events_measure_device_time_and_synchronize_waits():
    device, clock, _ = make_device()
    t0 = clock.now()
    first, second = Event(enable_timing=True), Event(enable_timing=True)
    device.record(first, device.default_stream)
    queue_kernels(device, 0.01)
    device.record(second, device.default_stream)
    clock.advance(0.002)                               # the host does other things meanwhile
    assert not device.event_query(second)
    device.synchronize()
    assert clock.now() == pytest.approx(t0 + 0.01)
    assert device.event_query(second)
    assert elapsed_ms(first, second, clock.now()) == pytest.approx(10.0)


def test_event_refusals_follow_torch():
    device, clock, _ = make_device()
    recorded, never = Event(enable_timing=True), Event(enable_timing=True)
    device.record(recorded, device.default_stream)
    with pytest.raises(EventError, match="must be recorded") as error:
        elapsed_ms(recorded, never, clock.now())
    assert error.value.code == "value"
    untimed = Event(enable_timing=False)
    device.record(untimed, device.default_stream)
    with pytest.raises(EventError, match="enable_timing=True"):
        elapsed_ms(recorded, untimed, clock.now())


def test_a_stream_waits_for_an_event_recorded_on_another():
    device, clock, _ = make_device()
    t0 = clock.now()
    queue_kernels(device, 0.04)
    ready = Event()
    device.record(ready, device.default_stream)
    side = device.new_stream()
    device.wait_event(side, ready)
    start, _ = device.copy_to_device(side, MB, pinned=True, non_blocking=True)
    assert start == pytest.approx(t0 + 0.04)


def test_a_full_launch_queue_makes_the_host_wait():
    device, clock, _ = make_device()
    t0 = clock.now()
    for _ in range(LAUNCH_QUEUE):
        device.kernel(device.default_stream, 0.001, 1.0)
    assert clock.now() == t0
    device.kernel(device.default_stream, 0.001, 1.0)
    assert clock.now() == pytest.approx(t0 + 0.001)


def test_kernel_time_follows_flops_bytes_and_the_held_clock():
    device, _, _ = make_device(tflops={"float32": 50.0, "tf32": 400.0}, efficiency=0.5, memory_bandwidth=2e12,
                               min_kernel_s=3e-6)
    assert device.kernel_seconds(0, 0) == 3e-6
    assert device.kernel_seconds(1e12, 0) == pytest.approx(1 / 25)
    assert device.kernel_seconds(1e12, 0, "tf32") == pytest.approx(1 / 200)
    assert device.kernel_seconds(0, 2e9) == pytest.approx(1e-3)
    slow, _, _ = make_device(tflops={"float32": 50.0}, efficiency=0.5, max_sm_clock_mhz=2000, busy_sm_clock_mhz=1000)
    assert slow.kernel_seconds(1e12, 0) == pytest.approx(2 / 25)
    assert slow.sleep_seconds(1_000_000) == pytest.approx(1e-3)


def test_memory_is_reserved_in_blocks_and_an_overflow_says_what_pytorch_says():
    memory = Memory(total=4 << 30, context_bytes=512 * MB, index=1)
    memory.allocate(1000)
    assert memory.allocated == 1024 and memory.reserved == 2 * MB
    memory.allocate(1 << 30)
    memory.free(1 << 30)
    assert memory.allocated == 1024 and memory.reserved > 1 << 30       # the cache keeps its blocks
    assert memory.peak > 1 << 30
    memory.allocate(3 << 30)
    with pytest.raises(OutOfMemory) as error:
        memory.allocate(1 << 30)
    message = str(error.value)
    assert message.startswith("CUDA out of memory. Tried to allocate 1.00 GiB. GPU 1 has a total capacity of "
                              "4.00 GiB of which ")
    assert "this process has 3.50 GiB memory in use" in message
    assert "is reserved by PyTorch but unallocated" in message and "expandable_segments:True" in message
    assert memory.ooms == 1 and memory.allocated == 1024 + (3 << 30)
    memory.free(3 << 30)
    memory.empty_cache()
    assert memory.reserved == 2 * MB


def machine_of(count, **gpu):
    return Machine(gpus=[Gpu(**gpu) for _ in range(count)])


def nvml_indices(machine, **environ):
    return [spec.nvml_index for spec in visible_devices(machine, environ)]


def test_cuda_visible_devices_by_index_uuid_and_prefix():
    machine = machine_of(4)
    assert nvml_indices(machine) == [0, 1, 2, 3]
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES="2,0") == [2, 0]
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES=machine.uuid(3)) == [3]
    prefixes = [machine.uuid(i)[:12] for i in range(4)]
    unique = next(p for p in prefixes if prefixes.count(p) == 1)
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES=unique) == [prefixes.index(unique)]
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES=f"1,{machine.uuid(2)}") == [1, 2]
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES="") == []
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES=" 1 , 3 ") == [1, 3]


def test_the_first_invalid_entry_ends_the_list_and_a_repeat_empties_it():
    machine = machine_of(4)
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES="0,2,-1,1") == [0, 2]
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES="1,7,2") == [1]
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES="3,GPU-nope,0") == [3]
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES="GPU-,1") == []        # "GPU-" matches all: ambiguous
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES="1,1") == []
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES="2gpu") == [2]         # read as strtoul reads it


def test_cuda_device_order():
    small, big = Gpu(name="small", sm_count=40), Gpu(name="big", sm_count=132)
    machine = Machine(gpus=[small, big, Gpu(name="big too", sm_count=132)])
    assert nvml_indices(machine) == [1, 2, 0]                                # fastest first, ties by bus
    assert nvml_indices(machine, CUDA_DEVICE_ORDER="PCI_BUS_ID") == [0, 1, 2]
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES="0") == [1]            # indices are in CUDA's order
    assert nvml_indices(machine, CUDA_VISIBLE_DEVICES="0", CUDA_DEVICE_ORDER="PCI_BUS_ID") == [0]


def test_a_mig_uuid_makes_that_instance_the_device():
    machine = Machine(gpus=[Gpu(), Gpu(mig=[MigInstance(profile="1g.10gb", sm_count=16, memory_bytes=10 << 30),
                                            MigInstance(profile="3g.40gb", sm_count=60, memory_bytes=40 << 30)])])
    second = machine.gpus[1].mig[1]
    specs = visible_devices(machine, {"CUDA_VISIBLE_DEVICES": second.uuid})
    assert len(specs) == 1
    spec = specs[0]
    assert (spec.nvml_index, spec.gpu_instance_id, spec.uuid) == (1, second.gpu_instance_id, second.uuid)
    assert spec.name.endswith("MIG 3g.40gb") and spec.memory_bytes == 40 << 30 and spec.sm_count == 60
    assert spec.activity_dir("/m") == f"/m/dev1/mig{second.gpu_instance_id}"
    legacy = f"MIG-{machine.uuid(1)}/{second.gpu_instance_id}/0"
    assert [s.uuid for s in visible_devices(machine, {"CUDA_VISIBLE_DEVICES": legacy})] == [second.uuid]
    both = f"{machine.gpus[1].mig[0].uuid},{second.uuid},0"
    assert [s.uuid for s in visible_devices(machine, {"CUDA_VISIBLE_DEVICES": both})] == \
        [machine.gpus[1].mig[0].uuid, machine.uuid(0)]                     # one MIG device per process
    unset = visible_devices(machine, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    assert [s.uuid for s in unset] == [machine.uuid(0), machine.gpus[1].mig[0].uuid]


class FakeWriter:
    def __init__(self):
        self.records, self.memories, self.closed, self.writes = [], [], False, 0

    def add_many(self, records):
        self.records.extend(records)
        self.writes += 1

    def memory(self, now_bytes, peak_bytes):
        self.memories.append((now_bytes, peak_bytes))

    def close(self):
        self.closed = True


def test_back_to_back_work_is_one_record_with_its_mean_sm_share_written_once_an_interval():
    wall = FakeClock(0.0)
    writer = FakeWriter()
    recorder = Recorder(writer, interval=0.01, now=wall.now)
    recorder.add(10.0, 10.001, 1.0, state.KERNEL)
    recorder.add(10.001, 10.004, 0.5, state.KERNEL)
    recorder.add(10.0, 10.002, 0.0, state.H2D, 4096)          # a copy beside the kernels
    recorder.add(10.010, 10.011, 1.0, state.KERNEL)            # after an idle gap: a stretch of its own
    assert writer.records == []                                # finished stretches wait for the interval
    wall.advance(0.02)
    recorder.add(10.011, 10.012, 1.0, state.KERNEL)
    assert writer.records == [(10.0, 10.002, 0.0, state.H2D, 4096),
                              (10.0, 10.004, pytest.approx((0.001 + 0.0015) / 0.004), state.KERNEL, 0),
                              (10.010, 10.012, 1.0, state.KERNEL, 0)]
    assert writer.writes == 1                                  # one write for the interval's records
    ends = [r[1] for r in writer.records]
    assert ends == sorted(ends)                                # the file stays in the order work ends


def test_a_batch_of_records_extends_the_last_in_place_and_appends_the_rest(tmp_path):
    writer = state.ActivityWriter(str(tmp_path), pid=7)
    writer.add_many([(1.0, 2.0, 1.0, state.KERNEL, 0), (2.0, 3.0, 1.0, state.KERNEL, 0)])
    assert state.read_records(str(tmp_path)) == {7: [(1.0, 3.0, 1.0, state.KERNEL, 0)]}
    writer.add_many([(3.0, 4.0, 1.0, state.KERNEL, 0), (5.0, 6.0, 0.5, state.KERNEL, 0),
                     (5.5, 6.5, 0.0, state.H2D, 64)])
    writer.add(6.5, 7.0, 0.0, state.H2D, 32)
    writer.close()
    assert state.read_records(str(tmp_path)) == {7: [(1.0, 4.0, 1.0, state.KERNEL, 0), (5.0, 6.0, 0.5, state.KERNEL, 0),
                                                     (5.5, 7.0, 0.0, state.H2D, 96)]}


def test_memory_reaches_the_file_when_the_peak_grows():
    wall = FakeClock(0.0)
    writer = FakeWriter()
    recorder = Recorder(writer, interval=0.01, now=wall.now)
    recorder.memory(100, 100)
    recorder.memory(50, 100)                                   # a small drop waits for the interval
    assert writer.memories == [(100, 100)]
    recorder.memory(300, 300)
    assert writer.memories[-1] == (300, 300)
    recorder.memory(200, 300)
    recorder.flush()
    assert writer.memories[-1] == (200, 300)


def test_cuda_starts_lazily_once_and_a_forked_child_cannot_use_it():
    runtime = Runtime(machine_of(2), folder=None, environ={}, clock=FakeClock())
    assert not runtime.is_initialized()
    device = runtime.device(1)
    assert runtime.is_initialized() and device.index == 1 and runtime.device(1) is device
    runtime.after_fork_in_child()
    assert not runtime.is_initialized() and runtime.devices == {}
    with pytest.raises(RuntimeError, match="Cannot re-initialize CUDA in forked subprocess") as error:
        runtime.device(0)
    assert str(error.value) == FORK_ERROR


def test_a_child_forked_before_cuda_started_may_use_it():
    runtime = Runtime(machine_of(1), folder=None, environ={}, clock=FakeClock())
    runtime.after_fork_in_child()
    assert runtime.device(0).index == 0


def test_no_visible_device_means_no_cuda():
    runtime = Runtime(machine_of(2), folder=None, environ={"CUDA_VISIBLE_DEVICES": ""}, clock=FakeClock())
    with pytest.raises(RuntimeError, match=NO_DEVICES):
        runtime.init()


def test_each_thread_has_its_own_current_device_and_streams():
    import threading
    runtime = Runtime(machine_of(2), folder=None, environ={}, clock=FakeClock())
    side = runtime.device(1).new_stream()
    runtime.set_current(1)
    runtime.set_stream(side)
    seen = {}

    def other():
        seen["device"] = runtime.current()
        seen["stream"] = runtime.current_stream(1)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert runtime.current() == 1 and runtime.current_stream(1) is side
    assert seen == {"device": 0, "stream": runtime.device(1).default_stream}


def test_collected_memory_is_given_back_by_the_next_thread_that_asks():
    runtime = Runtime(machine_of(1), folder=None, environ={}, clock=FakeClock())
    device = runtime.device(0)
    device.allocate(10 * MB)
    runtime.freed([0, 10 * MB, runtime.pid])
    runtime.freed([0, 10 * MB, runtime.pid + 1])            # a storage the parent made before a fork
    assert device.memory.allocated == 10 * MB
    runtime.apply_frees()
    assert device.memory.allocated == 0


def test_a_device_in_slow_motion_stretches_kernels_gaps_and_copies_alike():
    gpu = Gpu(kernel_gap_s=1e-6, copy_latency_s=2e-6)
    spec = whole_gpu(Machine(gpus=[gpu]).gpus[0], 0)
    plain, slow = Device(spec, 0, FakeClock(), ListRecorder()), Device(spec, 0, FakeClock(), ListRecorder(), time_scale=2.5)
    assert slow.kernel_seconds(1e12, 1e6) == pytest.approx(2.5 * plain.kernel_seconds(1e12, 1e6))
    assert slow.kernel_seconds(0, 0) == pytest.approx(2.5 * spec.min_kernel_s)        # the launch floor too
    assert slow.sleep_seconds(1_000_000) == pytest.approx(2.5 * plain.sleep_seconds(1_000_000))
    for device in (plain, slow):
        device.kernel(device.default_stream, 0.001, 1.0)
        device.kernel(device.default_stream, 0.001, 1.0)
    gap = lambda d: d.recorder.records[1][0] - d.recorder.records[0][1]
    assert gap(slow) == pytest.approx(2.5 * gap(plain))
    copy = lambda d: (lambda se: se[1] - se[0])(d.copy_to_device(d.default_stream, 55_300_000, True, True))
    assert copy(slow) == pytest.approx(2.5 * copy(plain))
