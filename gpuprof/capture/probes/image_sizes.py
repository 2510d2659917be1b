"""How large the images a process decodes are, against the size it shrinks them to, and what the
two cost: PIL's decode (ImageFile.load) and resize, timed for the first SAMPLES shrinking resizes
of each process; after that the wrappers pass every call straight through.

A pipeline that decodes a 500x375 photo in full to shrink it to 64x64 throws most of the decoded
pixels away; JPEG's draft mode would have the decoder reduce it (1/2, 1/4, 1/8) for a fraction of
the work. Knowing that needs the decoded size, the resize's target and the share of a sample's
making that the two take (the thread's CPU time: a wait for a core while the job starts says nothing of the
work): one event per process, written after SAMPLES resizes (or at exit). A resize that
enlarges an image (making pictures, not shrinking photos) is not counted. Forked workers inherit
the wrappers and time their own first resizes.
The sizes are the image's own after loading, so a program already in draft mode shows the
reduced size. Image.thumbnail is left alone: it sets draft mode itself. Nothing is changed: each wrapper calls the original with the same arguments."""

import os
import time

from . import runtime
from ...record import kinds

SAMPLES = 64            # shrinking resizes timed per process; later calls pass straight through

_state = {"pid": None, "installed": False, "originals": {}}


def _fresh() -> dict:
    return {"pid": os.getpid(), "resizes": 0, "loads": 0, "decode_s": 0.0, "resize_s": 0.0, "decoded": None,
            "target": None, "format": None, "emitted": False}


_counts = _fresh()


def install(image_module) -> None:
    """Wrap PIL's decode and resizes (once per interpreter; forked children inherit the wrappers)."""
    if _state["installed"]:
        return
    from PIL import ImageFile   # the user's PIL, already imported: its decoding lives here

    originals = {(ImageFile.ImageFile, "load"): ImageFile.ImageFile.load,
                 (image_module.Image, "resize"): image_module.Image.resize}
    _state.update(installed=True, originals=originals)
    ImageFile.ImageFile.load = _timed_load(originals[(ImageFile.ImageFile, "load")])
    image_module.Image.resize = _timed_resize(originals[(image_module.Image, "resize")])
    runtime.at_close(_emit)


def _current() -> dict:
    """This process's counts (a forked child starts its own)."""
    global _counts
    if _counts["pid"] != os.getpid():
        _counts = _fresh()
    return _counts


def _timed_load(original):
    def load(self, *args, **kwargs):
        if _current()["emitted"]:
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        start = time.thread_time()
        result = original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        try:
            counts = _current()
            counts["decode_s"] += time.thread_time() - start
            counts["loads"] += 1
            counts["format"] = counts["format"] or getattr(self, "format", None)
        except Exception:
            pass
        return result

    load.__wrapped__ = original
    return load


def _timed_resize(original):
    """Resize's own time, apart from the decode it starts with (it loads the image first thing; the
    load is made, timed as decoding, just before)."""
    def resize(self, *args, **kwargs):
        if _current()["emitted"]:
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        self.load()
        source = getattr(self, "size", None)
        fmt = getattr(self, "format", None)
        start = time.thread_time()
        result = original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        try:
            _note(time.thread_time() - start, source, result.size, fmt)
        except Exception:
            pass
        return result

    resize.__wrapped__ = original
    return resize


def _note(seconds: float, source, target, fmt) -> None:
    if source is None or target[0] >= source[0] or target[1] >= source[1]:
        return          # not a shrink: nothing decoded is thrown away
    counts = _current()
    counts["resize_s"] += seconds
    counts["resizes"] += 1
    if counts["decoded"] is None and source is not None:
        counts["decoded"], counts["target"] = list(source), list(target)
        counts["format"] = fmt or counts["format"]
    if counts["resizes"] >= SAMPLES:
        _emit()


def _emit() -> None:
    counts = _current()
    if counts["emitted"] or not counts["resizes"]:
        return
    counts["emitted"] = True
    runtime.emit({"k": kinds.IMAGE_SIZES, "t": time.monotonic(), "decoded": counts["decoded"], "target": counts["target"],
                  "format": counts["format"], "resizes": counts["resizes"], "loads": counts["loads"],
                  "decode_s": round(counts["decode_s"], 6), "resize_s": round(counts["resize_s"], 6)})

