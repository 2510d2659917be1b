"""DataLoader probe: how long the training loop waits for each batch, and who produced it at what cost.

Consumer side (the process iterating the loader): the time blocked in the iterator's `_next_data`
per batch, the loader's settings and the user's line that built it, and facts about the first
batches. Producer side (the main process when num_workers=0, else each worker, whatever the start
method): per batch fetched, its wall time, CPU time and real disk reads (this thread's
/proc/thread-self/io), with the worker id. Everything goes through bounded streams."""

import functools
import multiprocessing
import os
import sys
import time
import weakref

from . import runtime, collate_origin, loader_origin, self_cost, worker_clues
from .batch_facts import describe_batch
from .procfile import ProcFile
from .stream import PENDING_LIMIT, Stream
from .where import locate
from ...record import kinds

FACT_BATCHES = 3
TICK_EVERY = 63         # batches between asks whether the event file is due a flush, less one (a mask)

_loader_ids = weakref.WeakKeyDictionary()
_loader_events = weakref.WeakKeyDictionary()     # loader -> its registration, announced again per notebook cell
_state = {"next": 0, "starting": None, "active": None, "batches": 0, "generation": 0}


def shared_state() -> dict:
    """The probe's live state, for the step probe's hot path (it reads "batches": the batches taken
    from any DataLoader in this process) without a call per step."""
    return _state
_consumers = {}         # loader id -> Stream of batch waits
_facts_left = {}        # loader id -> batches still to describe
_producers = {}         # (loader id, worker id) -> Stream of fetch costs
_io = {"previous": None, "last": -1.0, "slow": True}
#: The run-queue wait (two /proc reads, most of the probe's cost per batch) is read for a fetch when
#: the previous one took at least this long: a faster one has no wait for a CPU worth knowing.
QUEUE_READ_FROM_S = 0.001


def install(torch) -> None:
    from torch.utils.data import dataloader as dl
    from torch.utils.data._utils import fetch

    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    _patch_end_of_init(dl.DataLoader, torch_dir)
    _patch_get_iterator(dl.DataLoader, dl._utils.worker)
    for cls in (dl._SingleProcessDataLoaderIter, dl._MultiProcessingDataLoaderIter):
        _patch_next_data(cls, torch)
    for cls in (fetch._MapDatasetFetcher, fetch._IterableDatasetFetcher):
        _patch_fetch(cls, torch)
    runtime.at_close(_flush_all)
    runtime.at_fork_child(_reset_in_child)
    runtime.at_cell_start(_announce_known)
    self_cost.install({"batch": batches_consumed})


# -- loaders ----------------------------------------------------------------------------------
# No wrapper sits around torch's own DataLoader.__init__ or an iterator's __init__: a warning torch
# raises there with stacklevel=2 would name the wrapper's file instead of torch's (or the user's).
_INITIALIZED = "_DataLoader__initialized"      # the attribute DataLoader.__init__ sets last


def _patch_end_of_init(cls, torch_dir) -> None:
    """Register a loader when its __init__ marks it initialised (torch's own __setattr__ runs
    first), so its settings are final and the user's line is two frames up."""
    original = cls.__setattr__

    def __setattr__(self, attr, value):
        original(self, attr, value)  # gpuprof's probe: passes the call through unchanged
        if attr == _INITIALIZED and value is True:
            try:
                _register(self, locate((torch_dir,)))
            except Exception:
                pass

    __setattr__.__wrapped__ = original
    cls.__setattr__ = __setattr__


