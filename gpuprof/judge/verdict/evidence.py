"""The numbers every rule reads, gathered once from the analysed sections of a run.

Pure: built from the `steps`, `dataloaders`, `system`, `copies`, `hdf5`, `environment`, `model` and
`frameworks` sections, so rules are tested with plain dictionaries."""

from dataclasses import dataclass, field

from gpuprof.judge.sections.peaks import boost_clock
from gpuprof.judge.sections.job_gpus import job_gpu_util, job_gpus, job_sm_active, nvml_uuid

INPUT_BOUND = 0.30          # data-wait share from which the verdict is an input bottleneck
INPUT_NOTABLE = 0.15        # data-wait share worth a secondary finding and input fixes
TRANSFER_NOTABLE = 0.20     # copy-time share of the step
#: The training threads' wait for a core, of the time they want one, from which the cores count as
#: fought over (the contended input rule, the input's cost under a compute verdict, training-threads).
TRAINING_QUEUED = 0.15
DISK_RATE = 5e6             # producer real disk reads, bytes per second of producing
SAMPLED_DISK_WAIT = 0.3     # a hand-written loop's sampled data wait on the disk from which it reads the disk
NO_IDLE_CORES = 0.15        # idle cores under this share of the machine's count as none idle
CPU_PRESSURE_CONTENDED = 0.25   # CPU pressure (some) from which threads fight over cores
MIN_STEPS = 20              # steps for full confidence
#: Wait sources of loops that make their batches in the training thread, without a DataLoader.
HANDWRITTEN = ("before-first-forward", "sampled")


