"""One profiled run: run folder, samplers, supervisor, and the saved record. The CLI's `run` is a
thin layer over this object."""

import os
import resource
import sys
import time

from gpuprof.capture.launch.environment import child_environment
from gpuprof.capture.launch.rundir import create_run_dir, spans_nodes
from gpuprof.capture.launch.supervisor import Supervisor
from gpuprof.record.atomic import write_json_atomic
from gpuprof.record.redact import redact_argv
from gpuprof.record.run_header import RunEnd, RunHeader, SamplingSettings
from gpuprof.record.schema import EVENTS_DIR, RUN_FILE


def load_nvml():
    from gpuprof.capture.samplers.nvml import load_nvml as load
    return load()


class RunOptions:
    """How to run: the run folder, the sampling interval, which samplers and probes, the step limit."""

    def __init__(self, out: str = None, interval: float = 0.1, probes: bool = True, gpu: bool = True,
                 live: bool = False, max_steps: int = None, warmup_steps: int = 0, variant: dict = None,
                 output_dir: str = None, record_files: bool = False):
        self.out = out
        self.interval = interval
        self.probes = probes
        self.gpu = gpu
        self.live = live
        self.max_steps = max_steps
        self.warmup_steps = warmup_steps
        self.variant = variant          # `gpuprof try` only: the change the probes apply
        self.output_dir = output_dir    # `gpuprof try` only: the program's stdout/stderr go to files here
        self.record_files = record_files    # `gpuprof try --cold` only: the probes note the files read


