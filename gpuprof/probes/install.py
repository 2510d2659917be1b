"""Arms the probes without importing what they watch: each is installed the moment the program
itself finishes importing torch or h5py (a post-import hook on sys.meta_path)."""

from .post_import import PostImportHook


def _install_torch(torch) -> None:
    from . import boot, dataloader, memory, steps

    dataloader.install(torch)
    memory.install(torch)
    steps.install(torch)
    variant = variants_of()
    if variant:
        from . import variants
        variants.install_torch(torch, variant)
    boot.start_flush_timer()
    _watch_data_parallel(torch)
    if getattr(torch.version, "cuda", None):   # a CPU-only build has no device to copy to
        from . import copies
        copies.install(torch)


def _watch_data_parallel(torch) -> None:
    """Note once that nn.DataParallel is in use (the ddp advice rests on it)."""
    from . import boot

    cls = torch.nn.DataParallel
    original = cls.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        boot.emit({"k": "data_parallel"})

    __init__.__wrapped__ = original
    cls.__init__ = __init__


def _install_h5py(h5py) -> None:
    from . import h5
    h5.install(h5py)
    variant = variants_of()
    if variant:
        from . import variants
        variants.install_h5py(h5py, variant)


def variants_of():
    """The `gpuprof try` variant of this run, or None (a plain run changes nothing)."""
    from . import boot
    return (boot.settings() or {}).get("variant") or None


def _watch_compile(eval_frame) -> None:
    from . import steps
    steps.watch_compiled(eval_frame)


def arm(config: dict) -> None:
    PostImportHook({"torch": _install_torch, "h5py": _install_h5py,
                    "torch._dynamo.eval_frame": _watch_compile}).install()
