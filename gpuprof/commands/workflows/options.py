"""What `gpuprof run` and `gpuprof try` are asked to do, each as one object, layered as coverage.py
layers its settings: gpuprof's defaults, then `[tool.gpuprof.run]` in the nearest pyproject.toml,
then the command line. A field the file may set stays None until `settled()` when the command line
did not give it; the command modules (cli/) and other callers (the demo, `run --verify`) build these
objects, the workflows read them."""

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, ClassVar, List, Optional, Tuple

from gpuprof.commands.workflows.run_config import settle


@dataclass
class ProgramOptions:
    """The program and the run folder, the same for every command that launches it."""

    target: List[str] = field(default_factory=list)    # SCRIPT and its arguments, or the command after --
    module: Optional[str] = None                        # -m MODULE
    command_mode: bool = False                          # `-- COMMAND`: target is the whole command
    python: Optional[str] = None                        # the interpreter for SCRIPT or -m MODULE
    out: Optional[str] = None                           # the run folder (or the folder of try's runs)
    interval: Optional[float] = None                    # the system sampling interval, seconds
    gpu: Optional[bool] = None                          # sample GPUs through NVML
    json_path: Optional[str] = None                     # --json FILE
    markdown: Optional[str] = None                      # --markdown FILE

    #: The fields `[tool.gpuprof.run]` may set for this command.
    FROM_FILE: ClassVar[Tuple[str, ...]] = ("out", "interval", "gpu", "python")

    def settled(self, cwd: str = "."):
        """A copy whose fields the command line left None hold the file's value, else the default."""
        given = {name: getattr(self, name) for name in self.FROM_FILE}
        values = settle(given, cwd)
        return dataclasses.replace(self, target=list(self.target or []),
                                   **{name: values[name] for name in self.FROM_FILE})


@dataclass
class RunRequest(ProgramOptions):
    """`gpuprof run` (and the demo)."""

    probes: Optional[bool] = None
    quiet: Optional[bool] = None
    live: Optional[bool] = None                         # None: when stderr is a terminal
    steps: Optional[int] = None                         # stop after N measured steps
    warmup_steps: int = 0
    gate_config: Optional[str] = None
    junit: Optional[str] = None
    verify: bool = False
    html: Optional[str] = None
    trace: Optional[str] = None
    strict: bool = False
    peak_tflops: Optional[float] = None
    price_per_gpu_hour: Optional[float] = None

    FROM_FILE: ClassVar[Tuple[str, ...]] = ("out", "interval", "probes", "gpu", "live", "quiet", "python",
                                            "peak_tflops", "price_per_gpu_hour")


@dataclass
class TryRequest(ProgramOptions):
    """`gpuprof try` (and `run --verify`, which runs it with its own rounds)."""

    set_: Optional[List[str]] = None                    # --set KEY=V1,V2
    input_ceiling: bool = False
    echo: Optional[List[int]] = None
    hdf5_cache: Optional[List[str]] = None
    fix: Optional[List[str]] = None
    top: int = 0
    loader: Optional[str] = None
    steps: int = 40
    warmup_steps: int = 5
    rounds: int = 3
    max_rounds: int = 8
    budget: float = 900.0
    cold: bool = False
    min_window: float = 2.0
    quiet: bool = False
    say: Optional[Callable[[str], None]] = None         # where progress lines go (stderr by default)
    on_record: Optional[Callable[[dict], None]] = None  # called with the try record once it is summarised
