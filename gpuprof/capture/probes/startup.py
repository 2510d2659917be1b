"""Where the start-up goes: the thread that imported torch, sampled from that import until the end
of the first training step (imports, building or tokenising the dataset, loading the model,
distributed init, compilation, the first batches and the first step itself), and the user's line
that stood for each part.

A thread of its own reads that thread's stack 20 times a second (sys._current_frames: nothing runs
in the program's thread) and keeps, per (part, line), the time the samples stood for. It stops at
the end of the first step, so the steps themselves are never sampled by it (the step sampler,
gpuprof.capture.probes.sampling, starts there), and writes one event then, or at exit for a program that
never stepped. Not started in a notebook kernel (no start-up to speak of) nor in a process started
by multiprocessing's spawn or forkserver (a DataLoader worker has no first step to stop at)."""

import os
import sys
import threading
import time

from . import runtime
from ...record import kinds
from ...record.startup_parts import (COMPILATION, DATASET, DISTRIBUTED, FIRST_STEP, IMPORTS, INDEXING, LIBRARIES,
                                    MODEL_LOAD, YOUR_CODE)

INTERVAL = 0.05
MAX_KEYS = 256              # distinct (part, line) pairs kept; the rest count as that part with no line


#: (part, path fragment): a frame in such a file stands for that part; the innermost marked frame wins.
_MARKERS = (
    (COMPILATION, "torch/_dynamo/"), (COMPILATION, "torch/_inductor/"), (COMPILATION, "torch/jit/"),
    (COMPILATION, "/triton/"), (COMPILATION, "torch/fx/"),
    (DISTRIBUTED, "torch/distributed/"), (DISTRIBUTED, "/deepspeed/"), (DISTRIBUTED, "/ray/"),
    (MODEL_LOAD, "torch/serialization.py"), (MODEL_LOAD, "/safetensors/"), (MODEL_LOAD, "/huggingface_hub/"),
    (MODEL_LOAD, "transformers/modeling_utils.py"), (MODEL_LOAD, "torch/hub.py"),
    (DATASET, "/datasets/"), (DATASET, "/tokenizers/"), (DATASET, "transformers/tokenization"),
    (DATASET, "/pyarrow/"), (DATASET, "/pandas/io/"),
    (INDEXING, "/glob.py"), (INDEXING, "/fnmatch.py"), (INDEXING, "/os.py"), (INDEXING, "/genericpath.py"),
    (INDEXING, "/posixpath.py"), (INDEXING, "/pathlib"),
    (FIRST_STEP, "torch/utils/data/"), (FIRST_STEP, "torch/nn/modules/"), (FIRST_STEP, "torch/autograd/"),
    (FIRST_STEP, "torch/_tensor.py"), (FIRST_STEP, "torch/optim/"),
)

#: Words in the name of the user's own function that say which part it is (checked in this order).
_NAMED = ((DATASET, ("data", "token", "corpus", "vocab", "preprocess", "index", "shard")),
          (MODEL_LOAD, ("model", "checkpoint", "weights", "pretrained")),
          (COMPILATION, ("compil",)),
          (DISTRIBUTED, ("distributed", "process_group", "init_dist")))

_state = {"thread": None, "stop": None}
_part_of_code = {}          # code object -> (part or None, is the user's own code)


def start() -> None:
    """Sample the calling thread (the one importing torch) until the first step ends."""
    try:
        if _state["thread"] is None and _wanted():
            _start()
    except Exception:
        pass


def _start() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=_run, args=(threading.get_ident(), time.monotonic(), stop),
                              name="gpuprof-startup", daemon=True)
    _state.update(thread=thread, stop=stop)
    thread.start()
    runtime.at_first_step(_first_step)
    runtime.at_close(_stop)
    runtime.at_fork_child(_reset_in_child)


def _wanted() -> bool:
    settings = runtime.settings() or {}
    if settings.get("sample_stacks", True) is False or runtime.in_kernel():
        return False
    mp = sys.modules.get("multiprocessing")
    return mp is None or mp.parent_process() is None


