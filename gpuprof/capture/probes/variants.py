"""Variants for `gpuprof try`: the only probe code that changes what the program does.

Inactive unless the run's settings carry a `variant` (set by `gpuprof try` alone). A variant is
applied where the probes already sit, never by editing files:

- DataLoader settings (num_workers, pin_memory, persistent_workers, prefetch_factor, batch_size)
  are given to the DataLoader built at the target line (`loader`, `file:line` as the report names
  it; every loader when None) as if the program had passed them.
- `torch_threads`: the process's intra-op threads (torch.set_num_threads) set when the program
  imports torch, as the advice's line at the top of the script does, and again where the target
  loader is built; a program without a DataLoader gets it too.
- `ceiling`: after the warm-up, the target loader's iterator serves copies of the last batches it
  made instead of waiting on the pipeline (the speed of a free input pipeline).
- `echo`: each batch of the target loader is served `echo` times in a row.
- `hdf5_cache_bytes` / `hdf5_keep_handles`: files are opened with that chunk cache, and a data set
  looked up again by name returns the handle already open (which keeps its cache).
- `jpeg_draft`: each JPEG PIL decodes is put in draft mode first (the decoder reduces it by 1/2,
  1/4 or 1/8 to no less than jpeg_draft pixels a side), as `image.draft("RGB", (n, n))` would.
- model-side changes (gpuprof.capture.probes.model_side): autocast, compile and channels_last applied to the
  trained model once the probes know it, foreach/fused given to every optimizer built, and the
  tf32 / cudnn.benchmark flags set at start-up; a loss that turns NaN or infinite fails the variant.

Each application is recorded as a `variant` event, so `try` can tell a variant that took effect
from one that found nothing to change."""

import inspect
import os
import sys
import time

from . import runtime, dataloader
from .where import user_location
from ...record import kinds
from ...record.changes import KEYS, LOADER_KEYS, MODEL, OPTIMIZER
from ...record.lines import same_line

REPLAY_KEEP = 8         # batches the input ceiling replays
#: Every change key (gpuprof.record.changes) and the part of this module that applies it.
HANDLERS = dict({key: "DataLoader.__init__" for key in LOADER_KEYS},
                torch_threads="torch import", ceiling="Replay", echo="Echo",
                hdf5_cache_bytes="h5py.File.__init__", hdf5_cache_slots="h5py.File.__init__",
                hdf5_keep_handles="h5py.Group.__getitem__", jpeg_draft="PIL.ImageFile.load",
                **{key: "model_side" for key, declared in KEYS.items()
                   if declared.applies_to in (MODEL, OPTIMIZER) or key in ("allow_tf32", "cudnn_benchmark")})

_state = {"variant": None, "targets": set(), "applied": 0}


def active(config: dict):
    return (config or {}).get("variant") or None


def install_torch(torch, variant: dict) -> None:
    _state["variant"] = variant
    if variant.get("torch_threads"):
        _set_threads(torch, int(variant["torch_threads"]))
    from torch.utils.data import dataloader as dl

    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    _wrap_loader_init(dl.DataLoader, torch_dir, variant, torch)
    serve = None
    if variant.get("ceiling"):
        skip = 1 + int((runtime.settings() or {}).get("warmup_steps") or 0)
        serve = Replay(after_batches=skip, keep=REPLAY_KEEP, torch=torch)
    elif int(variant.get("echo") or 1) > 1:
        serve = Echo(int(variant["echo"]), torch=torch)
    if serve is not None:
        dataloader.set_server(serve)
    if any(key in variant for key in HANDLERS if HANDLERS[key] == "model_side"):
        from . import model_side
        model_side.install(torch, variant)
    if variant.get("ceiling") and variant.get("function"):
        skip = int((runtime.settings() or {}).get("warmup_steps") or 0)
        runtime.at_first_step(lambda: _replay_function(variant["function"], skip, torch))


