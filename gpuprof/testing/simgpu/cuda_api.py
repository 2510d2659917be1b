"""The `torch.cuda` objects of the simulated device: streams, events, the device context, device
properties, memory statistics, synchronisation and `_sleep`, each answering as PyTorch's own does
(its torch.cuda documentation), from the process's Runtime.

`build(torch, runtime)` returns the names to set on `torch.cuda` (and its submodules)."""

import os

from . import cuda_graphs
from .device import Event as SimEvent, EventError, elapsed_ms
from .runtime import InvalidDevice


def build(torch, runtime) -> dict:
    """{name: object} for torch.cuda, bound to `runtime`."""
    api = _Api(torch, runtime)
    return api.names()


class _Api:
    def __init__(self, torch, runtime):
        self.torch = torch
        self.runtime = runtime
        self.Stream = _stream_class(self)
        self.Event = _event_class(self)
        self.device = _device_class(self)
        self.StreamContext = _stream_context_class(self)
        self.CUDAGraph = cuda_graphs.graph_class(self)

    def capturing(self) -> bool:
        """Whether a CUDA graph is capturing the current stream (never before a device is in use:
        optimizers ask at every step, and asking must not start CUDA on a device)."""
        runtime = self.runtime
        ordinal = runtime.current()
        if ordinal not in runtime.devices:
            return False
        return runtime.current_stream(ordinal).capture is not None

    # ---- devices

    def index(self, device=None) -> int:
        """A CUDA ordinal from None, an int, "cuda:1", a torch.device or a torch.cuda.device."""
        torch = self.torch
        if device is None:
            return self.runtime.current()
        if isinstance(device, self.device):
            return device.idx
        if isinstance(device, str):
            device = torch.device(device)
        if isinstance(device, torch.device):
            if device.type != "cuda":
                raise ValueError(f"Expected a cuda device, but got: {device}")
            return self.runtime.current() if device.index is None else device.index
        if isinstance(device, int) and not isinstance(device, bool):
            return device
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")

    def checked(self, device=None) -> int:
        """An ordinal of a device the process has, CUDA initialised."""
        self.runtime.init()
        ordinal = self.index(device)
        try:
            return self.runtime.check(ordinal)
        except InvalidDevice:
            raise invalid_ordinal(self.torch) from None

    def exchange(self, ordinal) -> int:
        if ordinal is None or ordinal < 0:
            return -1
        self.checked(ordinal)
        return self.runtime.set_current(ordinal)

    def maybe_exchange(self, ordinal) -> int:
        if ordinal is None or ordinal < 0:
            return -1
        return self.runtime.set_current(ordinal)

    def set_device(self, device) -> None:
        ordinal = self.index(device)
        if ordinal >= 0:
            self.exchange(ordinal)

    def current_device(self) -> int:
        self.runtime.init()
        return self.runtime.current()

    def device_count(self) -> int:
        return len(self.runtime.specs)

    def is_available(self) -> bool:
        return len(self.runtime.specs) > 0

    def get_device_properties(self, device=None):
        return _Properties(self.runtime.specs[self.checked(device)])

    def get_device_name(self, device=None) -> str:
        return self.get_device_properties(device).name

    def get_device_capability(self, device=None) -> tuple:
        props = self.get_device_properties(device)
        return props.major, props.minor

    def is_bf16_supported(self, including_emulation: bool = True) -> bool:
        if not self.is_available():
            return False
        return self.get_device_capability()[0] >= 8 or bool(including_emulation)

    def is_tf32_supported(self) -> bool:
        return self.is_available() and self.get_device_capability()[0] >= 8

    # ---- streams and synchronisation

    def sim_device(self, device=None):
        return self.runtime.device(self.checked(device))

    def current_stream(self, device=None):
        ordinal = self.checked(device)
        return self.Stream._wrap(self.runtime.current_stream(ordinal))

    def default_stream(self, device=None):
        return self.Stream._wrap(self.sim_device(device).default_stream)

    def set_stream(self, stream) -> None:
        if stream is not None:
            self.runtime.set_stream(stream._sim)

    def stream(self, stream):
        return self.StreamContext(stream)

    def synchronize(self, device=None) -> None:
        self.sim_device(device).synchronize()

    def sleep(self, cycles) -> None:
        """torch.cuda._sleep: a kernel spinning `cycles` clock cycles on one SM."""
        ordinal = self.checked()
        device = self.runtime.device(ordinal)
        device.kernel(self.runtime.current_stream(ordinal), device.sleep_seconds(int(cycles)),
                      1.0 / device.spec.sm_count)

    # ---- memory

    def _memory(self, device=None):
        """The Memory of a device this process used, or None (torch reports zeros before CUDA is
        initialised, and for a device the process never touched)."""
        if not self.runtime.is_initialized():
            return None
        self.runtime.apply_frees()
        found = self.runtime.devices.get(self.index(device))
        return None if found is None else found.memory

    def memory_allocated(self, device=None) -> int:
        memory = self._memory(device)
        return memory.allocated if memory else 0

    def max_memory_allocated(self, device=None) -> int:
        memory = self._memory(device)
        return memory.peak if memory else 0

    def memory_reserved(self, device=None) -> int:
        memory = self._memory(device)
        return memory.reserved if memory else 0

    def max_memory_reserved(self, device=None) -> int:
        memory = self._memory(device)
        return memory.peak_reserved if memory else 0

    def reset_peak_memory_stats(self, device=None) -> None:
        memory = self._memory(device)
        if memory:
            memory.reset_peaks()

    def empty_cache(self) -> None:
        for device in list(self.runtime.devices.values()):
            device.memory.empty_cache()
            device.note_memory()

    def mem_get_info(self, device=None) -> tuple:
        memory = self.sim_device(device).memory
        return memory.free_bytes(), memory.total

    def memory_stats_as_nested_dict(self, device=None) -> dict:
        memory = self._memory(device)
        if memory is None:
            return {}

        def pair(current, peak):
            return {"all": {"current": current, "peak": peak}}

        return {"allocated_bytes": pair(memory.allocated, memory.peak),
                "reserved_bytes": pair(memory.reserved, memory.peak_reserved),
                "active_bytes": pair(memory.allocated, memory.peak), "num_ooms": memory.ooms,
                "num_alloc_retries": 0, "allocation": {"all": {"allocated": memory.allocations}}}

    def memory_stats(self, device=None) -> dict:
        out = {}

        def flatten(prefix, value):
            if isinstance(value, dict):
                for key, inner in value.items():
                    flatten(f"{prefix}.{key}" if prefix else key, inner)
            else:
                out[prefix] = value

        flatten("", self.memory_stats_as_nested_dict(device))
        return dict(sorted(out.items()))

    def names(self) -> dict:
        out = {
            "Stream": self.Stream, "Event": self.Event, "device": self.device, "StreamContext": self.StreamContext,
            "is_available": self.is_available, "is_initialized": self.runtime.is_initialized,
            "init": self.runtime.init, "_lazy_init": self.runtime.init, "device_count": self.device_count,
            "current_device": self.current_device, "set_device": self.set_device,
            "_exchange_device": self.exchange, "_maybe_exchange_device": self.maybe_exchange,
            "get_device_name": self.get_device_name, "get_device_capability": self.get_device_capability,
            "get_device_properties": self.get_device_properties, "is_bf16_supported": self.is_bf16_supported,
            "is_tf32_supported": self.is_tf32_supported, "synchronize": self.synchronize,
            "current_stream": self.current_stream, "default_stream": self.default_stream,
            "set_stream": self.set_stream, "stream": self.stream, "_sleep": self.sleep,
            "memory_allocated": self.memory_allocated, "max_memory_allocated": self.max_memory_allocated,
            "memory_reserved": self.memory_reserved, "max_memory_reserved": self.max_memory_reserved,
            "memory_cached": self.memory_reserved, "max_memory_cached": self.max_memory_reserved,
            "reset_peak_memory_stats": self.reset_peak_memory_stats,
            "reset_max_memory_allocated": self.reset_peak_memory_stats,
            "reset_max_memory_cached": self.reset_peak_memory_stats,
            "empty_cache": self.empty_cache, "mem_get_info": self.mem_get_info,
            "memory_stats": self.memory_stats, "memory_stats_as_nested_dict": self.memory_stats_as_nested_dict,
            "_is_in_bad_fork": lambda: self.runtime.bad_fork,
            "can_device_access_peer": lambda device, peer: True,
            "get_arch_list": lambda: ["sm_80", "sm_86", "sm_90"],
            "get_sync_debug_mode": lambda: 0, "initial_seed": lambda: 0,
            "is_current_stream_capturing": self.capturing, "CUDAGraph": self.CUDAGraph,
            "graph_pool_handle": lambda: (0, 0),
            "get_rng_state": lambda device="cuda": self.torch.zeros(16, dtype=self.torch.uint8),
            "get_rng_state_all": lambda: [self.torch.zeros(16, dtype=self.torch.uint8) for _ in self.runtime.specs],
        }
        # Random numbers on the device are not simulated: seeding is accepted and kept nowhere.
        for name in ("ipc_collect", "set_sync_debug_mode", "manual_seed", "manual_seed_all", "seed", "seed_all",
                     "set_rng_state", "set_rng_state_all"):
            out[name] = noop(name)
        return out