def _first_step() -> None:
    _stop(first_step=True)


def _stop(first_step: bool = False) -> None:
    thread, stop = _state["thread"], _state["stop"]
    if thread is None or stop.is_set():
        return
    _state.update(first_step=first_step, ended=time.monotonic())
    stop.set()
    if thread is not threading.current_thread():
        thread.join(timeout=0.5)


def _reset_in_child() -> None:
    """A forked child (a DataLoader worker) has no sampler thread and no start-up of its own."""
    _state.update(thread=None, stop=None)


#: Frames without a name of their own: a comprehension or a lambda runs inside a named function.
_ANONYMOUS = ("<genexpr>", "<lambda>", "<listcomp>", "<dictcomp>", "<setcomp>")


def part_of(frame):
    """(part, the innermost user line as 'function (file:line)' or None) for one stack. The part is
    the innermost marked library frame inside the user's innermost frame; else what the user's
    function is named for; else the first marked frame outside it (the DataLoader calling the
    user's `__getitem__`). Where the innermost user frame is a comprehension or a lambda, the line
    is followed by the user's named function around it, '<genexpr> (f:6)<tokenize (f:9)': a user
    finds the function, and its name says the part."""
    inside, named, outside, where, owner = None, None, None, None, None
    while frame is not None:
        code = frame.f_code
        found = _part_of_code.get(code)
        if found is None:
            found = _part_of_code[code] = _classify(code)
        marked, is_user = found
        if is_user and where is None:
            where = f"{code.co_name} ({_display(code.co_filename)}:{frame.f_lineno})"
            named = _named(code.co_name)
            owner = None if code.co_name in _ANONYMOUS else where
        elif is_user and owner is None:
            if code.co_name not in _ANONYMOUS:
                owner = f"{code.co_name} ({_display(code.co_filename)}:{frame.f_lineno})"
                where, named = f"{where}<{owner}", named or _named(code.co_name)
        elif marked is not None:
            if where is None and inside is None:
                inside = marked
            elif where is not None and outside is None and marked != IMPORTS:
                outside = marked        # an import around the user's code is not what that code does
        frame = frame.f_back
    return inside or named or outside or (YOUR_CODE if where else LIBRARIES), where


def _classify(code):
    """(the part a frame of this code stands for, or None; whether it is the user's own code)."""
    from .sampling import PROBES_DIR as _PROBES_DIR, is_library as _is_library
    path = code.co_filename.replace(os.sep, "/")
    if path.startswith("<frozen importlib"):
        return IMPORTS, False
    library = _is_library(path)
    if library and code.co_name == "<module>":
        return IMPORTS, False          # a library's module-level code runs while it is imported
    for part, fragment in _MARKERS:
        if fragment in path:
            return part, False
    user = not (library or path.startswith("<") or os.path.abspath(code.co_filename).startswith(_PROBES_DIR))
    return None, user


def _named(function: str):
    lowered = function.lower()
    for part, words in _NAMED:
        if any(word in lowered for word in words):
            return part
    return None


def _display(filename: str) -> str:
    from .sampling import display_path as display
    return display(filename)


def _run(ident: int, started: float, stop) -> None:
    counts = {}
    taken = 0
    previous = started
    current_frames = sys._current_frames
    while not stop.wait(INTERVAL):
        try:
            frame = current_frames().get(ident)
            if frame is None:
                break           # the thread that imported torch is gone
            part, where = part_of(frame)
            del frame
            now = time.monotonic()
            key = f"{part}|{where or ''}"
            if key not in counts and len(counts) >= MAX_KEYS:
                key = f"{part}|"
            counts[key] = counts.get(key, 0.0) + (now - previous)
            previous = now
            taken += 1
        except Exception:
            break
    try:
        runtime.emit({"k": kinds.STARTUP_SAMPLES, "t": _state.get("ended") or time.monotonic(), "t0": started, "n": taken,
                      "first_step": bool(_state.get("first_step")),
                      "counts": {key: round(value, 4) for key, value in counts.items()}})
    except Exception:
        pass
