"""Name a DataLoader's collate_fn where it is the user's (or a framework's) own: its qualified name
and the line that defines it, so a collate that takes a notable share of making a batch (tokenizing
the batch, padding, building masks) can be named in the report. torch's own default_collate is
not named: stacking tensors is the batch's assembly, not the user's preprocessing."""

import functools
import os

from .where import library_display, display_path, is_library

#: Attributes that hold the collate a framework's wrapper calls (Hugging Face's RemoveColumnsCollator).
_WRAPPED = ("data_collator", "collate_fn")


def _inner(collate, depth: int = 4):
    """The callable the user wrote: through functools.partial and a framework's wrapper object."""
    for _ in range(depth):
        if isinstance(collate, functools.partial):
            collate = collate.func
            continue
        inner = next((getattr(collate, a) for a in _WRAPPED if callable(getattr(collate, a, None))), None)
        if inner is None or inner is collate:
            break
        collate = inner
    return collate


def _code(collate):
    code = getattr(collate, "__code__", None)
    if code is None:
        call = getattr(type(collate), "__call__", None)
        code = getattr(call, "__code__", None)
        name = type(collate).__qualname__ + ".__call__"
    else:
        name = getattr(collate, "__qualname__", code.co_name)
    return code, name


def describe(collate):
    """{"name", "where", "library"} of a loader's collate_fn; None for torch's default or one without code."""
    try:
        if collate is None:
            return None
        collate = _inner(collate)
        code, name = _code(collate)
        if code is None:
            return None
        path = os.path.abspath(code.co_filename)
        if f"{os.sep}torch{os.sep}utils{os.sep}data{os.sep}" in path:
            return None
        library = is_library(path)
        shown = library_display(path) if library else display_path(path)
        return {"name": name, "where": f"{shown}:{code.co_firstlineno}", "library": bool(library)}
    except Exception:
        return None