def noop(name: str, result=None):
    """A function that accepts anything and does nothing; one object per name (torch.compile's
    tables refuse one object under two names)."""
    def function(*args, **kwargs):
        return result
    function.__name__ = function.__qualname__ = name
    return function


def invalid_ordinal(torch):
    error = getattr(torch, "AcceleratorError", RuntimeError)
    return error("CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported at some "
                 "other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing "
                 "CUDA_LAUNCH_BLOCKING=1")


class _Uuid:
    """What torch's `_CUuuid` gives: 8-4-4-4-12 lower-case hex with no prefix, and the 16 bytes."""

    def __init__(self, nvml_uuid: str):
        text = nvml_uuid.lower()
        self._text = text[4:] if text[:4] in ("gpu-", "mig-") else text
        digits = self._text.replace("-", "")
        self.bytes = [int(digits[i:i + 2], 16) for i in range(0, 32, 2)] if len(digits) == 32 else []

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return self._text


class _Properties:
    """torch.cuda.get_device_properties(i), as `_CudaDeviceProperties` answers."""

    def __init__(self, spec):
        self.name = spec.name
        self.major, self.minor = spec.capability[0], spec.capability[1]
        self.total_memory = spec.memory_bytes
        self.multi_processor_count = spec.sm_count
        self.uuid = _Uuid(spec.uuid)
        self.L2_cache_size = 50 << 20
        self.is_multi_gpu_board = 0
        self.is_integrated = 0
        self.max_threads_per_multi_processor = 2048
        self.warp_size = 32
        self.regs_per_multiprocessor = 65536
        self.gcnArchName = spec.name
        domain, bus, rest = (spec.pci_bus_id.split(":") + ["0", "0", "0"])[:3]
        self.pci_domain_id, self.pci_bus_id = int(domain or "0", 16), int(bus or "0", 16)
        self.pci_device_id = int((rest.split(".")[0] or "0"), 16)

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1 << 20)}MB, multi_processor_count={self.multi_processor_count}, "
                f"uuid={self.uuid}, L2_cache_size={self.L2_cache_size // (1 << 20)}MB)")


