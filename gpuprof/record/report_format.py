"""The report's shape (`gpuprof.report/1`, docs/report-format.md) as types every renderer and the gate
read it through. Each section is a TypedDict, not total: a field the report leaves out (a section
of a CPU-only run, a run cut short) is absent, and a reader says what it shows then. A type checker
holds every literal key a renderer reads to these declarations (tests/unit/test_report_format.py
holds the declarations to docs/report-format.md and to the reports the golden runs build).

Only the sections' own fields are declared; the objects inside them that only one renderer reads
(a GPU's slowdown reasons, a loader's batch facts) stay plain dicts."""

from typing import Any, List, Optional, TypedDict


class Estimate(TypedDict, total=False):
    low: float
    high: float


class Fix(TypedDict, total=False):
    """One ranked fix of `advice`."""
    id: str
    title: str
    estimated_speedup: Optional[float]
    estimate: Estimate
    prior: float
    where: Optional[str]
    detail: Optional[str]
    snippet: Optional[str]
    why: Optional[str]
    change: Optional[dict]
    effort: int
    addresses: List[str]
    ranked_by: str
    frees_bytes: int
    measured: dict


class Verdict(TypedDict, total=False):
    """The step verdict, or one finding beside it (without `summary`)."""
    bottleneck: Optional[str]
    rank: int
    share: Optional[float]
    confidence: float
    busy_machine: str
    caveat: str
    evidence: dict
    reason: str
    summary: str
    basis: str
    corrected: dict


class Steps(TypedDict, total=False):
    count: int
    measured: int
    warmup: int
    source: Optional[str]
    pid: Optional[int]
    processes: int
    window_s: Optional[float]
    window_start: Optional[float]
    window_end: Optional[float]
    median_step_s: Optional[float]
    mean_step_s: Optional[float]
    max_step_s: Optional[float]
    p90_step_s: Optional[float]
    p99_step_s: Optional[float]
    data_wait_s: Optional[float]
    other_loaders_wait_s: Optional[float]
    data_wait_share: Optional[float]
    data_wait_source: Optional[str]
    data_wait_cpu_share: Optional[float]
    data_wait_where: Optional[str]
    data_wait_disk_share: Optional[float]
    backward_s: Optional[float]
    backward_share: Optional[float]
    sampled: dict
    training_cpu: dict
    evaluation: dict
    batch_size: Optional[int]
    steps_per_second: Optional[float]
    samples_per_second: Optional[float]
    steady: dict
    slow_start: Any
    slow_steps_at: Any
    periodic_slow_steps: Any


class Job(TypedDict, total=False):
    """The machine's cores and reads over the job's process tree."""
    cpu_user_s: float
    cpu_system_s: float
    cores_busy: Optional[float]
    cores_busy_in_window: Optional[float]
    read_bytes: int
    read_chars: int
    rss_peak_bytes: int
    process_rss_peak_bytes: int
    processes_max: int
    processes_seen: int


class GpuStatus(TypedDict, total=False):
    available: bool
    reason: Optional[str]
    driver: Optional[str]
    job_gpus: dict
    job_util: Optional[float]
    job_util_run: Optional[float]
    job_util_over: Optional[str]
    job_sm_active: Optional[float]


class System(TypedDict, total=False):
    samples: int
    interval_s: float
    sampled_s: float
    cpu_count: int
    cpu_flags: List[str]
    cpu_limit: dict
    cpu: dict
    job: Job
    memory: dict
    others: Optional[dict]
    disk: dict
    pressure: Optional[dict]
    gpus: List[dict]
    gpu_status: GpuStatus
    late_ticks: int
    sampler_errors: Any


class Copies(TypedDict, total=False):
    observed: bool
    count: int
    bytes: int
    pageable_bytes: int
    pinned_bytes: int
    non_blocking: int
    small: int
    seconds: Optional[float]
    basis: str
    share: Optional[float]
    timed: int
    estimated: int
    bytes_per_s: Optional[float]
    host_s: float
    gpu_s: float
    device_wait_s: float
    device_wait_share: Optional[float]
    dtypes: dict
    pin_memory: dict
    outside_steps: dict
    other_processes: dict
    ranks: List[dict]
    values: List[dict]


class Straggler(TypedDict, total=False):
    rank: int
    host: Optional[str]
    pid: int
    cause: Optional[str]
    own_step_s: float
    others_own_step_s: float
    data_wait_share: float
    others_data_wait_share: float
    producers_cpu_s: float
    others_producers_cpu_s: float
    others_waiting_share: float
    gpu_slowdown: Any


class DistributedJob(TypedDict, total=False):
    """`job`: a distributed job as a whole."""
    straggler: Optional[Straggler]
    headline_rank: int
    speedup_if_median: Optional[float]
    same_bottleneck: bool
    pace_bound: Any
    ranks: int
    hosts: List[str]


class Memory(TypedDict, total=False):
    device: str
    basis: str
    anatomy: dict
    peak_bytes: Optional[int]
    rest_bytes: Optional[int]
    rest_is: Optional[str]
    headroom: Optional[dict]
    growth: Optional[dict]
    findings: List[dict]
    oom: Optional[dict]
    shm: Optional[dict]


class Report(TypedDict, total=False):
    """One `report.json`."""
    format: str
    gpuprof_version: str
    run_dir: Optional[str]
    command: List[str]
    started_at: Optional[str]
    duration_s: Optional[float]
    exit_code: Optional[int]
    program: dict
    interpreter: dict
    provenance: dict
    stopped_after_steps: Optional[int]
    signal: Optional[str]
    interrupted: bool
    outcome: str
    verdict: Verdict
    findings: List[Verdict]
    advice: List[Fix]
    memory: Memory
    system: System
    processes: dict
    ranks: List[dict]
    job: Optional[DistributedJob]
    steps: Steps
    dataloaders: List[dict]
    copies: Copies
    cuda_devices: List[dict]
    hdf5: List[dict]
    environment: dict
    ddp_comm: dict
    startup: dict
    model: Optional[dict]
    frameworks: dict
    attached: dict
    efficiency: dict
    overhead: dict
    notes: List[str]
    nodes: List[dict]
    run_dirs: List[str]
    verified: dict
