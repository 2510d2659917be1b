"""One attach: the run folder, the samplers on the job's tree, py-spy reading its stacks, and the
saved record. Nothing is injected into the job and nothing is sent to it: the samplers read /proc
and NVML, py-spy reads the processes' memory without pausing them, and when gpuprof stops (the
duration is up, Ctrl-C, SIGTERM, the job ended) only py-spy is told to stop."""

import json
import os
import signal
import subprocess
import time

from gpuprof.commands.attach import pyspy, threads
from gpuprof.commands.attach.target import process_name, tree
from gpuprof.capture.launch.rundir import create_run_dir
from gpuprof.capture.launch.samplers import JobSamplers
from gpuprof.capture.launch.session import load_nvml
from gpuprof.capture.launch.supervisor import step_aside
from gpuprof.record.atomic import write_json_atomic
from gpuprof.record.redact import redact_argv
from gpuprof.record.run_header import RunHeader, SamplingSettings
from gpuprof.record.schema import RUN_FILE, STACKS_FILE, STACKS_FORMAT

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
THREADS_EVERY_S = 1.0   # how often the threads' CPU figures are read while py-spy samples
GRACE_S = 15.0          # after the duration: how long py-spy may take to write before it is told to stop
WRITE_S = 20.0          # after it is told to stop: how long it may take to write its samples


class AttachOptions:
    def __init__(self, out=None, duration_s: float = 30.0, rate_hz: int = 25, interval: float = 0.1, gpu: bool = True):
        self.out = out
        self.duration_s = duration_s
        self.rate_hz = rate_hz
        self.interval = interval
        self.gpu = gpu