def _stream_class(api):
    torch = api.torch

    class Stream:
        """torch.cuda.Stream on the simulated device."""

        def __init__(self, device=None, priority: int = 0, **kwargs):
            self._sim = api.sim_device(device).new_stream(priority)

        @classmethod
        def _wrap(cls, sim):
            stream = cls.__new__(cls)
            stream._sim = sim
            return stream

        @property
        def device(self):
            return torch.device("cuda", self._sim.device.index)

        @property
        def device_index(self) -> int:
            return self._sim.device.index

        device_type = 1          # c10::DeviceType::CUDA

        @property
        def stream_id(self) -> int:
            return self._sim.stream_id

        @property
        def cuda_stream(self) -> int:
            return 0 if self._sim.stream_id == 0 else 0x7F0000000000 + 0x100 * self._sim.stream_id

        @property
        def priority(self) -> int:
            return self._sim.priority

        def wait_event(self, event) -> None:
            event.wait(self)

        def wait_stream(self, stream) -> None:
            self._sim.device.wait_stream(self._sim, stream._sim)

        def record_event(self, event=None):
            event = event if event is not None else api.Event()
            event.record(self)
            return event

        def query(self) -> bool:
            return self._sim.device.stream_query(self._sim)

        def synchronize(self) -> None:
            self._sim.device.stream_synchronize(self._sim)

        def is_capturing(self) -> bool:
            return self._sim.capture is not None

        def __enter__(self):
            self._context = api.StreamContext(self)
            self._context.__enter__()
            return self

        def __exit__(self, *exc):
            self._context.__exit__(*exc)
            return False

        def __eq__(self, other) -> bool:
            return isinstance(other, Stream) and other._sim is self._sim

        def __hash__(self) -> int:
            return hash((self._sim.device.index, self._sim.stream_id))

        def __repr__(self) -> str:
            return f"<torch.cuda.Stream device=cuda:{self.device_index} cuda_stream={hex(self.cuda_stream)}>"

    return Stream