def _register(loader, found) -> str:
    if loader in _loader_ids:
        return _loader_ids[loader]
    _state["next"] += 1
    loader_id = f"{os.getpid()}:{_state['next']}"
    _loader_ids[loader] = loader_id
    found = loader_origin.origin(loader, found or {})
    event = {
        "k": kinds.LOADER, "l": loader_id, "t": time.monotonic(), "where": found.get("where"),
        "built_in": found.get("built_in"), "framework": found.get("framework"),
        "batch_size": _batch_size(loader), "num_workers": loader.num_workers,
        "pin_memory": bool(loader.pin_memory), "prefetch_factor": loader.prefetch_factor,
        "persistent_workers": bool(loader.persistent_workers), "drop_last": bool(loader.drop_last),
        "context": _context_name(loader), "dataset": type(loader.dataset).__qualname__,
        "sampler": _sampler_name(loader),
        "batch_sampler": type(loader.batch_sampler).__qualname__ if loader.batch_sampler is not None else None,
        "iterable": _is_iterable(loader),
        "torch_threads": _torch_threads(),
    }
    if found.get("rebuilt_at"):
        event.update(rebuilt_at=found["rebuilt_at"], rebuilt_by=found.get("rebuilt_by"))
    if found.get("role"):
        event.update(role=found["role"], built_by=found.get("built_by"))
    collate = collate_origin.describe(loader.collate_fn)
    if collate:
        event["collate"] = collate
    runtime.emit(event)
    try:
        _loader_events[loader] = event
    except TypeError:
        pass
    return loader_id


def _announce_known() -> None:
    """A notebook cell's run begins: the loaders built before it (in an earlier cell) are named in
    its record too, so their batches there have their settings and line."""
    for event in list(_loader_events.values()):
        runtime.emit(dict(event, t=time.monotonic()))


def _batch_size(loader):
    """The loader's batch size, or its batch sampler's where it was given one (accelerate's prepared
    loaders, a bucketing sampler)."""
    if loader.batch_size is not None:
        return loader.batch_size
    size = getattr(loader.batch_sampler, "batch_size", None)
    return size if isinstance(size, int) else None


def _sampler_name(loader):
    """The class of the sampler that orders the samples: inside the batch samplers a framework wraps
    around it (accelerate's BatchSamplerShard over the user's RandomSampler, where the loader's own
    `sampler` is a SequentialSampler over batches)."""
    batch_sampler = loader.batch_sampler
    for _ in range(4):
        inner = getattr(batch_sampler, "batch_sampler", None)
        if inner is None or inner is batch_sampler:
            break
        batch_sampler = inner
    sampler = getattr(batch_sampler, "sampler", None) or loader.sampler
    return type(sampler).__qualname__ if sampler is not None else None


def _is_iterable(loader) -> bool:
    try:
        from torch.utils.data import IterableDataset
        return isinstance(loader.dataset, IterableDataset)
    except Exception:
        return False


def _torch_threads():
    """The intra-op threads of the process building the loader: on a CPU-only machine they share the
    cores with the workers."""
    try:
        import torch
        return int(torch.get_num_threads())
    except Exception:
        return None


def _context_name(loader):
    if not loader.num_workers:
        return None
    ctx = loader.multiprocessing_context
    if ctx is not None:
        return ctx.get_start_method() if hasattr(ctx, "get_start_method") else str(ctx)
    name = multiprocessing.get_start_method(allow_none=True)
    if name:
        return name
    try:  # the default the first Process would get, without fixing it as a side effect
        return multiprocessing.context._default_context._default_context._name
    except AttributeError:
        return None


def _patch_get_iterator(cls, worker_module) -> None:
    """Each new iterator (an epoch, or the one of persistent workers) is tagged with its loader and
    timed (worker start-up and first fetches). While it starts its workers, torch's worker loop is
    wrapped in a partial that carries the loader id: a partial of module-level functions pickles
    by name, so fork, spawn and forkserver workers alike know their loader, map-style and
    iterable datasets alike."""
    original = cls._get_iterator

    def _get_iterator(self):
        try:
            loader_id = _loader_ids.get(self) or _register(self, None)
        except Exception:
            loader_id = None
        loop = worker_module._worker_loop
        wrapped = loader_id is not None and not isinstance(loop, functools.partial)
        if wrapped:
            _state["worker_loop"] = loop
            worker_module._worker_loop = functools.partial(_worker_loop_for, loader_id)
        started = time.monotonic()
        try:
            iterator = original(self)  # gpuprof's probe: passes the call through unchanged
        finally:
            if wrapped:
                worker_module._worker_loop = loop
        try:
            setattr(iterator, _LOADER, loader_id)
            runtime.emit({"k": kinds.EPOCH, "l": loader_id, "t": started, "start_s": time.monotonic() - started})
        except Exception:
            pass
        return iterator

    _get_iterator.__wrapped__ = original
    cls._get_iterator = _get_iterator


