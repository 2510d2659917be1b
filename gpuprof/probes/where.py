"""Find the user's own line of code that called into torch."""

import os
import sys

# The probes' own wrapper frames sit between torch and the user; the rest of gpuprof (the demo's
# program among it) is never between them.
_PROBES_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_location(skip_dirs=(), depth: int = 2):
    """`file:line` of the first frame outside torch (skip_dirs) and gpuprof's probes, relative to the cwd
    when it lies below it; None when there is none."""
    skip = tuple(d for d in skip_dirs if d) + (_PROBES_DIR,)
    frame = sys._getframe(depth)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith("<") and not os.path.abspath(filename).startswith(skip):
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
