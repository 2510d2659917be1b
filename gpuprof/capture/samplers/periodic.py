"""Run a sampler's tick at a fixed interval on its own thread, and notice when it falls behind."""

import threading
import time


class Periodic:
    """Calls `tick()` every `interval` seconds until stopped; counts ticks that ran late."""

    def __init__(self, tick, interval: float, name: str, clock=time.monotonic):
        self.tick = tick
        self.interval = interval
        self.clock = clock
        self.late_ticks = 0
        self.errors = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _loop(self) -> None:
        deadline = self.clock()
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception as exc:  # a sampler failure must never end the run
                self.errors.append(f"{exc.__class__.__name__}: {exc}")
                if len(self.errors) > 20:
                    return
            deadline += self.interval
            delay = deadline - self.clock()
            if delay < 0:
                self.late_ticks += 1
                deadline = self.clock()
                delay = 0.0
            self._stop.wait(delay)