_LOADER = "_gpuprof_loader"     # an iterator's loader id, kept on the iterator


def _worker_loop_for(loader_id, *args, **kwargs):
    """The start of one DataLoader worker: note its loader, then run torch's own worker loop (kept
    by the parent for a forked worker; torch's module attribute, never wrapped there, in a spawned
    one)."""
    _state["starting"] = loader_id
    loop = _state.get("worker_loop")
    if loop is None:
        from torch.utils.data._utils import worker
        loop = worker._worker_loop
    return loop(*args, **kwargs)


# -- the consumer: time blocked per batch ------------------------------------------------------
def _patch_next_data(cls, torch) -> None:
    original = cls._next_data
    monotonic, thread_time = time.monotonic, time.thread_time

    def _next_data(self):
        loader_id = self.__dict__.get(_LOADER)
        previous, _state["active"] = _state["active"], loader_id
        start = monotonic()
        try:
            data = original(self) if _server[0] is None else _server[0](self, original)  # gpuprof's probe: passes the call through unchanged
        except BaseException as exc:
            _state["active"] = previous
            _drop_own_frame(exc)
            raise
        _state["active"] = previous
        end = monotonic()
        try:
            if (_state["batches"] + 1) & self_cost.SAMPLE_MASK:
                _on_batch(loader_id, data, start, end, torch)
            else:                   # one batch in SAMPLE_EVERY times the probe itself
                cpu = thread_time()
                _on_batch(loader_id, data, start, end, torch)
                self_cost.note("batch", thread_time() - cpu)
        except Exception:
            pass
        return data

    _next_data.__wrapped__ = original
    cls._next_data = _next_data


def _drop_own_frame(exc) -> None:
    """Leave the probe's frame out of the traceback the program sees: the bare `raise` after this
    adds no entry of its own, so the caller's frame links straight to torch's."""
    try:
        tb = exc.__traceback__
        if tb is not None and tb.tb_frame is sys._getframe(1):
            exc.__traceback__ = tb.tb_next
    except Exception:
        pass


_server = [None]        # `gpuprof try` only: serves batches in place of the iterator (capture/probes/variants.py)


def set_server(server) -> None:
    _server[0] = server


def loader_id(loader):
    """The id this probe gave `loader` (None before it registered)."""
    return _loader_ids.get(loader)


def iterator_loader(iterator):
    """The id of the loader an iterator belongs to."""
    return iterator.__dict__.get(_LOADER)


def batches_consumed() -> int:
    """Batches this process has taken from any DataLoader (the step probe reads it)."""
    return _state["batches"]


def _on_batch(loader_id, data, start, now, torch) -> None:
    _state["batches"] += 1
    stream = _consumers.get(loader_id)
    if stream is None:
        stream = _consumers[loader_id] = Stream(kinds.BATCH, kinds.columns(kinds.BATCH), {"l": loader_id})
        _facts_left[loader_id] = FACT_BATCHES
    rows = stream.pending
    rows.append((now, now - start))
    if len(rows) >= PENDING_LIMIT:
        stream.drain()
    if not _state["batches"] & TICK_EVERY:
        runtime.tick(now)
    if _facts_left[loader_id] > 0:
        _facts_left[loader_id] -= 1
        runtime.emit({"k": kinds.BATCH_FACTS, "l": loader_id, "i": FACT_BATCHES - _facts_left[loader_id] - 1,
                      "tensors": describe_batch(data, torch)})


# -- the producer: what each fetched batch cost -----------------------------------------------
FETCH_FIELDS = kinds.columns(kinds.FETCH)