# -- a hand-written batch function: the input ceiling -------------------------------------------
def _replay_function(target: dict, skip: int, torch) -> None:
    """The input ceiling for a loop without a DataLoader: the module-level function that makes the
    batches (found by the stack sampler: name, file, line) serves copies of its last results after
    the warm-up, in place of making new ones. The program calls it by its global name each step, so
    replacing the module attribute is enough; a method or a nested function cannot be replaced
    from outside, which the variant event says."""
    name, line = target.get("name"), target.get("line")
    wanted = os.path.basename(target.get("file") or "")
    found = None
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None) or ""
        if os.path.basename(path) != wanted:
            continue
        candidate = getattr(module, name, None)
        code = getattr(candidate, "__code__", None)
        if code is not None and code.co_firstlineno == line:
            found = (module, candidate)
            break
    if found is None:
        runtime.emit({"k": kinds.VARIANT, "t": time.monotonic(), "where": None, "l": None, "applied": {},
                      "error": f"no module-level function {name} at {wanted}:{line} to replay (a method or a nested "
                               "function cannot be replaced from outside)"})
        return
    module, original = found
    kept, state = [], {"calls": 0, "turn": 0}

    def replayed(*args, **kwargs):
        if state["calls"] < skip or not kept:
            state["calls"] += 1
            result = original(*args, **kwargs)  # gpuprof's probe: passes the call through unchanged
            kept.append(result)
            del kept[:-REPLAY_KEEP]
            return result
        state["turn"] += 1
        return _copy(kept[state["turn"] % len(kept)], torch)

    replayed.__wrapped__ = original
    setattr(module, name, replayed)
    runtime.emit({"k": kinds.VARIANT, "t": time.monotonic(), "where": f"{wanted}:{line}", "l": None,
                  "applied": {"ceiling": True, "function": name}, "error": None})


def _set_threads(torch, threads: int) -> None:
    """The intra-op threads at import, as `torch.set_num_threads(N)` at the top of the script."""
    try:
        torch.set_num_threads(threads)
        applied, error = {"torch_threads": threads}, None
    except Exception as exc:            # a variant never breaks the program: it is reported
        applied, error = {}, f"{exc.__class__.__name__}: {exc}"
    try:
        runtime.emit({"k": kinds.VARIANT, "t": time.monotonic(), "where": None, "l": None, "applied": applied,
                      "error": error})
    except Exception:
        pass


# -- DataLoader settings ------------------------------------------------------------------------
def _matches(where, target) -> bool:
    """Every loader when no target was named; else the loader built at that line."""
    return target is None or same_line(where, target)


def _wrap_loader_init(cls, torch_dir, variant, torch=None) -> None:
    original = cls.__init__
    signature = inspect.signature(original)
    wanted = {k: variant[k] for k in LOADER_KEYS if k in variant}
    threads = variant.get("torch_threads")

    def __init__(self, *args, **kwargs):
        where = None
        error = None
        applied = {}
        try:
            where = user_location((torch_dir,))
            if _matches(where, variant.get("loader")):
                bound = signature.bind(self, *args, **kwargs)
                applied, error = _settings_for(bound.arguments, wanted)
                if error is None:
                    bound.arguments.update(applied)
                    args, kwargs = bound.args[1:], bound.kwargs
                    if threads and torch is not None:
                        # The process that builds the loader keeps fewer intra-op threads, as the
                        # advice's torch.set_num_threads line does, leaving the workers cores.
                        torch.set_num_threads(int(threads))
                        applied["torch_threads"] = int(threads)
            else:
                where = None
        except Exception as exc:            # a variant never breaks the program: it is reported
            error, applied = f"{exc.__class__.__name__}: {exc}", {}
        original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        if where is not None:
            try:
                loader_id = dataloader.loader_id(self)
                _state["targets"].add(loader_id)
                _state["applied"] += 1
                runtime.emit({"k": kinds.VARIANT, "t": time.monotonic(), "where": where, "l": loader_id,
                              "applied": {k: v for k, v in applied.items() if k in wanted or k == "torch_threads"}
                              if error is None else {},
                              "error": error})
            except Exception:
                pass

    __init__.__wrapped__ = original
    cls.__init__ = __init__


