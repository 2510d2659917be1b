"""Arms the probes without importing what they watch: each is installed the moment the program
itself finishes importing torch, h5py, gymnasium or Stable-Baselines3's vector envs (a post-import
hook on sys.meta_path)."""

import time

from .post_import import PostImportHook
from ...record import kinds


def _install_torch(torch) -> None:
    from . import runtime, dataloader, memory, steps

    from . import startup
    startup.start()                 # before the other probes: their set-up is start-up too
    dataloader.install(torch)
    from . import augmentation
    augmentation.install(torch)
    memory.install(torch)
    steps.install(torch)
    from . import model_facts
    model_facts.install(torch)
    from . import eval_phases
    eval_phases.install(torch)
    variant = variants_of()
    if variant:
        from . import variants
        variants.install_torch(torch, variant)
    from . import flops
    flops.install(torch)            # after the variants: a model they compile is not counted
    runtime.start_flush_timer()
    _watch_data_parallel(torch)
    _watch_distributed(torch)
    _watch_ddp(torch)
    if getattr(torch.version, "cuda", None):   # a CPU-only build has no device to copy to
        from . import copies, cuda_devices, device_wait
        copies.install(torch)
        cuda_devices.install(torch)
        device_wait.install(torch)


def _watch_data_parallel(torch) -> None:
    """Note once that nn.DataParallel is in use (the ddp advice rests on it)."""
    from . import runtime

    cls = torch.nn.DataParallel
    original = cls.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        try:
            from .where import locate
            where = locate().get("where")
        except Exception:
            where = None
        runtime.emit({"k": kinds.DATA_PARALLEL, "where": where})

    __init__.__wrapped__ = original
    cls.__init__ = __init__


DDP_TIMES = {"forward_s": "avg_forward_compute_time", "backward_compute_s": "avg_backward_compute_time",
             "comm_s": "avg_backward_comm_time", "overlap_s": "avg_backward_compute_comm_overlap_time"}


def _watch_ddp(torch) -> None:
    """Keep (weakly) the first DistributedDataParallel model, and note the timing DDP keeps of
    itself: how long its gradient all-reduce takes and how much of it overlaps the backward pass.
    Read from DDP's own logger after an optimizer step (its backward is over, so nothing writes
    those figures meanwhile), at most once a second, only when DDP sampled a new iteration:
    nothing is timed in the program, and the model is never kept alive by gpuprof."""
    import weakref
    from . import runtime, steps

    cls = getattr(getattr(torch.nn, "parallel", None), "DistributedDataParallel", None)
    if cls is None:
        return
    original = cls.__init__
    kept = []

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        if not kept:
            try:
                kept.append(weakref.ref(self))
            except TypeError:
                pass

    seen = {"iteration": None}

    def note(now) -> None:
        model = kept[0]() if kept else None
        if model is None:
            return
        data = model._get_ddp_logging_data()
        if data.get("iteration") == seen["iteration"]:
            return
        seen["iteration"] = data.get("iteration")
        times = {name: data.get(key) / 1e9 for name, key in DDP_TIMES.items() if isinstance(data.get(key), (int, float))}
        if times.get("comm_s"):
            # DDP counts synced iterations only (no_sync ones not): against the optimizer steps so
            # far, the all-reduces a step makes.
            runtime.emit(dict(times, k=kinds.DDP_COMM, t=now, iteration=data.get("iteration"),
                           steps=steps.count()))

    __init__.__wrapped__ = original
    cls.__init__ = __init__
    runtime.each_second(note)


def _watch_distributed(torch) -> None:
    """Note this process's rank once torch.distributed is initialised (torchrun sets RANK in the
    environment, but torch.multiprocessing.spawn and hand-made launchers pass it as an argument)."""
    from . import runtime

    dist = getattr(torch, "distributed", None)
    original = getattr(dist, "init_process_group", None) if dist is not None else None
    if original is None or getattr(original, "_gpuprof", False):
        return

    def init_process_group(*args, **kwargs):
        result = original(*args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        try:
            runtime.emit({"k": kinds.RANK, "t": time.monotonic(), "rank": int(dist.get_rank()),
                          "world_size": int(dist.get_world_size()), "backend": str(dist.get_backend())})
        except Exception:
            pass
        return result

    init_process_group.__wrapped__ = original
    init_process_group._gpuprof = True
    init_process_group.__name__ = getattr(original, "__name__", "init_process_group")
    init_process_group.__doc__ = getattr(original, "__doc__", None)
    dist.init_process_group = init_process_group


def _install_h5py(h5py) -> None:
    from . import h5
    h5.install(h5py)
    variant = variants_of()
    if variant:
        from . import variants
        variants.install_h5py(h5py, variant)


def _install_pil(image_module) -> None:
    variant = variants_of()
    if variant and variant.get("jpeg_draft"):
        from . import variants
        variants.install_pil(variant)
    from . import image_sizes
    image_sizes.install(image_module)   # after the variant: it times the decoding the job does


def _install_gymnasium(gymnasium) -> None:
    from . import gym_env
    gym_env.install(gymnasium)


def _install_sb3_vec_env(module) -> None:
    from . import sb3_vec_env
    sb3_vec_env.install_vec_env(module)


def _install_sb3_env_util(module) -> None:
    from . import sb3_vec_env
    sb3_vec_env.install_env_util(module)


def variants_of():
    """The `gpuprof try` variant of this run, or None (a plain run changes nothing)."""
    from . import runtime
    return (runtime.settings() or {}).get("variant") or None


def _install_ray(ray) -> None:
    from . import ray_cluster
    ray_cluster.install(ray)


def _watch_compile(eval_frame) -> None:
    from . import steps
    steps.watch_compiled(eval_frame)


def arm(config: dict) -> None:
    PostImportHook({"torch": _install_torch, "h5py": _install_h5py, "gymnasium": _install_gymnasium,
                    "stable_baselines3.common.vec_env.base_vec_env": _install_sb3_vec_env,
                    "stable_baselines3.common.env_util": _install_sb3_env_util,
                    "ray": _install_ray, "PIL.Image": _install_pil,
                    "torch._dynamo.eval_frame": _watch_compile}).install()