def _patch_fetch(cls, torch) -> None:
    original = cls.fetch
    get_worker_info = torch.utils.data.get_worker_info
    perf_counter, monotonic, process_time = time.perf_counter, time.monotonic, time.process_time
    thread_time = time.thread_time

    def fetch(self, possibly_batched_index):
        # This thread's user and kernel CPU: process CPU would count OpenMP threads spinning after
        # the last op, and the split tells preprocessing (user) from reading (kernel) apart.
        calls = _fetch_timed[0] = _fetch_timed[0] + 1
        sampled = not calls & self_cost.SAMPLE_MASK       # one call in SAMPLE_EVERY times the probe itself
        if sampled:
            probe_cpu = -thread_time()
        if self.__dict__.get(_COLLATE_TIMED) is not self.__dict__.get("collate_fn"):
            _time_collate(self)
        spent = _collate_spent
        spent[0] = spent[1] = 0.0
        before = _getrusage(_RUSAGE_THREAD)
        queued_before = _runqueue_wait() if _io["slow"] else None
        process_before = process_time()
        if sampled:
            probe_cpu += thread_time()
        start = perf_counter()
        try:
            data = original(self, possibly_batched_index)  # gpuprof's probe: passes the call through unchanged
        except BaseException as exc:
            _drop_own_frame(exc)
            raise
        end = perf_counter()
        if sampled:
            probe_cpu -= thread_time()
        process_cpu = process_time() - process_before
        after = _getrusage(_RUSAGE_THREAD)
        try:
            queued = _runqueue_wait() - queued_before if queued_before is not None else None
            _io["slow"] = end - start >= QUEUE_READ_FROM_S
            system = after.ru_stime - before.ru_stime
            read_bytes, read_chars = _thread_io_delta(end)
            producer = self.__dict__.get(_PRODUCER)
            if producer is None or producer[2] != _state["generation"]:
                producer = _producer_of(self, get_worker_info())
            producer[0].add(monotonic(), end - start, after.ru_utime - before.ru_utime + system, system, queued,
                            read_bytes, read_chars, process_cpu, spent[0], spent[1])
            if producer[1]:
                _note_worker_memory(end)
                # Workers, persistent ones above all, are often ended by SIGTERM from the main
                # process's exit: write each batch's figures before the batch is handed over.
                runtime.flush()
            if sampled:
                self_cost.note("fetch", probe_cpu + thread_time())
        except Exception:
            pass
        return data

    fetch.__wrapped__ = original
    cls.fetch = fetch


_PRODUCER = "_gpuprof_producer"
_COLLATE_TIMED = "_gpuprof_collate"     # the timed collate a fetcher holds (its own collate_fn once set)
_collate_spent = [0.0, 0.0]             # the current fetch's collate: wall and this thread's CPU seconds


def _time_collate(fetcher) -> None:
    """Time the fetcher's collate_fn inside each fetch (one call per batch): the batch's assembly
    apart from the dataset's __getitem__. The fetcher's attribute is replaced by a wrapper that adds
    its seconds to `_collate_spent`; the wrapper leaves its own frame out of a collate's traceback."""
    collate = fetcher.__dict__.get("collate_fn")
    if collate is None:
        return
    perf_counter, thread_time, spent = time.perf_counter, time.thread_time, _collate_spent

    def timed_collate(data):
        wall, cpu = perf_counter(), thread_time()
        try:
            return collate(data)  # gpuprof's probe: passes the call through unchanged
        except BaseException as exc:
            _drop_own_frame(exc)
            raise
        finally:
            spent[0] += perf_counter() - wall
            spent[1] += thread_time() - cpu

    timed_collate.__wrapped__ = collate
    try:
        fetcher.collate_fn = timed_collate
        fetcher.__dict__[_COLLATE_TIMED] = timed_collate
    except (AttributeError, TypeError):
        pass
_fetch_timed = self_cost.timed["fetch"]        # [calls, timed calls, their seconds]


def _producer_of(fetcher, info):
    """(stream, in a worker, fork generation) for a fetcher, kept on it: a fetcher serves one loader
    in one process (the main process's iterator, or one worker) until a fork copies it."""
    worker_id = info.id if info is not None else None
    loader_id = _state["active"] if info is None else _state["starting"]
    key = (loader_id, worker_id)
    stream = _producers.get(key)
    if stream is None:
        stream = _producers[key] = Stream(kinds.FETCH, FETCH_FIELDS, {"l": loader_id, "w": worker_id,
                                                                  "ds": type(fetcher.dataset).__qualname__})
    producer = (stream, info is not None, _state["generation"])
    try:
        setattr(fetcher, _PRODUCER, producer)
    except AttributeError:
        pass
    return producer


try:
    import resource as _resource
    _getrusage = _resource.getrusage
    _RUSAGE_THREAD = _resource.RUSAGE_THREAD