def _event_class(api):
    runtime = api.runtime

    class Event:
        """torch.cuda.Event on the simulated device: it marks when a stream reaches it."""

        def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                     external: bool = False):
            self._sim = SimEvent(bool(enable_timing))

        def record(self, stream=None) -> None:
            stream = stream if stream is not None else api.current_stream()
            stream._sim.device.record(self._sim, stream._sim)

        def wait(self, stream=None) -> None:
            stream = stream if stream is not None else api.current_stream()
            stream._sim.device.wait_event(stream._sim, self._sim)

        def query(self) -> bool:
            device = self._sim.device
            return True if device is None else device.event_query(self._sim)

        def synchronize(self) -> None:
            device = self._sim.device
            if device is not None:
                device.event_synchronize(self._sim)

        def elapsed_time(self, end_event) -> float:
            try:
                return elapsed_ms(self._sim, end_event._sim, runtime.clock.now())
            except EventError as error:
                raise (ValueError if error.code == "value" else RuntimeError)(str(error)) from None

        @property
        def cuda_event(self) -> int:
            return id(self._sim)

        def ipc_handle(self):
            raise NotImplementedError("interprocess events are not simulated")

        def __repr__(self) -> str:
            return f"<torch.cuda.Event {hex(self.cuda_event) if self._sim.at is not None else 'uninitialized'}>"

        def __del__(self):
            # torch's ~CUDAEvent destroys a recorded event under a device guard; in a child forked
            # after CUDA was initialised the guard fails inside that destructor, and the C++ runtime
            # ends the process (std::terminate: SIGABRT), as seen on an H200 with torch 2.11. The
            # driver's state is broken from the fork on, before any after-fork handler has run.
            forked = runtime.bad_fork or (runtime.initialized and os.getpid() != runtime.pid)
            if self._sim.device is not None and forked:
                os.write(2, TERMINATE.encode())
                os.abort()

    return Event


#: What torch's C++ runtime prints when it ends a forked child that destroyed an inherited CUDA event.
TERMINATE = ("terminate called after throwing an instance of 'c10::AcceleratorError'\n"
             "  what():  CUDA error: initialization error\n")


def _device_class(api):
    class device:
        """torch.cuda.device: the current device inside a `with` block."""

        def __init__(self, device):
            self.idx = -1 if device is None or (isinstance(device, int) and device < 0) else api.index(device)
            self.prev_idx = -1

        def __enter__(self):
            self.prev_idx = api.exchange(self.idx)

        def __exit__(self, *exc):
            self.idx = api.maybe_exchange(self.prev_idx)
            return False

    return device


def _stream_context_class(api):
    class StreamContext:
        """torch.cuda.stream(s): `s` is its device's current stream inside the block."""

        def __init__(self, stream):
            self.stream = stream
            self.previous = None

        def __enter__(self):
            if self.stream is None:
                return
            sim = self.stream._sim
            self.previous = api.runtime.current_stream(sim.device.index)
            api.runtime.set_stream(sim)

        def __exit__(self, *exc):
            if self.stream is not None and self.previous is not None:
                api.runtime.set_stream(self.previous)
            return False

    return StreamContext
