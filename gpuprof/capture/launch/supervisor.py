"""Start the user's command, pass signals on the way plain Python would see them, wait, report status.

The rule:

- The child runs in a process group of its own, so a signal sent to gpuprof's group (`timeout`,
  `kill -- -PGID`, a shell's `kill %1`) reaches gpuprof only, and gpuprof forwards it once. A
  signal sent to gpuprof's pid is forwarded once too. Either way the job gets each signal once.
- A signal from the terminal (Ctrl-C, Ctrl-\\, Ctrl-Z, a resize, a hangup) is forwarded to the
  child's whole group, as the terminal would have sent it to plain python and its workers.
- Every forwardable signal is forwarded (USR1/USR2 for Slurm's pre-emption warning, ALRM, WINCH,
  CONT, TSTP, ...). gpuprof never dies of one and never kills the child on its own.
- A signal that was ignored when gpuprof started (nohup, `trap '' TERM`, background jobs) stays
  ignored: gpuprof installs nothing for it, the child inherits the ignore, nothing is forwarded.
- Ctrl-Z stops the job and then gpuprof, so the shell sees the job stopped; `fg`/`bg` continue
  both. A child that reads from the terminal while gpuprof holds it gets the terminal's foreground
  (as a shell would hand it over) instead of stopping on SIGTTIN.
- If gpuprof itself is killed (SIGKILL), the child is killed too: it never outlives its supervisor
  as an orphan nobody waits for.
- When the job ends after an interrupt or dies of a signal, what it left in its process group
  (DataLoader workers, pools) is ended at once, before the report (gpuprof.capture.launch.job_tree): a
  scheduler's TERM, TERM, KILL leaves nothing of the job behind, whenever each signal lands.

Signals are taken with sigtimedwait in the main thread. When the child has ended they stay blocked
(gpuprof writes its report and exits; blocked signals die with it), so a late signal never cuts the
report short or changes the exit status.
"""

import os
import signal
import subprocess
import time

from gpuprof.capture.launch.job_tree import end_leftovers

SI_KERNEL = 0x80      # si_code of a signal the kernel sent itself: a terminal's Ctrl-C, Ctrl-\, hangup
CLD_STOPPED = 5       # si_code of a SIGCHLD for a child that stopped
NICE = 10

# Never forwarded: those that cannot be caught, faults that only the faulting process gets,
# SIGCHLD (gpuprof's own child's news) and the two Python ignores itself (a broken pipe or a file
# size limit in gpuprof is gpuprof's own business).
_NOT_FORWARDED = {"SIGKILL", "SIGSTOP", "SIGCHLD", "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGTRAP",
                  "SIGSYS", "SIGPIPE", "SIGXFSZ", "SIGCLD", "SIGIOT", "SIGPOLL"}
_STOPS = (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU)
#: Signals whose arrival marks the run as interrupted in the report.
INTERRUPTS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}


def forwardable_signals() -> set:
    """Every signal a process can catch and pass on, real-time ones included."""
    found = {s for s in signal.Signals if s.name not in _NOT_FORWARDED}
    low, high = getattr(signal, "SIGRTMIN", None), getattr(signal, "SIGRTMAX", None)
    if low is not None and high is not None:
        found.update(range(int(low), int(high) + 1))
    return {int(s) for s in found}


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        low = int(getattr(signal, "SIGRTMIN", 34))
        return f"SIGRTMIN+{number - low}" if number >= low else f"signal {number}"


def step_aside() -> None:
    """Lower gpuprof's own priority once the child runs (the child keeps its own): on a machine the
    job saturates, the samplers and report work take what the job leaves instead of slowing it.
    Threads started from here on inherit it."""
    try:
        os.nice(NICE)
    except (AttributeError, OSError):
        pass


def _die_with_parent() -> None:
    """In the child between fork and exec: its own process group, SIGKILL if gpuprof dies, and the
    signal mask gpuprof started with (a mask survives exec: after one run gpuprof holds signals
    blocked, and a second run's program, `gpuprof try`'s, must not inherit that)."""
    os.setpgid(0, 0)
    if _INITIAL_MASK is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, _INITIAL_MASK)
    if _prctl is not None:
        _prctl(1, 9, 0, 0, 0)          # PR_SET_PDEATHSIG, SIGKILL