except (ImportError, AttributeError):  # not Linux: no per-thread split, thread CPU counted as user
    _RUSAGE_THREAD = None

    def _getrusage(_who):
        class _Usage:
            ru_utime = time.thread_time()
            ru_stime = 0.0
        return _Usage


def _is_schedstat(text: bytes) -> bool:
    fields = text.split()
    return len(fields) == 3 and fields[0].isdigit() and fields[1].isdigit() and fields[2].isdigit()


def _is_io(text: bytes) -> bool:
    return text.startswith(b"rchar:")


_schedstat = ProcFile("/proc/thread-self/schedstat", 128, _is_schedstat)
_iofile = ProcFile("/proc/thread-self/io", 512, _is_io)
IO_EVERY = 0.05     # seconds between reads of /proc/thread-self/io on the hot path


def _runqueue_wait() -> float:
    """Seconds this thread has waited for a CPU while runnable (schedstat): a CPU-bound producer on
    an oversubscribed machine waits here, not on I/O."""
    try:
        return int(_schedstat.read().split()[1]) / 1e9
    except (OSError, ValueError, AttributeError, IndexError):
        return 0.0


def _thread_io_delta(now: float):
    """Bytes this thread read since the last reading, read at most every IO_EVERY seconds: the
    totals stay exact while a fast loop pays for one /proc read per 50 ms, not two per batch.
    Reads between batches of the same thread are counted with the next batch."""
    if now - _io["last"] < IO_EVERY and _iofile.fresh():
        return 0, 0
    if not _iofile.fresh():
        _io["previous"] = None
    _io["last"] = now
    current = _thread_io()
    before = _io["previous"] or current
    _io["previous"] = current
    return current[0] - before[0], current[1] - before[1]


def _thread_io():
    """(read_bytes, rchar) of the calling thread; (0, 0) where /proc/thread-self is missing."""
    text = _iofile.read()
    rchar = read_bytes = 0
    for line in (text or b"").split(b"\n"):
        if line.startswith(b"rchar:"):
            rchar = int(line[6:])
        elif line.startswith(b"read_bytes:"):
            read_bytes = int(line[11:])
    return (read_bytes, rchar)


# -- a worker's own memory ----------------------------------------------------------------------
WORKER_MEMORY_EVERY = 1.0     # seconds between readings of a worker's private memory
_worker_memory = {"last": None}


def _note_worker_memory(now: float, final: bool = False) -> None:
    """A worker's private memory (Private_Clean + Private_Dirty of /proc/self/smaps_rollup), at its
    first batch and then at most once a second: its resident size cannot show copy-on-write growth
    (a forked worker's RSS counts the pages it shares with its parent from the start)."""
    last = _worker_memory["last"]
    if last is not None and now - last < WORKER_MEMORY_EVERY and not final:
        return
    _worker_memory["last"] = now
    private = 0
    try:
        with open("/proc/self/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith((b"Private_Clean:", b"Private_Dirty:")):
                    private += int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return
    event = {"k": kinds.WORKER_MEM, "t": now, "private": private, "first": last is None}
    if last is None or final or private - _worker_memory.get("clued", private) >= worker_clues.GROWN_BYTES:
        # what the worker holds: at its first and last reading, and when it has grown since the last look
        clues = worker_clues.read(buffers=last is not None)
        _worker_memory["clued"] = private
        if clues:
            event["clues"] = clues
    runtime.emit(event)


# -- lifecycle --------------------------------------------------------------------------------
def _flush_all() -> None:
    if _worker_memory["last"] is not None:         # a worker's last reading, as it shuts down
        try:
            _note_worker_memory(time.monotonic(), final=True)
        except Exception:
            pass
    for stream in list(_consumers.values()) + list(_producers.values()):
        stream.flush()


def _reset_in_child() -> None:
    """A forked worker keeps which loader it serves, and nothing of its parent's tallies."""
    _state["batches"] = 0
    _state["generation"] += 1
    _consumers.clear()
    _facts_left.clear()
    _producers.clear()
    _iofile.close()
    _schedstat.close()
    _io["previous"] = None
    _io["last"] = -1.0
    _io["slow"] = True
    _worker_memory["last"] = None
