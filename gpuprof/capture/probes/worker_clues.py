"""What a DataLoader worker holds that could explain its memory growing: read inside the worker at its
first and last memory reading, so the report can name the cause the evidence shows (a cache that
grew, a buffer in the dataset's iterator, a large table of Python objects shared by fork) instead of
a generic one.

A few readings per worker, each bounded: the dataset's own container attributes (their lengths), and
after the first reading, each time the worker has grown by GROWN_BYTES and at its last, the live generators of the user's code (an IterableDataset's `__iter__` or a
pipeline stage) with their large container locals — where a shuffle buffer or prefetch queue lives."""

import gc
import os
import sys

MIN_ITEMS = 100           # a container this long is worth naming
GROWN_BYTES = 32 << 20    # a worker grown this much since the last look is looked at again
MAX_ATTRIBUTES = 64       # attributes of the dataset looked at
MAX_CLUES = 6
CONTAINERS = (list, dict, set, tuple)


def read(buffers: bool) -> dict:
    """The clues at this reading: {"attributes": {name: [type, length]}, "buffers": [...]}, or {}.
    `buffers`: also look through the live generators (a pass over the worker's objects: only after
    the first reading, and only when the worker has grown)."""
    try:
        dataset = _worker_dataset()
        if dataset is None:
            return {}
        out = {"attributes": _container_attributes(dataset)}
        if buffers:
            out["buffers"] = _generator_buffers()
        return {k: v for k, v in out.items() if v}
    except Exception:           # a clue is never worth a user's worker
        return {}


def _worker_dataset():
    data = sys.modules.get("torch.utils.data")
    info = data.get_worker_info() if data is not None else None
    return getattr(info, "dataset", None)


def _container_attributes(dataset) -> dict:
    """The dataset's attributes (and one level into wrapped datasets) that hold long containers."""
    found = {}
    objects = [("", dataset)] + [(name + ".", value) for name, value in _attributes(dataset)
                                 if hasattr(value, "__dict__") and not isinstance(value, type)][:8]
    for prefix, obj in objects:
        for name, value in _attributes(obj):
            length = _length(value)
            if length is not None and length >= MIN_ITEMS:
                found[prefix + name] = [type(value).__name__, length]
    return dict(sorted(found.items(), key=lambda kv: -kv[1][1])[:MAX_CLUES])


def _attributes(obj) -> list:
    try:
        return list(vars(obj).items())[:MAX_ATTRIBUTES]
    except TypeError:
        return []


def _length(value):
    if isinstance(value, CONTAINERS) or type(value).__name__ == "deque":
        return len(value)
    return None


def _bytes_held(container) -> int:
    """About how many bytes a container's items hold: the mean size of up to 16 of them, each with
    its buffer (bytes, numpy arrays, tensors), times the count."""
    items = list(container.values() if isinstance(container, dict) else container)
    if not items:
        return 0
    step = max(len(items) // 16, 1)
    sample = items[::step][:16]
    return int(sum(_item_bytes(x) for x in sample) / len(sample) * len(items))


def _item_bytes(item) -> int:
    nbytes = getattr(item, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    if hasattr(item, "element_size") and hasattr(item, "numel"):
        return item.element_size() * item.numel()
    return sys.getsizeof(item)


def _generator_buffers() -> list:
    """Live generators of code outside the standard library, torch and gpuprof (the user's dataset or
    a data library's pipeline stage), with their long container locals: where an iterable pipeline
    keeps a shuffle buffer or prefetched samples."""
    torch = sys.modules.get("torch")
    prefixes = tuple([os.path.dirname(os.__file__) + os.sep, os.path.dirname(os.path.dirname(os.path.dirname(__file__))) + os.sep]
                     + ([os.path.dirname(torch.__file__) + os.sep] if getattr(torch, "__file__", None) else []))
    out = []
    for obj in gc.get_objects():
        frame = getattr(obj, "gi_frame", None) if type(obj).__name__ == "generator" else None
        if frame is None or frame.f_code.co_filename.startswith(prefixes):
            continue
        for name, value in frame.f_locals.items():
            length = _length(value)
            if length is not None and length >= MIN_ITEMS:
                out.append({"function": frame.f_code.co_qualname if hasattr(frame.f_code, "co_qualname")
                            else frame.f_code.co_name, "local": name, "type": type(value).__name__,
                            "items": length, "bytes": _bytes_held(value),
                            "file": frame.f_code.co_filename, "line": frame.f_code.co_firstlineno})
    return sorted(out, key=lambda b: -b["items"])[:MAX_CLUES]
