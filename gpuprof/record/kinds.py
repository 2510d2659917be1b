"""Every kind of event a process of the job writes into its event file, declared once.

An event is a JSON object whose "k" names its kind. Stream kinds are written by the probes'
streams (gpuprof.capture.probes.stream): per item a time and the columns below, first as rows of a
columnar event and later summed in blocks; their static fields say which stream an item belongs
to. Every other kind is one object per occurrence. Writers (probes) and readers (record.reader,
record.bounded, analysis) name kinds through these constants, so a new kind is added here first."""


class Kind:
    """One kind of event. A plain class: the probes import this in every process of the job."""

    __slots__ = ("name", "what", "columns", "static")

    def __init__(self, name: str, what: str, columns: tuple = (), static: tuple = ()):
        self.name = name
        self.what = what
        self.columns = columns      # a stream's value columns (after its time "t")
        self.static = static        # a stream's fields that name the stream

    @property
    def is_stream(self) -> bool:
        return bool(self.columns)


def _declare(*kinds) -> dict:
    return {kind.name: kind for kind in kinds}


KINDS = _declare(
    # streams
    Kind("step", "an optimizer step: host time before the first forward (f), this thread's CPU in it (fc), "
                 "seconds in backward() during the step (b), host seconds before the first forward spent waiting "
                 "for the GPU (fw)", columns=("f", "fc", "b", "fw"), static=("k", "pid")),
    Kind("bstep", "a backward pass taken as a step (no optimizer seen); the same columns as step",
         columns=("f", "fc", "b", "fw"), static=("k", "pid")),
    Kind("mem", "memory per step: resident bytes, CUDA allocated, peak and reserved",
         columns=("rss", "alloc", "peak", "reserved"), static=("k", "pid")),
    Kind("batch", "a batch taken from a DataLoader: seconds the consumer waited (w)", columns=("w",),
         static=("k", "l", "pid")),
    Kind("fetch", "a batch made by a producer: wall, CPU, kernel CPU, run-queue seconds, bytes read from disk "
                  "(rb) and through read calls (rc), and the CPU of the producer's whole process meanwhile (pc: "
                  "torch's intra-op threads working for it); the collate_fn's wall (co) and CPU (cc) seconds in it",
         columns=("wall", "cpu", "sys", "rq", "rb", "rc", "pc", "co", "cc"),
         static=("k", "l", "w", "ds", "pid")),
    # single events
    Kind("process", "the first event of every process: pid, parent, argv, how it started"),
    Kind("loader", "a DataLoader built: its settings and the line that built it"),
    Kind("epoch", "a DataLoader iterator started: seconds until its first batch"),
    Kind("batch_facts", "dtype, shape and bytes of one of a DataLoader's first batches"),
    Kind("worker_mem", "a DataLoader worker's private memory (copy-on-write growth)"),
    Kind("copies", "host-to-device copies, tallied in blocks: count, bytes, pageable bytes, host seconds, device "
                   "seconds of the copies timed by CUDA events (and their bytes), the host's wait for the device "
                   "inside blocking copies, and when the block's first and last copies were made (t0, t1)"),
    Kind("cuda_devices", "the CUDA devices this process uses (the current one and any holding memory): CUDA index, "
                         "UUID in NVML's spelling, name; and its CUDA_VISIBLE_DEVICES. Written again when the set "
                         "changes"),
    Kind("device_memory", "per CUDA device this process uses: the peak of its allocated and reserved bytes"),
    Kind("h5dataset", "an HDF5 data set opened: chunk shape, compression, chunk cache"),
    Kind("h5read", "reads of an HDF5 data set, tallied: reads, chunks touched, opens"),
    Kind("data_parallel", "nn.DataParallel in use, and where"),
    Kind("rank", "the process's rank in a torch.distributed job"),
    Kind("copy_values", "one of the first large float copies to a GPU, its values sampled: dtype, shape, bytes, "
                        "the line that copied it, and whether every value fits a byte (uint8_candidate, uint8_form)"),
    Kind("ddp_comm", "DistributedDataParallel's own timing at exit, per sampled iteration: forward, backward "
                     "compute, the gradient all-reduce, and the part of it overlapped with backward compute"),
    Kind("model", "the trained model, once: its class, the line calling it, parameter dtypes and device, autocast, "
                  "compiled or not, convolutions and their inputs' layout, the optimizer's class and foreach/fused, "
                  "the matmul flags and the GPU's compute capability"),
    Kind("flops", "one training step's floating-point operations, counted once (the third optimizer step, forward "
                  "and backward): the total, the largest ops, per dtype, the ops with no formula, the step's seconds "
                  "under the count, the transformer shape (layers, heads, head size, parameters, tokens); or why "
                  "it was skipped. On a CPU a second one (op_times) gives the wall time of those ops by op in a "
                  "later iteration (seconds_by_op)"),
    Kind("memory_anatomy", "parameters, gradients and optimizer state in bytes"),
    Kind("exception", "an exception that ended the program (out of memory among them)"),
    Kind("import_error", "the program ended on an uncaught ImportError: the module it could not import"),
    Kind("stack_samples", "the training thread's sampled stacks, weighted by the time each stood for"),
    Kind("thread_cpu", "the training process's threads once a second: CPU seconds run and seconds waited for a "
                       "CPU, summed since sampling began"),
    Kind("step_limit", "gpuprof stopped the program after --steps measured steps"),
    Kind("self_cost", "gpuprof's own CPU in this process, at its exit: its threads' CPU seconds (threads_s), and "
                      "per hot path (step, batch, fetch) the calls, the calls timed (one in 16, a step's end one in 64, by thread CPU) and "
                      "their seconds (hooks), with the estimate for all calls (hooks_s)"),
    Kind("startup_samples", "the thread that imported torch, sampled from that import to the end of the first step: "
                            "seconds per part of the start-up (imports, dataset, model load, ...) and the user's line"),
    Kind("augmentation", "a DataLoader's dataset read once for random augmentation: random calls and transforms "
                         "in its per-sample path (with their lines), the deterministic transforms, and whether its "
                         "source could be read"),
    Kind("image_sizes", "PIL's decoding and resizing in one process, timed for its first resizes: the decoded and "
                        "the target size, the format, and the seconds each took"),
    Kind("variant", "a `try` change applied (or refused, with why) at a DataLoader or file"),
    Kind("variant_serving", "a `try` variant began serving replayed batches"),
    Kind("eval_phase", "the trained model in eval mode between two training phases: when model.eval() was called "
                       "(t0) and when model.train() was called on the same model again (t)"),
    Kind("files_read", "`try --cold` only: the data files a process opened for reading"),
    Kind("env", "an environment stepped by the program (gymnasium's env or vector env, Stable-Baselines3's "
                "VecEnv, or a loop of its own over sub-envs): its library, class, vector or not, async or not, its "
                "number of sub-environments and the line that first stepped it"),
    Kind("env_steps", "the program's environment steps (outermost step calls: gymnasium's `step`, "
                      "Stable-Baselines3's `VecEnv.step`), summed since the first: calls and seconds, written at "
                      "most every half second and at exit"),
    Kind("rollout", "a collection phase between two updates (reinforcement learning): its span, its env steps, "
                    "the policy's inference calls and seconds, its stack samples' time by where they stood, and "
                    "its env steps' and policy calls' durations by quarter-octave bucket (env_hist, inf_hist)"),
    Kind("ray_cluster", "the Ray cluster the program joined (its address, None for one it started; its nodes) "
                        "and whether gpuprof could give the job's Ray workers its bootstrap, and why not"),
)