def _settings_for(arguments: dict, wanted: dict):
    """The keyword values that give the loader `wanted`, consistently (torch refuses some mixes),
    or (None, why) when the change cannot be made to this loader."""
    out = dict(wanted)
    workers = out.get("num_workers", arguments.get("num_workers", 0))
    if "batch_size" in out and arguments.get("batch_sampler") is not None:
        return {}, "the DataLoader takes a batch_sampler, so its batch_size cannot be changed"
    if workers == 0:
        if out.get("persistent_workers"):
            return {}, "persistent_workers needs num_workers > 0"
        if "num_workers" in out:
            out["persistent_workers"] = False
            out["prefetch_factor"] = None
    return out, None


# -- serving batches: the input ceiling and echoing ---------------------------------------------
def _targeted(iterator) -> bool:
    if _state["variant"] is not None and _state["variant"].get("loader") is None:
        return True
    return dataloader.iterator_loader(iterator) in _state["targets"]


def _copy(data, torch):
    """A fresh copy of a batch: a training loop may change its inputs in place."""
    if isinstance(data, torch.Tensor):
        return data.clone()
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_copy(d, torch) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_copy(d, torch) for d in data)
    if isinstance(data, dict):
        return type(data)((k, _copy(v, torch)) for k, v in data.items())
    return data


class Replay:
    """The input ceiling: real batches until the warm-up is over, then copies of the last few,
    in turn, with the epoch ending where the real one would (map-style loaders)."""

    def __init__(self, after_batches: int, keep: int, torch):
        self.after = after_batches
        self.keep = keep
        self.torch = torch
        self.kept = []
        self.turn = 0
        self.announced = False

    def __call__(self, iterator, original):
        if not _targeted(iterator):
            return original(iterator)  # gpuprof's probe: passes the call through unchanged
        if dataloader.batches_consumed() < self.after or not self.kept:
            data = original(iterator)  # gpuprof's probe: passes the call through unchanged
            self.kept.append(data)
            del self.kept[:-self.keep]
            return data
        try:
            length = len(iterator)
        except TypeError:
            length = None
        if length is not None and iterator._num_yielded >= length:
            if hasattr(iterator, "_shutdown_workers") and not getattr(iterator, "_persistent_workers", False):
                iterator._shutdown_workers()
            raise StopIteration
        if not self.announced:
            self.announced = True
            runtime.emit({"k": kinds.VARIANT_SERVING, "t": time.monotonic(), "what": "ceiling", "kept": len(self.kept)})
        data = self.kept[self.turn % len(self.kept)]
        self.turn += 1
        return _copy(data, self.torch)


class Echo:
    """Batch echoing: each fresh batch is served `factor` times in a row."""

    def __init__(self, factor: int, torch):
        self.factor = factor
        self.torch = torch
        self.last = None
        self.left = 0
        self.source = None

    def __call__(self, iterator, original):
        if not _targeted(iterator):
            return original(iterator)  # gpuprof's probe: passes the call through unchanged
        if self.left > 0 and self.source is iterator:
            self.left -= 1
            return _copy(self.last, self.torch)
        data = original(iterator)  # gpuprof's probe: passes the call through unchanged
        self.last, self.left, self.source = data, self.factor - 1, iterator
        return data


# -- HDF5 ---------------------------------------------------------------------------------------
def install_h5py(h5py, variant: dict) -> None:
    nbytes = variant.get("hdf5_cache_bytes")
    if nbytes:
        _wrap_file_init(h5py, int(nbytes), int(variant.get("hdf5_cache_slots") or _slots_for(int(nbytes))))
    if variant.get("hdf5_keep_handles"):
        _keep_handles(h5py)


