"""h5py probe: files opened, and per data set read: chunk shape, compression, the chunk cache in
effect (rdcc_nbytes, rdcc_nslots, rdcc_w0), and a count of reads, elements and chunks touched, and
the wall time the reads took (`read_s`: what a chunk cache can shorten, beside the rest of making a
sample).

Chunks touched are counted from the selection alone (ints, slices, index lists), which costs a few
microseconds a read: when the chunk cache cannot hold a chunk, each touch decompresses it again."""

import os
import time

from . import runtime, files_read
from .where import user_location
from ...record.redact import redact_text
from ...record import kinds

EMIT_EVERY = 500

MAX_HANDLES = 256
_datasets = {}       # (pid, data set handle) -> tally
_by_name = {}        # (pid, file path, data set name) -> tally


MAX_FILES = 64
# Both keyed by the file's name as h5py reports it (File.filename, Dataset.file.filename): cheap to
# read on every open, lookup and close, which a file opened per sample does per sample.
_opened_at = {}      # file name -> the user's line that first opened it for reading
_open_time = {}      # file name -> seconds spent opening it, looking data sets up and closing it


def install(h5py) -> None:
    _note_file_opens(h5py)
    original = h5py.Dataset.__getitem__

    def __getitem__(self, key, *args, **kwargs):
        started = time.perf_counter()
        result = original(self, key, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        try:
            _on_read(self, key, result, time.perf_counter() - started)
        except Exception:
            pass
        return result

    __getitem__.__wrapped__ = original
    h5py.Dataset.__getitem__ = __getitem__
    runtime.at_close(_flush_all)
    runtime.at_fork_child(_reset_in_child)


def _note_file_opens(h5py) -> None:
    """The user's line that first opens each file (a stack walk on a file's first open only; later
    opens cost a dictionary lookup), so the HDF5 fix can point at it."""
    original = h5py.File.__init__
    h5py_dir = os.path.dirname(os.path.abspath(h5py.__file__))

    def __init__(self, name, *args, **kwargs):
        started = time.perf_counter()
        original(self, name, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        try:
            mode = args[0] if args else kwargs.get("mode")
            if mode in (None, "r") and (len(_open_time) < MAX_FILES or self.filename in _open_time):
                key = self.filename
                if key not in _opened_at:
                    _opened_at[key] = user_location((h5py_dir,))
                _open_time[key] = _open_time.get(key, 0.0) + time.perf_counter() - started
        except Exception:
            pass

    __init__.__wrapped__ = original
    h5py.File.__init__ = __init__
    _time_handle_work(h5py)


def _time_handle_work(h5py) -> None:
    """What else a handle costs that a kept one saves: looking the data set up by name and closing
    the file (added to the file's open time)."""
    get, close = h5py.Group.__getitem__, h5py.File.close

    File = h5py.File

    def __getitem__(self, name):
        started = time.perf_counter()
        item = get(self, name)  # gpuprof's probe: passes the call through unchanged
        if _open_time and isinstance(self, File):      # a data set looked up from the file itself
            _charge(self, started)
        return item

    def close_file(self):
        started = time.perf_counter()
        key = _name_of(self) if _open_time else None     # unreadable once closed
        close(self)  # gpuprof's probe: passes the call through unchanged
        if key in _open_time:
            _open_time[key] += time.perf_counter() - started

    __getitem__.__wrapped__, close_file.__wrapped__ = get, close
    h5py.Group.__getitem__ = __getitem__
    h5py.File.close = close_file


def _name_of(file):
    try:
        return file.filename
    except Exception:
        return None


def _charge(file, started) -> None:
    key = _name_of(file)
    if key in _open_time:
        _open_time[key] += time.perf_counter() - started


def _reset_in_child() -> None:
    _datasets.clear()
    _by_name.clear()
    _open_time.clear()


def _on_read(dataset, key, result, seconds: float = 0.0) -> None:
    ident = (os.getpid(), dataset.id.id)       # the open data set's HDF5 identifier
    tally = _datasets.get(ident)
    if tally is None:
        named = (os.getpid(), dataset.file.filename, dataset.name)
        tally = _by_name.get(named)
        if tally is None:
            tally = _by_name[named] = _describe(dataset)
        tally["opens"] += 1         # a data set opened again starts with an empty chunk cache
        if len(_datasets) >= MAX_HANDLES:      # handles opened per read: keep the table small
            _datasets.clear()
        _datasets[ident] = tally
    nbytes = int(getattr(result, "nbytes", 0))
    tally["calls"] += 1
    tally["read_s"] += seconds
    tally["bytes"] += nbytes
    tally["elements"] += int(getattr(result, "size", 0))
    chunks = tally["chunks"]
    if chunks:
        tally["chunks_touched"] += chunks_touched(key, dataset.shape, chunks)
    if tally["calls"] % EMIT_EVERY == 0:
        _emit(tally)


def _describe(dataset) -> dict:
    nslots = nbytes = w0 = None
    try:
        nslots, nbytes, w0 = dataset.id.get_access_plist().get_chunk_cache()
    except Exception:
        pass
    chunks = dataset.chunks
    itemsize = dataset.dtype.itemsize
    chunk_bytes = itemsize
    for size in chunks or ():
        chunk_bytes *= size
    info = {
        "file": redact_text(os.path.basename(dataset.file.filename)), "path": dataset.file.filename, "name": dataset.name,
        "shape": list(dataset.shape), "dtype": str(dataset.dtype), "chunks": list(chunks) if chunks else None,
        "chunk_bytes": chunk_bytes if chunks else None, "compression": dataset.compression,
        "compression_opts": dataset.compression_opts, "rdcc_nbytes": nbytes, "rdcc_nslots": nslots,
        "rdcc_w0": w0, "calls": 0, "bytes": 0, "elements": 0, "chunks_touched": 0, "opens": 0, "read_s": 0.0,
    }
    opened_at = _opened_at.get(dataset.file.filename)
    if opened_at:
        info["opened_at"] = opened_at
    files_read.note(dataset.file.filename)
    runtime.emit(dict({"k": kinds.H5DATASET, "t": time.monotonic()}, **{k: v for k, v in info.items()
                                                                 if k not in ("calls", "bytes", "elements", "chunks_touched", "opens", "path",
                                                                              "read_s")}))
    return info


def _emit(tally) -> None:
    runtime.emit({"k": kinds.H5READ, "t": time.monotonic(), "file": tally["file"], "name": tally["name"],
                  "calls": tally["calls"], "bytes": tally["bytes"], "elements": tally["elements"],
                  "chunks_touched": tally["chunks_touched"], "opens": tally["opens"],
                  "open_s": round(_open_time.get(tally["path"], 0.0), 6), "read_s": round(tally["read_s"], 6)})


def _flush_all() -> None:
    for tally in _by_name.values():
        if tally["calls"] % EMIT_EVERY:
            _emit(tally)


def chunks_touched(key, shape, chunks) -> int:
    """How many chunks a selection touches (an upper bound for fancy or unusual selections)."""
    if not isinstance(key, tuple):
        key = (key,)
    expanded = []
    for item in key:
        if item is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - (len(key) - 1)))
        else:
            expanded.append(item)
    expanded += [slice(None)] * (len(shape) - len(expanded))
    total = 1
    for item, size, chunk in zip(expanded, shape, chunks):
        total *= _axis_chunks(item, size, chunk)
    return total


def _axis_chunks(item, size, chunk) -> int:
    whole = -(-size // chunk) if size else 0
    if isinstance(item, slice):
        start, stop, step = item.indices(size)
        if stop <= start:
            return 0
        if step == 1:
            return (stop - 1) // chunk - start // chunk + 1
        return len({i // chunk for i in range(start, stop, step)})
    if hasattr(item, "__index__") and not isinstance(item, bool):
        return 1
    try:
        return len({int(i) // chunk for i in item})
    except TypeError:
        return whole