class RunSession:
    def __init__(self, command, options: RunOptions, nvml_loader=load_nvml, clock=time.monotonic,
                 status_line=None, preload=None):
        """`preload()` runs once on the main thread while it waits for the child (between two
        signal checks): the report's imports, done early, make the wait after the program ends
        shorter. Never on another thread: two threads importing the same modules can meet
        importlib's deadlock breaker and see a partially initialised module."""
        self.preload = preload
        self.command = command
        self.options = options
        self.nvml_loader = nvml_loader
        self.clock = clock
        self.status_line = status_line
        self.run_dir = None
        self.supervisor = None
        self.save_error = None
        self.save_failure = None        # (what, why) when the run record could not be written
        self.system = None
        self.nvml = None
        self.samplers = None

    def prepare(self) -> str:
        self.run_dir = create_run_dir(self.options.out, self.command.label,
                                      per_node=spans_nodes(self.command.argv))
        return self.run_dir

    def settings(self) -> dict:
        return {
            "run_dir": os.path.abspath(self.run_dir),
            "events_dir": os.path.abspath(os.path.join(self.run_dir, EVENTS_DIR)),
            "probes": self.options.probes,
            "flush_s": 1.0,
            "max_steps": self.options.max_steps,
            "warmup_steps": self.options.warmup_steps,
            "supervisor_pid": os.getpid(),
            **({"variant": self.options.variant} if self.options.variant else {}),
            **({"record_files": True} if self.options.record_files else {}),
        }

    def execute(self):
        """Run the child to its end; save what was measured whatever the child did. Returns Outcome."""
        if self.run_dir is None:
            self.prepare()
        env = child_environment(os.environ, self.settings())
        on_stop = getattr(self.status_line, "suspend", None)
        outputs = self._open_outputs()
        self.supervisor = Supervisor(self.command.argv, env, on_stop=on_stop,
                                     stdout=outputs[0] if outputs else None, stderr=outputs[1] if outputs else None,
                                     job_processes=self._job_processes)
        wall_start = time.time()
        self._cpu_start = _own_cpu()
        try:
            outcome = self.supervisor.run(on_started=self._start_samplers, on_tick=self._on_tick)
        finally:
            self._stop_samplers()
            for stream in outputs or ():
                stream.close()
        self._own_cpu_s = _own_cpu() - self._cpu_start
        try:
            self._save(outcome, wall_start)
        except OSError as exc:
            self.save_error = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
            self.save_failure = (_written_name(exc.filename), exc.strerror or str(exc))
        return outcome

    def _open_outputs(self):
        """(stdout, stderr) files for the program when its output is kept aside (`gpuprof try`)."""
        folder = self.options.output_dir
        if not folder:
            return None
        return (open(os.path.join(folder, "program-stdout.txt"), "wb"),
                open(os.path.join(folder, "program-stderr.txt"), "wb"))

    # -- samplers ------------------------------------------------------------------------------
    def _start_samplers(self, pid: int) -> None:
        from gpuprof.capture.launch.samplers import JobSamplers
        self.samplers = JobSamplers(self.options.interval, self.options.gpu, self.nvml_loader, self.clock)
        self.samplers.start(pid)
        self.system, self.nvml = self.samplers.system, self.samplers.nvml

    def _job_processes(self) -> list:
        """(pid, start ticks) of every process the system sampler has seen in the job's tree."""
        system = self.samplers.system if self.samplers is not None else None
        return list(system.processes) if system is not None else []

    def _stop_samplers(self) -> None:
        if self.samplers is not None:
            self.samplers.stop()

    def _on_tick(self) -> None:
        if self.preload is not None:
            preload, self.preload = self.preload, None
            try:
                preload()
            except Exception:
                pass
        if self.status_line is not None and self.system is not None:
            self.status_line(self.system, self.nvml)

    # -- the record -----------------------------------------------------------------------------
    def _samplers_cpu(self) -> dict:
        return _samplers_cpu_of(self.samplers)

    def _save(self, outcome, wall_start: float) -> None:
        # The job may have removed its run folder: what the supervisor holds is saved all the same.
        notes = []
        if not os.path.isdir(os.path.join(self.run_dir, EVENTS_DIR)):
            os.makedirs(os.path.join(self.run_dir, EVENTS_DIR), exist_ok=True)
            notes.append("the run folder was removed while the job ran: the probes' events are lost; "
                         "the system figures and the exit status are kept")
        if outcome.leftovers_ended:
            count = len(outcome.leftovers_ended)
            notes.append(f"{count} process{'es' if count > 1 else ''} the job left behind (DataLoader workers, "
                         "pools) ended with it, as a scheduler's stop expects")
        if self.samplers is not None:
            self.samplers.save(self.run_dir)
        else:
            from gpuprof.capture.launch.samplers import JobSamplers
            JobSamplers(self.options.interval, False, None, self.clock).save(self.run_dir)
        write_json_atomic(os.path.join(self.run_dir, RUN_FILE), RunHeader(
            command=redact_argv(self.command.argv),
            kind=self.command.kind,
            target=self.command.target if self.command.kind != "command" else redact_argv([self.command.target])[0],
            interpreter=_interpreter_of(self.command),
            wall_start=wall_start, start_monotonic=outcome.started, end_monotonic=outcome.ended,
            pid=outcome.pid,
            end=RunEnd(returncode=outcome.returncode, exit_code=outcome.exit_status,
                       signal=_signal_name(outcome.died_of), interrupted=outcome.interrupted,
                       signals=outcome.signals),
            extras={"supervisor_cpu_s": self._own_cpu_s, **self._samplers_cpu()},
            record_notes=notes,
            settings=SamplingSettings(interval_s=self.options.interval, probes=self.options.probes,
                                      gpu=self.options.gpu, max_steps=self.options.max_steps,
                                      warmup_steps=self.options.warmup_steps),
        ).to_json())


def _samplers_cpu_of(samplers) -> dict:
    """{"samplers_cpu_s": {sampler: CPU seconds of its thread}} where the samplers ran."""
    cpu = {name: round(value, 6) for name, value in (getattr(samplers, "cpu_s", None) or {}).items()
           if value is not None}
    return {"samplers_cpu_s": cpu} if cpu else {}


def _written_name(filename) -> str:
    """The run-record file a write failed on, for a one-line message (its temporary name aside)."""
    if not filename:
        return "the run record"
    name = os.path.basename(str(filename))
    if name.startswith(".") and name.endswith(".tmp"):        # write_text_atomic's .NAME.PID.RANDOM.tmp
        name = name[1:].rsplit(".", 3)[0]
    return name


def _interpreter_of(command):
    """For a SCRIPT or -m MODULE run: the interpreter that ran it and gpuprof's own, and whether
    they see the same packages (the report says so when not); None for other runs."""
    if command.kind not in ("script", "module"):
        return None
    from gpuprof.capture.launch.command import same_environment
    python = command.argv[0]
    return {"path": python, "gpuprof": sys.executable, "same_environment": same_environment(python, sys.executable)}


def _own_cpu() -> float:
    """CPU seconds of gpuprof itself (all its threads, none of the job's processes)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _signal_name(number):
    if number is None:
        return None
    import signal
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