def _slots_for(nbytes: int) -> int:
    n = max(100 * max(nbytes >> 20, 1), 521)
    while any(n % d == 0 for d in range(2, int(n ** 0.5) + 1)):
        n += 1
    return n


def _wrap_file_init(h5py, nbytes: int, nslots: int) -> None:
    original = h5py.File.__init__

    def __init__(self, name, mode="r", *args, **kwargs):
        if len(args) < 5:            # rdcc_* not given positionally
            kwargs["rdcc_nbytes"] = nbytes
            kwargs["rdcc_nslots"] = nslots
            if not _state.get("hdf5_noted"):
                _state["hdf5_noted"] = True
                runtime.emit({"k": kinds.VARIANT, "t": time.monotonic(), "where": None, "l": None,
                              "applied": {"hdf5_cache_bytes": nbytes}, "error": None})
        original(self, name, mode, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged

    __init__.__wrapped__ = original
    h5py.File.__init__ = __init__


REOPENED = 16          # opens of one file in one process that mean "opened for every read"


def _count_reopens(h5py) -> None:
    """A program that opens the file again for every read closes each handle itself: no handle can
    be kept from outside. Said once, as a change that could not be made, so `try` never shows the
    cache size alone as what keeping the handle measures."""
    original = h5py.File.__init__
    opens = {}

    def __init__(self, name, *args, **kwargs):
        try:
            key = os.fspath(name) if isinstance(name, (str, os.PathLike)) else None
            if key is not None and len(opens) < 256:
                opens[key] = opens.get(key, 0) + 1
                if opens[key] == REOPENED and not _state.get("reopen_noted"):
                    _state["reopen_noted"] = True
                    runtime.emit({"k": kinds.VARIANT, "t": time.monotonic(), "where": None, "l": None, "applied": {},
                                  "error": f"the program opens {os.path.basename(key)} again for every read, so no "
                                           "data set handle can be kept from outside: keeping it needs the code "
                                           "change the fix shows (only the cache size was applied, to each open)"})
        except Exception:
            pass
        original(self, name, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged

    __init__.__wrapped__ = original
    h5py.File.__init__ = __init__


def _keep_handles(h5py) -> None:
    _count_reopens(h5py)
    original = h5py.Group.__getitem__
    opened = {}

    def __getitem__(self, name):
        key = None
        if isinstance(name, (str, bytes)):
            try:
                key = (self.id.id, name)
                found = opened.get(key)
                if found is not None and found.id.valid:
                    return found
            except Exception:
                key = None
        item = original(self, name)  # gpuprof's probe: passes the call through unchanged
        if key is not None and isinstance(item, h5py.Dataset):
            if len(opened) > 1024:
                opened.clear()
            opened[key] = item
        return item

    __getitem__.__wrapped__ = original
    h5py.Group.__getitem__ = __getitem__


# -- PIL: JPEG draft mode ---------------------------------------------------------------------------

def install_pil(variant: dict) -> None:
    """Put every JPEG in draft mode just before PIL decodes it (once per interpreter)."""
    side = int(variant.get("jpeg_draft") or 0)
    if side < 1:
        return
    from PIL import ImageFile

    original = ImageFile.ImageFile.load
    if getattr(original, "_gpuprof_draft", False):
        return
    noted = []

    def load(self, *args, **kwargs):
        if self.format == "JPEG" and _not_decoded(self) and not getattr(self, "decoderconfig", None):
            self.draft(None, (side, side))
            if not noted:
                noted.append(True)
                runtime.emit({"k": kinds.VARIANT, "t": time.monotonic(), "where": None, "l": None,
                              "applied": {"jpeg_draft": side}, "error": None})
        return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged

    load.__wrapped__ = original
    load._gpuprof_draft = True
    ImageFile.ImageFile.load = load


def _not_decoded(image) -> bool:
    """No pixels yet: draft mode can still choose the decoder's scale."""
    held = image.__dict__
    return held.get("_im", held.get("im")) is None