@dataclass
class Evidence:
    steps: int = 0
    measured_steps: int = 0
    wait_share: float | None = None
    wait_source: str | None = None
    window_s: float | None = None
    loader: dict | None = None                   # the dominant DataLoader's section entry
    producer_cpu_ratio: float | None = None      # CPU over wall while producing batches
    producer_user_ratio: float | None = None     # ... of which user-space CPU (preprocessing, decoding)
    producer_runnable_ratio: float | None = None # CPU plus time waiting for a CPU, over wall
    producer_helped_ratio: float | None = None   # CPU of the producer's other threads meanwhile (intra-op), over wall
    producer_cores: float | None = None          # cores the producers used on average over the window
    producer_disk_rate: float | None = None      # real disk bytes per second of producing
    producer_real_read_ratio: float | None = None
    cpu_count: int = 1
    cores_busy: float | None = None              # the job's CPU seconds per second
    cores_free: float = 0.0
    machine_idle: float | None = None
    iowait: float | None = None
    io_pressure: float | None = None
    cpu_pressure: float | None = None
    disk_busy: float | None = None
    gpu: bool = False
    gpu_util: float | None = None                # the job's GPUs: share of the measured steps a kernel ran (NVML)
    gpu_sm_active: float | None = None           # ... share of their SMs busy (GPM), where the GPUs have it
    gpu_mem_free_share: float | None = None
    gpu_count: int = 0                           # whole GPUs NVML shows (MIG instances not counted apart)
    gpu_figures: list | None = None              # per GPU: (index, util_gpu, mem_used_max_bytes, sm_active); the index is the
                                                 # job's CUDA index where its devices are known by UUID, else NVML's
    copy_share: float | None = None
    copies: dict = field(default_factory=dict)
    hdf5: list = field(default_factory=list)
    memory_available: int | None = None          # bytes the machine had available when the run ended
    open_files_limit: int | None = None
    process_rss: int | None = None               # the largest resident size of one process of the job
    data_parallel: bool = False
    data_parallel_where: str | None = None
    probes: bool = True
    attached: bool = False                       # figures from stacks sampled from outside (gpuprof attach)
    data_where: str | None = None                # the data-making function sampled inside the step
    largest_batch: int | None = None             # the largest batch the GPU's memory holds (analysis.memory)
    training_cpu_wait: float | None = None       # the training threads' wait for a CPU, of what they wanted
    training_cores: float | None = None          # cores the training process's threads kept busy over the window
    optimizer_share: float | None = None         # the optimizer step's sampled share of a step
    model: dict | None = None                    # the trained model as the probes noted it (probes.model_facts)
    cpu_flags: tuple = ()                        # the CPU's instructions the model-side advice asks about
    throttled_share: float | None = None         # share of the run the job's cgroup CPU quota throttled it
    evaluation: dict | None = None               # evaluation passes between training steps (analysis.evaluation)
    env: dict | None = None                      # the environment stepped (gymnasium), its time and phases
    env_share: float | None = None               # ... its share of the training time
    startup: dict | None = None                  # launch to the end of the first step (analysis.startup)
    ddp_syncs_per_step: float | None = None      # DDP gradient all-reduces per optimizer step (analysis.ddp_syncs)
    step_spread: float | None = None             # how far the measured steps' time spreads: p90 over median, minus 1
    program: dict | None = None                  # the run's command and its script's own options (analysis.script_flags)
    other_cores: float | None = None             # cores other processes kept busy over the steps, when notable
    counted_step: dict | None = None             # the counted step's FLOPs by op, dtype, ops and step time (efficiency)
    gpu_name: str | None = None                  # the job's (first) GPU as NVML names it
    job_gpu_count: int = 0                       # GPUs the job used (whole GPUs; MIG slices counted as such)
    one_rank_of_many: bool = False               # this is one trainer of a distributed job, analysed on its own
    gpu_clock_share: float | None = None         # the job's GPUs' mean SM clock while busy over the clock their
                                                 # data sheet's peaks are stated at (else NVML's top clock); lowest

    @property
    def inline_producer(self) -> bool:
        """Batches are made in the training thread itself (num_workers=0, or a hand-written loop)."""
        if self.wait_source in HANDWRITTEN:
            return True
        return bool(self.loader) and not (self.loader or {}).get("num_workers")

    @property
    def intra_op_threads(self) -> int:
        """The training process's intra-op threads: the count the DataLoader's probe noted, else the
        one the model's probe read at the first optimizer step (a program without a DataLoader), else
        torch's default of one per core."""
        noted = (self.loader or {}).get("torch_threads") or (self.model or {}).get("torch_threads")
        return max(int(noted or self.cpu_count or 1), 1)

    @property
    def idle_cores(self) -> float:
        """Cores nobody used: those the job left free over the measured steps, no more than the
        machine's idle share over the run. The one figure every statement about idle cores reads."""
        free = self.cores_free if self.cores_busy is not None else float(self.cpu_count)
        if self.machine_idle is not None:
            free = min(free, self.machine_idle * self.cpu_count)
        return free

    @property
    def no_idle_core(self) -> bool:
        """Every core in use: less than 15% of the cores idle."""
        return self.idle_cores < NO_IDLE_CORES * self.cpu_count

    @property
    def contended(self) -> bool:
        """Cores are fought over: none is idle, or runnable threads wait for a core (CPU pressure),
        which a CPU quota causes with idle cores on the machine."""
        return self.no_idle_core or (self.cpu_pressure is not None and self.cpu_pressure > CPU_PRESSURE_CONTENDED)