def _load_prctl():
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return None


_prctl = None
_INITIAL_MASK = None      # the signal mask before gpuprof blocked anything, taken at the first run


class Outcome:
    """How the child ended. `returncode` is as subprocess gives it (negative -N when the child died
    of signal N); `started` and `ended` are monotonic; `interrupted` says a SIGINT, SIGTERM, SIGHUP
    or SIGQUIT reached the job during the run; `signals` lists every signal gpuprof handled
    ({"signal", "from", "forwarded", "to", "t"})."""

    def __init__(self, pid: int, returncode: int, started: float, ended: float, interrupted: bool = False,
                 signals: list = None):
        self.leftovers_ended = []       # pids of job processes ended after the job's main process
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
    MAX_RECORDED = 200      # signals kept in the record (a resize storm must not grow it unbounded)

    def __init__(self, argv, env, cwd=None, poll_interval: float = 0.5, terminal_fd=None, on_stop=None,
                 stdout=None, stderr=None, job_processes=None):
        """`on_stop()` runs before gpuprof stops with the job (a live line gives the terminal back).
        `stdout`/`stderr` (files) replace the program's own only for `gpuprof try`'s repeated runs.
        `job_processes()` lists the (pid, start ticks) seen in the job's tree, for the leftovers."""
        self.on_stop = on_stop
        self.job_processes = job_processes
        self.stdout = stdout
        self.stderr = stderr
        self.argv = list(argv)
        self.env = env
        self.cwd = cwd
        self.poll_interval = poll_interval
        self.terminal_fd = _terminal_fd() if terminal_fd is None else terminal_fd
        self._early = []
        self._watched = set()
        self._previous = {}
        self._handed_terminal = False

    # -- the run -----------------------------------------------------------------------------------
    def run(self, on_started=None, on_tick=None) -> Outcome:
        """Run the child to its end. `on_started(pid)` runs once it exists; `on_tick()` while waiting.
        The forwarded signals stay blocked afterwards."""
        global _prctl, _INITIAL_MASK
        if _prctl is None:
            _prctl = _load_prctl()
        if _INITIAL_MASK is None:
            _INITIAL_MASK = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        self._watched = {s for s in forwardable_signals() if not _ignored(s)}
        for sig in self._watched:
            self._previous[sig] = _set_handler(sig, self._remember_early)
        try:
            proc = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd, close_fds=False,
                                    preexec_fn=_die_with_parent, stdout=self.stdout, stderr=self.stderr)
        except BaseException:
            self._restore_handlers()
            raise
        try:
            started = time.monotonic()
            signal.pthread_sigmask(signal.SIG_BLOCK, self._watched | {signal.SIGCHLD})
            step_aside()
            outcome = Outcome(pid=proc.pid, returncode=0, started=started, ended=started)
            for sig in self._early:
                self._forward(proc, outcome, sig, "gpuprof", group=False)
            if on_started is not None:
                on_started(proc.pid)
            self._wait(proc, outcome, on_tick)
            outcome.returncode = proc.returncode
            outcome.ended = time.monotonic()
            if outcome.interrupted or outcome.returncode < 0:
                outcome.leftovers_ended = end_leftovers(proc.pid, self._tracked())
            return outcome
        finally:
            self._take_terminal_back()
            self._restore_handlers()

    def _tracked(self) -> list:
        if self.job_processes is None:
            return []
        try:
            return list(self.job_processes())
        except Exception:       # a sampler thread changing its table: the group kill still holds
            return []

    def _restore_handlers(self) -> None:
        # The signals stay blocked, so putting the old handlers back opens no gap.
        for sig, handler in self._previous.items():
            _set_handler(sig, handler)
        self._previous = {}

    def _remember_early(self, signum, frame):
        self._early.append(signum)

    def _wait(self, proc, outcome, on_tick) -> None:
        watched = self._watched | {signal.SIGCHLD}
        while proc.poll() is None:
            info = signal.sigtimedwait(watched, self.poll_interval)
            if info is not None:
                if info.si_signo == signal.SIGCHLD:
                    self._child_changed(proc, outcome)
                else:
                    from_terminal = info.si_code == SI_KERNEL
                    origin = "terminal" if from_terminal else f"pid {info.si_pid}"
                    group = from_terminal or info.si_signo == signal.SIGCONT
                    self._forward(proc, outcome, info.si_signo, origin, group)
            if on_tick is not None:
                on_tick()

    # -- forwarding ----------------------------------------------------------------------------------
    def _forward(self, proc, outcome, sig, origin, group) -> None:
        if sig in INTERRUPTS:
            outcome.interrupted = True
        forwarded = True
        try:
            if group:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except (ProcessLookupError, PermissionError, OSError):
            forwarded = False
        if len(outcome.signals) < self.MAX_RECORDED:
            outcome.signals.append({"signal": signal_name(sig), "from": origin, "forwarded": forwarded,
                                    "to": "group" if group else "process", "t": time.monotonic()})
        if sig == signal.SIGCONT:
            self._give_terminal(proc)

    # -- job control ----------------------------------------------------------------------------------
    def _child_changed(self, proc, outcome) -> None:
        """A SIGCHLD: if the child stopped on the terminal (it read from it while gpuprof held it),
        hand it the terminal and let it go on; if it stopped of a Ctrl-Z it took directly, stop too."""
        try:
            info = os.waitid(os.P_PID, proc.pid, os.WSTOPPED | os.WNOHANG)
        except ChildProcessError:
            return
        if info is None or info.si_code != CLD_STOPPED:
            return
        if info.si_status in (signal.SIGTTIN, signal.SIGTTOU) and self._own_terminal():
            self._give_terminal(proc, force=True)
            try:
                os.killpg(proc.pid, signal.SIGCONT)
            except OSError:
                pass
        elif info.si_status in _STOPS:
            self._stop_with_child(proc)

    def _stop_with_child(self, proc) -> None:
        """The job stopped (Ctrl-Z, or a forwarded SIGTSTP it did not handle): stop gpuprof too, so
        the shell sees the whole job stopped; SIGCONT (fg, bg) continues gpuprof, which passes it on."""
        self._take_terminal_back()
        if self.on_stop is not None:
            try:
                self.on_stop()
            except Exception:
                pass
        os.kill(os.getpid(), signal.SIGSTOP)

    def _own_terminal(self) -> bool:
        if self.terminal_fd is None:
            return False
        try:
            return os.tcgetpgrp(self.terminal_fd) == os.getpgrp()
        except OSError:
            return False

    def _give_terminal(self, proc, force: bool = False) -> None:
        """After a continue, give the terminal back to the child if it had it and gpuprof is in the
        foreground again (fg, not bg)."""
        if not (force or self._handed_terminal) or not self._own_terminal():
            return
        if _set_foreground(self.terminal_fd, proc.pid):
            self._handed_terminal = True

    def _take_terminal_back(self) -> None:
        if not self._handed_terminal or self.terminal_fd is None:
            return
        try:
            if os.tcgetpgrp(self.terminal_fd) != os.getpgrp():
                _set_foreground(self.terminal_fd, os.getpgrp())
        except OSError:
            pass


def _ignored(sig: int) -> bool:
    try:
        return signal.getsignal(sig) == signal.SIG_IGN
    except (ValueError, OSError):
        return True


def _set_handler(sig, handler):
    try:
        return signal.signal(sig, handler)
    except (ValueError, OSError, TypeError):
        return None


def _terminal_fd():
    """A descriptor of the controlling terminal when gpuprof has one on its stdio, else None."""
    for fd in (0, 2, 1):
        try:
            if os.isatty(fd):
                return fd
        except OSError:
            continue
    return None


def _set_foreground(fd: int, pgrp: int) -> bool:
    """tcsetpgrp from a process that may be in the background: SIGTTOU must not stop gpuprof."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
    try:
        os.tcsetpgrp(fd, pgrp)
        return True
    except OSError:
        return False
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