STREAMS = {name: kind for name, kind in KINDS.items() if kind.is_stream}

STEP, BSTEP, MEM, BATCH, FETCH = "step", "bstep", "mem", "batch", "fetch"
PROCESS, LOADER, EPOCH, BATCH_FACTS, WORKER_MEM = "process", "loader", "epoch", "batch_facts", "worker_mem"
COPIES, H5DATASET, H5READ, DATA_PARALLEL, RANK = "copies", "h5dataset", "h5read", "data_parallel", "rank"
MEMORY_ANATOMY, EXCEPTION, STACK_SAMPLES, STEP_LIMIT = "memory_anatomy", "exception", "stack_samples", "step_limit"
SELF_COST = "self_cost"
IMPORT_ERROR, THREAD_CPU, DDP_COMM = "import_error", "thread_cpu", "ddp_comm"
COPY_VALUES = "copy_values"
VARIANT, VARIANT_SERVING, FILES_READ = "variant", "variant_serving", "files_read"
AUGMENTATION = "augmentation"
IMAGE_SIZES = "image_sizes"
MODEL = "model"
FLOPS = "flops"
EVAL_PHASE = "eval_phase"
CUDA_DEVICES, DEVICE_MEMORY = "cuda_devices", "device_memory"
ENV, ENV_STEPS, ROLLOUT = "env", "env_steps", "rollout"
STARTUP_SAMPLES = "startup_samples"
RAY_CLUSTER = "ray_cluster"


def columns(name: str) -> tuple:
    return KINDS[name].columns
