"""One scenario under `gpuprof run`, as a user would run it: on the simulated device (a machine
folder made for it, the shim first on PYTHONPATH) or on the GPU at hand, then its report compared
with what the scenario expects.

gpuprof runs as `sys.executable -m gpuprof` with this gpuprof's package root on PYTHONPATH (after
the shim), so a source checkout and an installed package behave alike."""

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

from gpuprof.package import PACKAGE_ROOT
from gpuprof.commands.doctor.expectations import compare, readings

TIMEOUT_S = 600.0


@dataclass
class Outcome:
    scenario: object
    checks: list = field(default_factory=list)
    readings: dict = field(default_factory=dict)
    error: str = None              # why no report could be compared
    folder: str = None             # the scenario's machine, run folder, report and log
    seconds: float = 0.0
    expected_uuid: str = None
    machine: object = None         # whose GPUs the scenario's indices name

    @property
    def ok(self) -> bool:
        return self.error is None and all(check.ok for check in self.checks)


class Runner:
    """Runs scenarios one after another in `work_dir` (one folder each), with `python` as the
    program's interpreter. `machine` is None on the simulated device (each scenario's own machine
    is made) or the GPU at hand as a Machine (`--verify`)."""

    def __init__(self, work_dir: str, python: str, machine=None, timeout_s: float = TIMEOUT_S, env=None):
        self.work_dir = work_dir
        self.python = python
        self.machine = machine
        self.timeout_s = timeout_s
        self.env = dict(os.environ if env is None else env)
        self._count = 0

    def run(self, scenario) -> Outcome:
        self._count += 1
        folder = os.path.join(self.work_dir, f"{self._count:02d}-{_safe(scenario.name)}")
        os.makedirs(folder, exist_ok=True)
        machine, env = self._machine_and_environment(scenario, folder)
        outcome = Outcome(scenario, folder=folder, machine=machine)
        try:
            outcome.expected_uuid = scenario.expected_uuid(machine)
        except IndexError:
            outcome.error = f"it expects GPU {scenario.expect.gpu}, which its machine does not have"
            return outcome
        report_path = os.path.join(folder, "report.json")
        argv = [sys.executable, "-m", "gpuprof", "run", "--quiet", "--json", report_path,
                "--out", os.path.join(folder, "run")]
        argv += ([] if scenario.launcher else ["--python", self.python]) + scenario.command(self.python)
        started = time.monotonic()
        status, log = self._execute(argv, env, os.path.join(folder, "gpuprof.log"))
        outcome.seconds = time.monotonic() - started
        if status is None:
            outcome.error = f"gpuprof run did not finish within {self.timeout_s:g} s ({log})"
            return outcome
        try:
            with open(report_path) as source:
                report = json.load(source)
        except (OSError, ValueError):
            outcome.error = f"gpuprof run exited {status} without a report ({_last_line(log)})"
            return outcome
        if status != 0:
            outcome.error = f"the program failed: gpuprof run exited {status} ({_last_line(log)})"
        outcome.checks = compare(scenario.expect, report, machine, outcome.expected_uuid)
        outcome.readings = readings(report, outcome.expected_uuid)
        return outcome

    def _machine_and_environment(self, scenario, folder: str):
        env = dict(self.env)
        if self.machine is None:
            from gpuprof.testing.simgpu import SHIM, environment
            machine = scenario.machine
            env = environment(machine.create(os.path.join(folder, "machine")), env)
            first = [SHIM, PACKAGE_ROOT]
        else:
            machine, first = self.machine, [PACKAGE_ROOT]
        rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in first]
        env["PYTHONPATH"] = os.pathsep.join(first + rest)
        env.update(scenario.environment_for(machine))
        return machine, env

    def _execute(self, argv: list, env: dict, log_path: str):
        """(gpuprof's exit status, or None on timeout; the log's path). The run gets a session of its
        own so a timeout ends gpuprof, the program and its workers together."""
        with open(log_path, "wb") as log:
            child = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                     cwd=os.path.dirname(log_path), start_new_session=True)
            try:
                return child.wait(timeout=self.timeout_s), log_path
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(child.pid, signal.SIGKILL)
                except OSError:
                    pass
                child.wait()
                return None, log_path


def _last_line(log_path: str) -> str:
    try:
        with open(log_path, "rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - 4096))
            lines = [line.strip() for line in log.read().decode("utf-8", "replace").splitlines() if line.strip()]
    except OSError:
        lines = []
    return f"last line: {lines[-1]}" if lines else "no output"


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "scenario"


def machine_at_hand(nvml: dict):
    """The GPUs NVML sees (nvml_facts.read_nvml) as a Machine, so a scenario's GPU indices and UUID
    placeholders name the real GPUs under `--verify`."""
    from gpuprof.testing.simgpu.machine import Gpu, Machine, MigInstance
    gpus = [Gpu(name=g.get("name") or "unknown", uuid=g.get("uuid") or "", memory_bytes=g.get("memory_bytes") or 0,
                gpm=bool(g.get("gpm")),
                mig=[MigInstance(uuid=m.get("uuid") or "", gpu_instance_id=m.get("gpu_instance_id") or 0)
                     for m in g.get("mig_instances") or []])
            for g in nvml.get("gpus") or []]
    return Machine(gpus=gpus)