def gather(sections: dict) -> Evidence:
    steps = sections.get("steps") or {}
    system = sections.get("system") or {}
    loaders = sections.get("dataloaders") or []
    ev = Evidence()
    _read_steps(ev, steps)
    ev.probes = sections.get("probes", True)
    _read_system(ev, system)
    ev.evaluation = steps.get("evaluation") or None
    ev.env = sections.get("environment") or None
    ev.env_share = (ev.env or {}).get("share")
    ev.startup = sections.get("startup") or None
    ev.ddp_syncs_per_step = (sections.get("ddp_comm") or {}).get("syncs_per_step")
    ev.one_rank_of_many = bool(sections.get("rank") or sections.get("one_rank_of_many"))
    if loaders:
        ev.loader = loaders[0]
        _read_producer(ev, ev.loader.get("producer") or {})
    if ev.wait_source in HANDWRITTEN and steps.get("data_wait_cpu_share") is not None:
        _read_inline_producer(ev, steps)
    _read_gpus(ev, system.get("gpus") or [], sections.get("cuda_devices"))
    copies = sections.get("copies") or {}
    ev.copies = copies
    if copies.get("count") and copies.get("seconds") is not None and ev.window_s:
        ev.copy_share = min(copies["seconds"] / ev.window_s, 1.0)
    ev.hdf5 = sections.get("hdf5") or []
    ev.data_parallel = bool((sections.get("frameworks") or {}).get("data_parallel"))
    ev.data_parallel_where = (sections.get("frameworks") or {}).get("data_parallel_where")
    ev.model = sections.get("model") or None
    ev.program = sections.get("program_options") or None
    ev.optimizer_share = (((steps.get("sampled") or {}).get("shares")) or {}).get("optimizer")
    ev.cpu_flags = tuple(system.get("cpu_flags") or ())
    ev.largest_batch = (((sections.get("memory") or {}).get("headroom")) or {}).get("largest_batch")
    ev.counted_step = sections.get("counted_step") or None
    return ev


def _read_steps(ev: Evidence, steps: dict) -> None:
    """The step counts, data-wait share and training threads' CPU that every input rule starts from."""
    ev.steps = steps.get("count") or 0
    ev.measured_steps = steps.get("measured") or 0
    ev.attached = steps.get("basis") == "attached"
    ev.wait_share = steps.get("data_wait_share")
    ev.wait_source = steps.get("data_wait_source")
    ev.window_s = steps.get("window_s")
    if steps.get("p90_step_s") and steps.get("median_step_s"):
        ev.step_spread = max(steps["p90_step_s"] / steps["median_step_s"] - 1.0, 0.0)
    training = steps.get("training_cpu") or {}
    ev.training_cpu_wait = training.get("wait_share")
    if training.get("run_s") is not None and ev.window_s:
        ev.training_cores = training["run_s"] / ev.window_s


def _read_system(ev: Evidence, system: dict) -> None:
    """The machine's CPUs, pressure, disk and memory, and the cgroup limits that bound the job."""
    job = system.get("job") or {}
    ev.cpu_count = system.get("cpu_count") or 1
    # The measured steps' own CPU when the samples cover them (start-up and imports left out).
    ev.cores_busy = job.get("cores_busy_in_window") if job.get("cores_busy_in_window") is not None else job.get("cores_busy")
    ev.cores_free = max(ev.cpu_count - (ev.cores_busy or 0.0), 0.0)
    cpu = system.get("cpu") or {}
    ev.machine_idle = cpu.get("idle")
    ev.iowait = cpu.get("iowait")
    pressure = system.get("pressure") or {}
    ev.io_pressure = pressure.get("io_some")
    ev.cpu_pressure = pressure.get("cpu_some")
    ev.disk_busy = (system.get("disk") or {}).get("busy")
    memory = system.get("memory") or {}
    ev.memory_available = memory.get("available_bytes")
    limit = system.get("cpu_limit") or {}
    if limit.get("memory_limit_bytes"):
        # A cgroup's memory limit bounds the job whatever the host has free.
        ev.memory_available = min(ev.memory_available or limit["memory_limit_bytes"], limit["memory_limit_bytes"])
    ev.throttled_share = limit.get("throttled_share")
    ev.open_files_limit = memory.get("open_files_limit")
    ev.process_rss = job.get("process_rss_peak_bytes")
    others = system.get("others") or {}
    if others.get("notable"):
        ev.other_cores = others.get("other_cores")


