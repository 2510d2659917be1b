"""One simulated CUDA device's timeline: streams, copy engines, events, kernels and memory, timed as
CUDA's documents say, with no torch in sight (the torch face drives it; tests drive it with a fake
clock).

Time is CLOCK_MONOTONIC seconds (`time.monotonic`), the clock every process of a run shares. Each
stream keeps a tail: when the work queued on it ends. Work is queued, never run: a launch returns at
once and the work "runs" from max(now, tail) on; the host waits only where CUDA makes it wait
(synchronisation, a copy that holds the host, a full launch queue). Kernels of all streams share
the device's compute (one after another); copies run on the copy engines, beside kernels.

Copies follow "API synchronization behavior" (CUDA Runtime API) and PyTorch's copy_kernel_cuda
(aten/src/ATen/native/cuda/Copy.cu: a blocking copy is cudaMemcpyAsync then cudaStreamSynchronize):
- host to device from pageable memory: the stream is synchronised first, then the copy is staged
  at the pageable bandwidth with the host held until it is done, non_blocking or not;
- host to device from pinned memory: queued on the stream and a copy engine; non_blocking returns
  at once, blocking holds the host until the stream (the copy included) is done;
- device to host: into pageable memory, the stream is synchronised and the host held until the copy
  is done; into pinned memory with non_blocking, queued like a pinned upload."""

import collections
import math
import time

from . import state

LAUNCH_QUEUE = 1024          # launches pending on one stream before a launch waits
BLOCK = 2 << 20              # the caching allocator reserves device memory in 2 MiB blocks
ROUND = 512                  # and rounds every allocation up to 512 bytes
MATMUL_TILE = 128 * 128      # a matmul's output elements one SM works on at a time (matmul_fill)
SPLIT_K = 1024               # the reduction depth one SM takes of a tile whose K is split


class RealClock:
    """time.monotonic, and a host that really waits: asleep, or spinning as CUDA's default schedule
    does (`spin`: the waiting thread's CPU time grows with the wait, other threads still run)."""

    def __init__(self, spin: bool = False):
        self.spin = spin

    @staticmethod
    def now() -> float:
        return time.monotonic()

    def sleep_until(self, t: float) -> None:
        if self.spin:
            # busy for 0.2 ms at a time, then the GIL is let go (torch waits with it released)
            while True:
                now = time.monotonic()
                if now >= t:
                    return
                end = min(t, now + 2e-4)
                while time.monotonic() < end:
                    pass
                time.sleep(0)
        while True:
            left = t - time.monotonic()
            if left <= 0:
                return
            time.sleep(left)


class FakeClock:
    """A clock for tests: it moves only when told to or when the host waits."""

    def __init__(self, start: float = 1000.0):
        self.t = start

    def now(self) -> float:
        return self.t

    def sleep_until(self, t: float) -> None:
        self.t = max(self.t, t)

    def advance(self, seconds: float) -> None:
        self.t += seconds


class NoRecorder:
    """Where a device's work goes when nobody keeps it."""

    def add(self, start, end, sm_active, kind, nbytes=0):
        pass

    def memory(self, now_bytes, peak_bytes):
        pass

    def flush(self):
        pass


class Stream:
    __slots__ = ("device", "stream_id", "priority", "tail", "pending", "capture")

    def __init__(self, device, stream_id: int, priority: int = 0):
        self.device = device
        self.stream_id = stream_id
        self.priority = priority
        self.tail = 0.0                        # when the work queued so far ends
        self.pending = collections.deque()     # end times of launches not yet finished
        self.capture = None                    # while a CUDA graph captures it: the kernels it took


def efficiency(value, dtype: str) -> float:
    """The share of the peak for `dtype`: `value` itself, or its entry for the dtype (float32's
    otherwise) where it holds one per math mode (a dict, or a spec's tuple of items)."""
    if isinstance(value, (int, float)):
        return float(value)
    table = dict(value)
    return table.get(dtype) or table.get("float32") or 0.7


class Event:
    """A CUDA event: `at` is when the stream it was recorded on reaches it (None: never recorded)."""
    __slots__ = ("enable_timing", "device", "at")

    def __init__(self, enable_timing: bool = False):
        self.enable_timing = enable_timing
        self.device = None
        self.at = None


class OutOfMemory(Exception):
    """An allocation the device cannot hold; the message is PyTorch's caching allocator's."""


class EventError(Exception):
    """An event read the way PyTorch refuses; `code` says which Python error it raises."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


def format_size(nbytes: float) -> str:
    """Bytes as PyTorch's out-of-memory message writes them."""
    if nbytes < 1024:
        return f"{int(nbytes)} bytes"
    for unit, scale in (("KiB", 1 << 10), ("MiB", 1 << 20)):
        if nbytes < scale * 1024:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes / (1 << 30):.2f} GiB"