class AttachSession:
    def __init__(self, pid: int, options: AttachOptions, pyspy_path: str, nvml_loader=load_nvml,
                 clock=time.monotonic):
        self.pid = pid
        self.options = options
        self.pyspy_path = pyspy_path
        self.nvml_loader = nvml_loader
        self.clock = clock
        self.run_dir = None
        self.command = _cmdline(pid)
        self.stopped_by = None
        self.pyspy_error = None
        self._stop_asked = None
        self.save_error = None

    def prepare(self) -> str:
        label = os.path.basename(next((a for a in self.command if a.endswith(".py")), process_name(self.pid)))
        self.run_dir = create_run_dir(self.options.out, f"attach-{label.removesuffix('.py') or self.pid}")
        return self.run_dir

    def execute(self) -> None:
        """Sample the job until the duration is up, the job ends or gpuprof is asked to stop; save."""
        if self.run_dir is None:
            self.prepare()
        samplers = JobSamplers(self.options.interval, self.options.gpu, self.nvml_loader, self.clock)
        raw_path = os.path.join(self.run_dir, "pyspy-trace.json")
        err_path = os.path.join(self.run_dir, "pyspy-stderr.txt")
        wall_start = time.time()
        previous = self._catch_stops()
        # gpuprof and py-spy take what the job leaves (each stack is weighted by the time it stood
        # for, so late samples cost no accuracy); before the sampler threads start, as a thread
        # keeps the niceness it started with.
        step_aside()
        try:
            samplers.start(self.pid)
            before = threads.snapshot(tree(self.pid))
            started = self.clock()
            with open(err_path, "wb") as err:
                # Its own session: a Ctrl-C in the terminal reaches gpuprof alone, which tells py-spy
                # once (a second SIGINT could cut its writing short).
                spy = subprocess.Popen(pyspy.record_command(self.pyspy_path, self.pid, self.options.duration_s,
                                                            self.options.rate_hz, raw_path),
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                       start_new_session=True, preexec_fn=step_aside)
                latest = self._wait(spy, before, started, samplers)
            ended = self.clock()
        finally:
            samplers.stop()
            self._restore(previous)
        stacks = self._stacks(raw_path, err_path, spy.returncode, before, latest, ended - started)
        samplers.save(self.run_dir)
        write_json_atomic(os.path.join(self.run_dir, STACKS_FILE), stacks)
        self._save_meta(wall_start, started, ended, stacks)

    # -- waiting ---------------------------------------------------------------------------------
    def _wait(self, spy, before: dict, started: float, samplers) -> dict:
        """Until py-spy ends; the threads' figures are read every second, so a thread that ends
        before the attach does keeps its last reading."""
        latest = dict(before)
        deadline = started + self.options.duration_s + GRACE_S
        told = None
        while True:
            try:
                spy.wait(timeout=THREADS_EVERY_S)
                break
            except subprocess.TimeoutExpired:
                pass
            # The tree as the system sampler last saw it (no scan of /proc of its own).
            latest.update(threads.snapshot(samplers.job_pids() or {self.pid}))
            now = self.clock()
            if told is None and not _alive(self.pid):
                self.stopped_by = self.stopped_by or "job ended"
            if told is None and (self._stop_asked is not None or now > deadline):
                self.stopped_by = self.stopped_by or ("interrupted" if self._stop_asked else "duration")
                _signal(spy, signal.SIGINT)
                told = now
            elif told is not None and now - told > WRITE_S:
                _signal(spy, signal.SIGKILL)
        if self.stopped_by is None:
            self.stopped_by = "job ended" if not _alive(self.pid) else "duration"
        return latest

    def _catch_stops(self) -> dict:
        """Ctrl-C, SIGTERM and SIGHUP end the sampling early, with a report; one that was ignored
        when gpuprof started (a background job) stays ignored."""
        previous = {}
        for sig in STOP_SIGNALS:
            try:
                if signal.getsignal(sig) == signal.SIG_IGN:
                    continue
                previous[sig] = signal.signal(sig, self._asked_to_stop)
            except (ValueError, OSError):
                continue
        return previous

    def _asked_to_stop(self, signum, frame) -> None:
        self._stop_asked = signum

    @staticmethod
    def _restore(previous: dict) -> None:
        for sig, handler in previous.items():
            try:
                signal.signal(sig, handler)
            except (ValueError, OSError, TypeError):
                pass

    # -- the record --------------------------------------------------------------------------------
    def _stacks(self, raw_path, err_path, returncode, before, latest, duration) -> dict:
        try:
            with open(raw_path, "r", encoding="utf-8", errors="replace") as handle:
                processes = pyspy.parse_trace(json.load(handle))
        except (OSError, ValueError, RecursionError):
            processes = []
        try:
            with open(err_path, "r", encoding="utf-8", errors="replace") as handle:
                stderr = handle.read()
        except OSError:
            stderr = ""
        if not processes:
            self.pyspy_error = pyspy.first_error(stderr) if returncode else "py-spy took no samples"
        for path in (raw_path, err_path):
            try:
                os.unlink(path)
            except OSError:
                pass
        return {
            "format": STACKS_FORMAT,
            "pid": self.pid,
            "cwd": _cwd(self.pid) or (_cwd(processes[0]["pid"]) if processes else None),
            "rate_hz": self.options.rate_hz,
            "weights": "us",
            "duration_s": round(duration, 3),
            "ended_early": self.stopped_by != "duration",
            "stopped_by": self.stopped_by,
            "sampler": "py-spy",
            "sampler_error": self.pyspy_error,
            "processes": processes,
            "threads_cpu": threads.grown(before, latest),
        }

    def _save_meta(self, wall_start, started, ended, stacks) -> None:
        target = next((a for a in self.command if a.endswith(".py")), self.command[0] if self.command else "?")
        write_json_atomic(os.path.join(self.run_dir, RUN_FILE), RunHeader(
            command=redact_argv(self.command), kind="attach", target=redact_argv([target])[0],
            wall_start=wall_start, start_monotonic=started, end_monotonic=ended, pid=self.pid,
            extras={"attach": {"pid": self.pid, "stopped_by": self.stopped_by,
                               "duration_asked_s": self.options.duration_s, "rate_hz": self.options.rate_hz,
                               "sampler_error": self.pyspy_error}},
            settings=SamplingSettings(interval_s=self.options.interval, probes=False, gpu=self.options.gpu),
        ).to_json())


def _signal(process, sig) -> None:
    try:
        process.send_signal(sig)
    except (ProcessLookupError, OSError):
        pass


def _alive(pid: int) -> bool:
    """Running (an ended process its parent has not yet waited for is a zombie: ended)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")


def _cmdline(pid: int) -> list:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return [a.decode("utf-8", "replace") for a in handle.read().split(b"\0") if a]
    except OSError:
        return []


def _cwd(pid: int):
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None