def _read_producer(ev: Evidence, producer: dict) -> None:
    """The dominant DataLoader's producers as ratios over the time they spent making batches."""
    wall = producer.get("wall_s") or 0.0
    if not (wall > 0 and (producer.get("batches") or ev.attached)):
        return
    # CPU over wall is at most the job's cores, whatever the clocks' granularity made of short batches.
    cores = ev.cpu_count or 1
    ev.producer_cpu_ratio = min(producer.get("cpu_s", 0.0) / wall, cores)
    ev.producer_user_ratio = min((producer.get("cpu_s", 0.0) - producer.get("system_cpu_s", 0.0)) / wall, cores)
    ev.producer_runnable_ratio = min((producer.get("cpu_s", 0.0) + producer.get("runqueue_s", 0.0)) / wall, cores)
    if producer.get("process_cpu_s") is not None:
        ev.producer_helped_ratio = max(producer["process_cpu_s"] - producer.get("cpu_s", 0.0), 0.0) / wall
    ev.producer_disk_rate = producer.get("read_bytes", 0) / wall
    chars = producer.get("read_chars") or 0
    ev.producer_real_read_ratio = producer.get("read_bytes", 0) / chars if chars else None
    if ev.window_s:
        ev.producer_cores = producer.get("cpu_s", 0.0) / ev.window_s


def _read_inline_producer(ev: Evidence, steps: dict) -> None:
    """A hand-written loop makes batches in the training thread: its sampled wait stands for the producer."""
    ev.producer_cpu_ratio = ev.producer_user_ratio = steps["data_wait_cpu_share"]
    ev.producer_runnable_ratio = None
    ev.producer_cores = ev.producer_cpu_ratio * (ev.wait_share or 0.0)
    ev.data_where = steps.get("data_wait_where")
    if (steps.get("data_wait_disk_share") or 0.0) >= SAMPLED_DISK_WAIT:
        ev.producer_disk_rate, ev.producer_real_read_ratio = DISK_RATE, None


def _read_gpus(ev: Evidence, gpus: list, cuda_devices) -> None:
    """The job's own GPUs' utilisation, SM activity and memory headroom, where it used any."""
    used = job_gpus(gpus)
    if not used:
        return
    ev.gpu = True
    whole = [g for g in gpus if not g.get("mig")]
    ev.gpu_count = len(whole) or len(gpus)
    ev.job_gpu_count = len([g for g in used if not g.get("mig")]) or len(used)
    ev.gpu_util = job_gpu_util(gpus)
    ev.gpu_sm_active = job_sm_active(gpus)
    ev.gpu_figures = gpu_figures(gpus, whole, cuda_devices)
    ev.gpu_name = next((g.get("name") for g in used if g.get("name")), None)
    clocks = [g["sm_clock_mhz"] / (boost_clock(g.get("name")) or g["sm_clock_max_mhz"]) for g in used
              if g.get("sm_clock_mhz") and (g.get("sm_clock_max_mhz") or boost_clock(g.get("name")))]
    ev.gpu_clock_share = min(1.0, min(clocks)) if clocks else None
    frees = [1 - g["mem_used_max_bytes"] / g["mem_total_bytes"] for g in used
             if g.get("mem_used_max_bytes") and g.get("mem_total_bytes")]
    ev.gpu_mem_free_share = min(frees) if frees else None


def gpu_figures(gpus: list, whole: list, cuda_devices) -> list:
    """(index, utilisation, peak memory, SM activity (GPM) or None) per GPU. Where the job's CUDA
    devices are known by UUID, its own GPUs under the CUDA index the job gave them (cuda:0 is where
    DataParallel gathers, whatever NVML's order); else every whole GPU under NVML's index."""
    cuda_index = {nvml_uuid(d.get("uuid")): d.get("cuda_index") for d in cuda_devices or []
                  if d.get("uuid") and d.get("cuda_index") is not None}
    own = [(cuda_index[nvml_uuid(g.get("uuid"))], g.get("util_gpu"), g.get("mem_used_max_bytes"), g.get("sm_active"))
           for g in gpus if g.get("uuid") and nvml_uuid(g.get("uuid")) in cuda_index]
    if own:
        return sorted(own, key=lambda f: f[0])
    return [(g.get("index"), g.get("util_gpu"), g.get("mem_used_max_bytes"), g.get("sm_active")) for g in whole or gpus]
