"""Find the user's own line of code that called into torch."""

import os
import sys

_GPUPROF_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_EXAMPLES_DIR = os.path.join(_GPUPROF_DIR, "examples") + os.sep   # the demo's program is a user's program


def user_location(skip_dirs=(), depth: int = 2):
    """`file:line` of the first frame outside torch (skip_dirs) and gpuprof, relative to the cwd
    when it lies below it; None when there is none."""
    skip = tuple(d for d in skip_dirs if d) + (_GPUPROF_DIR,)
    frame = sys._getframe(depth)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith("<"):
            path = os.path.abspath(filename)
            if not path.startswith(skip) or path.startswith(_EXAMPLES_DIR):
                return f"{_display(filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def _display(filename: str) -> str:
    path = os.path.abspath(filename)
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