class Memory:
    """A process's memory on one device as PyTorch's caching allocator keeps it: bytes of live
    tensors (allocated) inside reserved 2 MiB blocks that stay reserved until empty_cache. The CUDA
    context takes `context_bytes` of the device before any tensor."""

    def __init__(self, total: int, context_bytes: int, index: int = 0, pid: int = 0):
        self.total, self.context_bytes, self.index, self.pid = total, context_bytes, index, pid
        self.allocated = self.peak = self.reserved = self.peak_reserved = 0
        self.ooms = 0
        self.allocations = 0

    @property
    def capacity(self) -> int:
        return self.total - self.context_bytes

    def allocate(self, nbytes: int) -> None:
        size = -(-int(nbytes) // ROUND) * ROUND
        needed = -(-(self.allocated + size) // BLOCK) * BLOCK
        if needed > self.capacity:
            self.ooms += 1
            raise OutOfMemory(self.oom_message(size))
        self.allocated += size
        self.allocations += 1
        self.peak = max(self.peak, self.allocated)
        if needed > self.reserved:
            self.reserved = needed
            self.peak_reserved = max(self.peak_reserved, needed)

    def free(self, nbytes: int) -> None:
        size = -(-int(nbytes) // ROUND) * ROUND
        self.allocated = max(0, self.allocated - size)

    def empty_cache(self) -> None:
        self.reserved = -(-self.allocated // BLOCK) * BLOCK

    def reset_peaks(self) -> None:
        self.peak, self.peak_reserved = self.allocated, self.reserved

    def held(self) -> int:
        """What the driver sees this process hold on the device: its context and reserved blocks."""
        return self.context_bytes + self.reserved

    def free_bytes(self) -> int:
        return max(0, self.total - self.held())

    def oom_message(self, size: int) -> str:
        return (f"CUDA out of memory. Tried to allocate {format_size(size)}. GPU {self.index} has a total "
                f"capacity of {format_size(self.total)} of which {format_size(self.free_bytes())} is free. "
                f"Including non-PyTorch memory, this process has {format_size(self.held())} memory in use. "
                f"Of the allocated memory {format_size(self.allocated)} is allocated by PyTorch, and "
                f"{format_size(self.reserved - self.allocated)} is reserved by PyTorch but unallocated. "
                "If reserved but unallocated memory is large try setting "
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
                "for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")


class Device:
    """One CUDA device of one process: its streams' timelines, its copy engines and its memory."""

    def __init__(self, spec, index: int = 0, clock=None, recorder=None, pid: int = 0, time_scale: float = 1.0):
        self.spec = spec
        # every device duration (kernels, their gaps, copies) times this: the machine's time scale,
        # which keeps the device's pace against a simulated host slower than a real one
        self.time_scale = time_scale
        self.index = index
        self.clock = clock or RealClock()
        self.recorder = recorder or NoRecorder()
        self.memory = Memory(spec.memory_bytes, spec.context_bytes, index, pid)
        self.default_stream = Stream(self, 0)
        self.next_stream_id = 1
        self.compute_tail = 0.0
        self.engines = [0.0] * max(1, int(spec.copy_engines))
        self.busy_until = 0.0                 # the latest tail of any stream
        self.scale = spec.max_clock_mhz / spec.clock_mhz if 0 < spec.clock_mhz < spec.max_clock_mhz else 1.0

    def new_stream(self, priority: int = 0) -> Stream:
        stream = Stream(self, self.next_stream_id, priority)
        self.next_stream_id += 1
        return stream

    # ---- how long work takes

    def kernel_seconds(self, flops: float, nbytes: float, dtype: str = "float32", conv: bool = False,
                       attention: bool = False, fill: float = 1.0) -> float:
        """The longer of its arithmetic (flops at the dtype's peak times its efficiency, a
        convolution's own; a matmul that fills a share `fill` of the SMs below 1 lower still) and its
        memory traffic (bytes at the memory bandwidth), as a roofline has it; never under
        min_kernel_s; slowed by a clock held below its top."""
        spec = self.spec
        peak = spec.tflops.get(dtype) or spec.tflops.get("float32") or 1.0
        share = efficiency(spec.conv_efficiency if conv and spec.conv_efficiency else spec.efficiency, dtype)
        if fill < 1.0:
            share *= max(fill, 1e-6) ** spec.small_matmul_exponent
        rate = peak * 1e12 * share
        fused = dict(spec.attention_tflops or ()) if attention else {}
        if fused:
            # a fused attention kernel runs at its own measured rate, not its matmuls' (TF32 does not change it)
            rate = (fused.get("float32" if dtype == "tf32" else dtype) or fused.get("float32")) * 1e12
        seconds = max(flops / rate, nbytes / spec.memory_bandwidth)
        return max(spec.min_kernel_s, seconds * self.scale) * self.time_scale

    def matmul_fill(self, out_elements: int, flops: float) -> float:
        """The share of the SMs a matmul's work fills, at most 1: its output in tiles of 128x128
        (the tile NVIDIA's *Matrix Multiplication Background* guide describes cuBLAS's tensor-core
        kernels working in, one tile an SM at a time), each tile's reduction over K split in chunks
        of 1024 (cuBLAS splits a long K across SMs when the output has few tiles; the chunk is our
        choice), over the SMs."""
        if out_elements <= 0 or flops <= 0:
            return 1.0
        depth = flops / (2.0 * out_elements)
        tiles = math.ceil(out_elements / MATMUL_TILE) * max(1, math.ceil(depth / SPLIT_K))
        return min(1.0, tiles / self.spec.sm_count)

    def sm_share(self, work_items: float, per_sm: float = 2048) -> float:
        """The share of the SMs a kernel keeps active: its work items over what the SMs hold at once."""
        return min(1.0, max(work_items, 1) / (self.spec.sm_count * per_sm))

    def sleep_seconds(self, cycles: int) -> float:
        """torch.cuda._sleep(cycles): a spin of that many cycles at the SM clock."""
        return max(0, cycles) / (self.spec.clock_mhz * 1e6) * self.time_scale

    # ---- queuing work

    def _admit(self, stream: Stream) -> float:
        """Now, after waiting for room in the stream's launch queue when it is full."""
        now = self.clock.now()
        pending = stream.pending
        while pending and pending[0] <= now:
            pending.popleft()
        if len(pending) >= LAUNCH_QUEUE:
            self.wait_until(pending[len(pending) - LAUNCH_QUEUE])
            now = self.clock.now()
            while pending and pending[0] <= now:
                pending.popleft()
        return now

    def _queued(self, stream: Stream, end: float) -> None:
        stream.tail = end
        stream.pending.append(end)
        if end > self.busy_until:
            self.busy_until = end

    def kernel(self, stream: Stream, seconds: float, sm_active: float) -> tuple:
        """Queue a kernel; returns (start, end). The host does not wait. A kernel queued behind
        another starts `kernel_gap_s` after it ends (the device's own gap between kernels). On a
        stream a CUDA graph is capturing, the kernel is kept for the graph instead and does not run."""
        if stream.capture is not None:
            stream.capture.append((seconds, sm_active))
            now = self.clock.now()
            return now, now
        start = self._compute_start(stream)
        end = start + seconds
        self.compute_tail = end
        self._queued(stream, end)
        self.recorder.add(start, end, sm_active, state.KERNEL, 0)
        return start, end

    def replay(self, stream: Stream, kernels: list) -> None:
        """A CUDA graph's kernels queued on `stream` back to back, from one launch of the host."""
        for seconds, sm_active in kernels:
            self.kernel(stream, seconds, sm_active)

    def _compute_start(self, stream: Stream) -> float:
        """When work queued now on `stream` starts on the compute engine: now, or `kernel_gap_s` after
        the work it is queued behind (after waiting for room in the launch queue)."""
        now = self._admit(stream)
        behind = max(stream.tail, self.compute_tail)
        return max(now, behind + self.spec.kernel_gap_s * self.time_scale) if behind > now else now

    def stream_ready(self, stream: Stream) -> float:
        """When work queued on `stream` now would start: its tail, or now."""
        now = self.clock.now()
        return max(now, stream.tail, self.compute_tail if stream.tail > now else 0.0)

    def collective(self, stream: Stream, ready: float, everyone_ready: float, link_bytes: float,
                   sm_active: float) -> tuple:
        """An NCCL collective queued on `stream`: it runs from when this stream reaches it (`ready`,
        read before the ranks agreed on the host: that exchange is the simulator's, not the
        device's), waits inside for the last rank (`everyone_ready`), then moves `link_bytes` over
        the GPU's link after a fixed latency. Returns (start, end); the host does not wait."""
        self._admit(stream)
        behind = max(stream.tail, self.compute_tail)
        start = max(ready, behind + self.spec.kernel_gap_s * self.time_scale) if behind > ready else ready
        end = max(start, everyone_ready) + (self.spec.collective_latency_s
                                            + link_bytes / self.spec.link_bandwidth) * self.time_scale
        self.compute_tail = end
        self._queued(stream, end)
        self.recorder.add(start, end, sm_active, state.KERNEL, 0)
        return start, end

    def copy_to_device(self, stream: Stream, nbytes: int, pinned: bool, non_blocking: bool) -> tuple:
        """A host-to-device copy; returns (start, end) and leaves the host where CUDA leaves it."""
        if not pinned:
            return self._held_copy(stream, nbytes, self.spec.pageable_copy_bandwidth, 0, state.H2D)
        return self._queued_copy(stream, nbytes, self.spec.pinned_copy_bandwidth, 0, state.H2D, hold=not non_blocking)

    def copy_to_host(self, stream: Stream, nbytes: int, pinned: bool, non_blocking: bool) -> tuple:
        """A device-to-host copy into pinned or pageable host memory."""
        engine = 1 % len(self.engines)
        if pinned and non_blocking:
            return self._queued_copy(stream, nbytes, self.spec.pinned_copy_bandwidth, engine, state.D2H, hold=False)
        bandwidth = self.spec.pinned_copy_bandwidth if pinned else \
            (self.spec.pageable_d2h_bandwidth or self.spec.pageable_copy_bandwidth)
        return self._held_copy(stream, nbytes, bandwidth, engine, state.D2H)

    def _held_copy(self, stream, nbytes, bandwidth, engine, kind) -> tuple:
        """Stream synchronised first, then the copy with the host held until it is done."""
        self.wait_until(stream.tail)
        now = self.clock.now()
        start = max(now, self.engines[engine])
        end = start + (self.spec.copy_latency_s + nbytes / bandwidth) * self.time_scale
        self.engines[engine] = end
        self._queued(stream, end)
        self.recorder.add(start, end, 0.0, kind, nbytes)
        self.wait_until(end)
        return start, end

    def _queued_copy(self, stream, nbytes, bandwidth, engine, kind, hold: bool) -> tuple:
        """Queued after the stream's work on a copy engine; `hold`: the host waits for the stream."""
        now = self._admit(stream)
        start = max(now, stream.tail, self.engines[engine])
        end = start + (self.spec.copy_latency_s + nbytes / bandwidth) * self.time_scale
        self.engines[engine] = end
        self._queued(stream, end)
        self.recorder.add(start, end, 0.0, kind, nbytes)
        if hold:
            self.wait_until(end)
        return start, end

    # ---- memory

    def allocate(self, nbytes: int) -> None:
        """Room for a new tensor; raises OutOfMemory (PyTorch's message) when the device is full."""
        self.memory.allocate(nbytes)
        self.note_memory()

    def free(self, nbytes: int) -> None:
        self.memory.free(nbytes)
        self.note_memory()

    def note_memory(self, force: bool = False) -> None:
        """Tell the recorder what the driver sees this process hold (context and reserved blocks)."""
        memory = self.memory
        self.recorder.memory(memory.held(), memory.context_bytes + memory.peak_reserved)
        if force:
            self.recorder.flush()

    # ---- synchronisation

    def wait_until(self, t: float) -> None:
        """The host waits for the device until `t`; readers of the files see the work meanwhile."""
        if t > self.clock.now():
            self.recorder.flush()
            self.clock.sleep_until(t)

    def synchronize(self) -> None:
        """cudaDeviceSynchronize: the host waits for every stream of the device."""
        self.wait_until(self.busy_until)

    def stream_synchronize(self, stream: Stream) -> None:
        self.wait_until(stream.tail)

    def stream_query(self, stream: Stream) -> bool:
        return self.clock.now() >= stream.tail

    def wait_stream(self, stream: Stream, other: Stream) -> None:
        """Work queued on `stream` from now on starts after what `other` has queued so far."""
        stream.tail = max(stream.tail, other.tail)

    def record(self, event: Event, stream: Stream) -> None:
        event.device = self
        event.at = max(self.clock.now(), stream.tail)

    def wait_event(self, stream: Stream, event: Event) -> None:
        if event.at is not None:
            stream.tail = max(stream.tail, event.at)

    def event_query(self, event: Event) -> bool:
        return event.at is None or self.clock.now() >= event.at

    def event_synchronize(self, event: Event) -> None:
        if event.at is not None:
            self.wait_until(event.at)


def elapsed_ms(start: Event, end: Event, now: float) -> float:
    """cudaEventElapsedTime with PyTorch's checks before it (CUDAEvent::elapsed_time): both events
    timed, both recorded (`ValueError` in Python), both done (`RuntimeError`)."""
    if not (start.enable_timing and end.enable_timing):
        raise EventError("Both events must be created with argument 'enable_timing=True'.", "value")
    if start.at is None or end.at is None:
        raise EventError("Both events must be recorded before calculating elapsed time.", "value")
    if now < start.at or now < end.at:
        raise EventError("Both events must be completed before calculating elapsed time.", "runtime")
    return (end.at - start.at) * 1000.0
