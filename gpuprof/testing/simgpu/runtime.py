"""The CUDA runtime state of one process on a simulated machine: its visible devices, lazy
initialisation, each host thread's current device and current streams, the files its work goes to,
and what a fork leaves to the child.

No torch here: the torch face asks this object for devices and streams. CUDA's current device and
current stream are per host thread (a new thread starts on device 0 and its default streams).
CUDA is initialised on first use, as torch does it lazily; a child forked after that cannot use the
device (torch raises "Cannot re-initialize CUDA in forked subprocess") and writes nothing of its
parent's."""

import collections
import os
import threading

from . import state
from .activity import Recorder
from .device import Device, RealClock
from .enumeration import visible_devices

FORK_ERROR = ("Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
              "you must use the 'spawn' start method")
NO_DEVICES = "No CUDA GPUs are available"


class InvalidDevice(Exception):
    """A device ordinal the process does not have (cudaErrorInvalidDevice)."""


class Runtime:
    def __init__(self, machine, folder: str = None, environ=None, clock=None, recorders: bool = True):
        self.machine = machine
        self.folder = folder
        self.specs = visible_devices(machine, environ)
        self.clock = clock or RealClock(spin=getattr(machine, "host_wait", "sleep") == "spin")
        self.recorders = recorders and folder is not None
        self.devices = {}                    # ordinal -> Device, made on first use
        self.initialized = False
        self.bad_fork = False
        self.pid = os.getpid()
        self.tls = threading.local()
        self.frees = collections.deque()     # (pid, ordinal, bytes) of tensors collected meanwhile
        self.lock = threading.Lock()

    # ---- initialisation

    def init(self) -> None:
        """torch.cuda._lazy_init: fails in a child forked after initialisation, or with no device."""
        if self.initialized and not self.bad_fork:
            return
        if self.bad_fork:
            raise RuntimeError(FORK_ERROR)
        if not self.specs:
            raise RuntimeError(NO_DEVICES)
        self.initialized = True

    def is_initialized(self) -> bool:
        return self.initialized and not self.bad_fork

    def after_fork_in_child(self) -> None:
        """The parent's devices stay the parent's: their files are closed here, never written."""
        for device in self.devices.values():
            writer = getattr(device.recorder, "writer", None)
            if writer is not None:
                writer.close()
        self.devices = {}
        self.frees.clear()
        self.lock = threading.Lock()
        if self.initialized:
            self.bad_fork = True
        self.pid = os.getpid()

    # ---- devices

    def check(self, ordinal: int) -> int:
        if not 0 <= ordinal < len(self.specs):
            raise InvalidDevice(ordinal)
        return ordinal

    def device(self, ordinal: int) -> Device:
        """The Device for a CUDA ordinal, initialising CUDA and opening its files on first use."""
        found = self.devices.get(ordinal)
        if found is not None:
            return found
        self.init()
        self.check(ordinal)
        with self.lock:
            found = self.devices.get(ordinal)
            if found is None:
                spec = self.specs[ordinal]
                recorder = None
                if self.recorders:
                    folder = spec.activity_dir(self.folder)
                    os.makedirs(folder, exist_ok=True)
                    recorder = Recorder(state.ActivityWriter(folder))
                found = Device(spec, ordinal, self.clock, recorder, self.pid,
                               time_scale=float(getattr(self.machine, "time_scale", 1.0) or 1.0))
                found.note_memory()
                self.devices[ordinal] = found
        return found

    def current(self) -> int:
        return getattr(self.tls, "device", 0)

    def set_current(self, ordinal: int) -> int:
        """Make `ordinal` this thread's current device; returns the previous one."""
        previous = getattr(self.tls, "device", 0)
        self.tls.device = ordinal
        return previous

    # ---- streams

    def current_stream(self, ordinal: int):
        streams = getattr(self.tls, "streams", None)
        if streams is not None:
            found = streams.get(ordinal)
            if found is not None:
                return found
        return self.device(ordinal).default_stream

    def set_stream(self, stream) -> None:
        streams = getattr(self.tls, "streams", None)
        if streams is None:
            streams = self.tls.streams = {}
        streams[stream.device.index] = stream

    # ---- memory of collected tensors (applied by the thread that next asks)

    def freed(self, held) -> None:
        """Called with a storage's [ordinal, bytes, pid] when it is collected, from whatever thread
        collects it (applied later, never in the middle of another update)."""
        self.frees.append((held[2], held[0], held[1]))

    def apply_frees(self) -> None:
        frees = self.frees
        while frees:
            try:
                pid, ordinal, nbytes = frees.popleft()
            except IndexError:
                return
            device = self.devices.get(ordinal)
            if device is not None and pid == self.pid:
                device.free(nbytes)

    # ---- the end

    def flush(self) -> None:
        for device in list(self.devices.values()):
            try:
                device.recorder.flush()
            except Exception:
                pass

    def close(self) -> None:
        """At exit: the last stretches and memory figures reach the files."""
        if os.getpid() != self.pid:
            return
        self.apply_frees()
        for device in list(self.devices.values()):
            try:
                device.note_memory(force=True)
                close = getattr(device.recorder, "close", None)
                if close is not None:
                    close()
            except Exception:
                pass
