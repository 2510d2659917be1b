"""Start the user's command, pass signals the way plain Python would see them, wait, report status.

The child is a normal process in gpuprof's own process group, so a terminal's Ctrl-C reaches it
directly, exactly once; gpuprof does not forward those again. Signals sent to gpuprof alone
(`kill`, a batch scheduler) are forwarded to the child, once each. gpuprof never kills the child on
its own. Signals are taken with sigtimedwait in the main thread, so no Python signal handler runs in
the middle of gpuprof's work and the child starts with the default dispositions and an empty mask.
"""

import os
import signal
import subprocess
import time

WATCHED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
SI_KERNEL = 0x80      # si_code of a signal the kernel sent itself: a terminal's Ctrl-C, Ctrl-\, hangup


NICE = 10


def _step_aside() -> None:
    """Lower gpuprof's own priority once the child runs (the child keeps its own): on a machine the
    job saturates, the samplers and report work take what the job leaves instead of slowing it.
    Threads started from here on inherit it."""
    try:
        os.nice(NICE)
    except (AttributeError, OSError):
        pass


class Outcome:
    """How the child ended. `returncode` is as subprocess gives it (negative -N when the child died
    of signal N); `started` and `ended` are monotonic; `interrupted` says a SIGINT, SIGTERM, SIGHUP
    or SIGQUIT reached the job during the run; `signals` lists them ({"signal", "from",
    "forwarded", "t"})."""

    def __init__(self, pid: int, returncode: int, started: float, ended: float, interrupted: bool = False,
                 signals: list = None):
        self.pid = pid
        self.returncode = returncode
        self.started = started
        self.ended = ended
        self.interrupted = interrupted
        self.signals = signals if signals is not None else []

    @property
    def exit_status(self) -> int:
        """The status a shell would see from plain python: 128+N for death by signal N."""
        return 128 - self.returncode if self.returncode < 0 else self.returncode

    @property
    def died_of(self):
        return -self.returncode if self.returncode < 0 else None


class Supervisor:
    def __init__(self, argv, env, cwd=None, poll_interval: float = 0.5):
        self.argv = list(argv)
        self.env = env
        self.cwd = cwd
        self.poll_interval = poll_interval
        self._early = []

    def run(self, on_started=None, on_tick=None) -> Outcome:
        """Run the child to its end. `on_started(pid)` runs once it exists; `on_tick()` while waiting."""
        previous = {sig: signal.signal(sig, self._remember_early) for sig in WATCHED}
        old_mask = None
        try:
            proc = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd)
            started = time.monotonic()
            _step_aside()
            old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, set(WATCHED) | {signal.SIGCHLD})
            outcome = Outcome(pid=proc.pid, returncode=0, started=started, ended=started)
            for sig in self._early:
                self._forward(proc, outcome, sig, "gpuprof")
            if on_started is not None:
                on_started(proc.pid)
            self._wait(proc, outcome, on_tick)
            outcome.returncode = proc.returncode
            outcome.ended = time.monotonic()
            return outcome
        finally:
            # Signals that arrived after the child ended belong to it, not to gpuprof's report:
            # drain them, then give back the caller's mask and handlers.
            if old_mask is not None:
                self._drain()
                signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _remember_early(self, signum, frame):
        self._early.append(signum)

    def _wait(self, proc, outcome, on_tick) -> None:
        watched = set(WATCHED) | {signal.SIGCHLD}
        while proc.poll() is None:
            info = signal.sigtimedwait(watched, self.poll_interval)
            if info is not None and info.si_signo != signal.SIGCHLD:
                if info.si_code == SI_KERNEL:
                    # The terminal sent it to the whole foreground group: the child has it already.
                    outcome.interrupted = True
                    outcome.signals.append({"signal": signal.Signals(info.si_signo).name,
                                            "from": "terminal", "forwarded": False,
                                            "t": time.monotonic()})
                else:
                    self._forward(proc, outcome, info.si_signo, f"pid {info.si_pid}")
            if on_tick is not None:
                on_tick()

    @staticmethod
    def _forward(proc, outcome, sig, origin) -> None:
        outcome.interrupted = True
        forwarded = True
        try:
            proc.send_signal(sig)
        except (ProcessLookupError, OSError):
            forwarded = False
        outcome.signals.append({"signal": signal.Signals(sig).name, "from": origin,
                                "forwarded": forwarded, "t": time.monotonic()})

    @staticmethod
    def _drain() -> None:
        while signal.sigtimedwait(set(WATCHED) | {signal.SIGCHLD}, 0) is not None:
            pass
