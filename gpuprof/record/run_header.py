"""run.json's header: the fields every kind of run writes (`gpuprof run`, `gpuprof attach`, a
notebook cell), declared once so the three writers cannot drift apart and readers find the same
keys in the same order whichever wrote it. Each writer adds its few fields of its own as extras.

Ground floor: stdlib and gpuprof's version only."""

import os
import sys
import time
from dataclasses import dataclass, field

from gpuprof.package import __version__
from gpuprof.record import provenance as run_provenance
from gpuprof.record.hosts import host_name
from gpuprof.record.schema import RUN_FORMAT


@dataclass(frozen=True)
class SamplingSettings:
    """How the run was sampled and measured: run.json's `settings`."""
    interval_s: float
    probes: bool
    gpu: bool
    max_steps: int = None
    warmup_steps: int = 0

    def to_dict(self) -> dict:
        return {"interval_s": self.interval_s, "probes": self.probes, "gpu": self.gpu,
                "max_steps": self.max_steps, "warmup_steps": self.warmup_steps}


@dataclass(frozen=True)
class RunEnd:
    """How the measured program ended. An attach measures a program it did not start and does
    not see end: no status, no signal."""
    returncode: int = None
    exit_code: int = None
    signal: str = None
    interrupted: bool = False
    signals: list = field(default_factory=list)


@dataclass(frozen=True)
class RunHeader:
    """The common fields of run.json. `interpreter` (a script or module run) follows `python`;
    `extras` (what only one kind of run knows) follow `signals`, before `record_notes`."""
    command: list
    kind: str
    target: str
    wall_start: float           # time.time() when the run began
    start_monotonic: float
    end_monotonic: float
    pid: int
    settings: SamplingSettings
    end: RunEnd = field(default_factory=RunEnd)
    record_notes: list = field(default_factory=list)
    interpreter: dict = None
    extras: dict = field(default_factory=dict)
    provenance: dict = None     # git state, torch and CUDA versions; None: read them now

    def to_json(self) -> dict:
        """run.json's content, keys in the order readers and saved runs have always had them;
        `provenance` (where known) after the extras."""
        recorded = self.provenance
        if recorded is None:
            recorded = run_provenance.collect(self.kind, self.interpreter)
        return {
            "format": RUN_FORMAT,
            "status": "finished",
            "gpuprof_version": __version__,
            "command": self.command,
            "kind": self.kind,
            "target": self.target,
            "host": host_name(),
            "python": sys.version.split()[0],
            **({"interpreter": self.interpreter} if self.interpreter is not None else {}),
            "platform": platform_name(),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.wall_start)),
            "start_monotonic": self.start_monotonic,
            "end_monotonic": self.end_monotonic,
            "duration_s": self.end_monotonic - self.start_monotonic,
            "pid": self.pid,
            "returncode": self.end.returncode,
            "exit_code": self.end.exit_code,
            "signal": self.end.signal,
            "interrupted": self.end.interrupted,
            "signals": self.end.signals,
            **self.extras,
            **({"provenance": recorded} if recorded else {}),
            "record_notes": self.record_notes,
            "settings": self.settings.to_dict(),
        }


def platform_name() -> str:
    """The OS, kernel and machine, as platform.platform() says it without the `uname -p`
    subprocess it starts on Linux."""
    u = os.uname()
    return f"{u.sysname}-{u.release}-{u.machine}"
