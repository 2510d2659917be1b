"""Find the user's own line of code that called into torch, and the framework in between.

A DataLoader built by a framework (Hugging Face's Trainer through accelerate, Lightning's fit loop)
is built inside site-packages: the line to change is the user's, the first frame outside torch,
installed packages and the standard library, and the change is phrased in the framework's terms."""

import os
import re
import sys
import sysconfig

# The probes' own wrapper frames sit between torch and the user; the rest of gpuprof (the demo's
# program among it) is never between them.
_PROBES_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

#: Top-level packages whose users configure the DataLoader through the framework's own objects.
FRAMEWORKS = {"transformers": "transformers", "accelerate": "accelerate", "lightning": "lightning",
              "pytorch_lightning": "lightning", "lightning_fabric": "lightning", "ray": "ray"}


#: A method that returns a loader of one role, by the name frameworks and users give it: Hugging Face's
#: Trainer (get_train_dataloader, get_eval_dataloader, get_test_dataloader), Lightning's hooks
#: (train_dataloader, val_dataloader, test_dataloader, predict_dataloader) and the same names in
#: the user's own code.
_ROLE_METHOD = re.compile(r"^(?:get_)?(train|training|val|valid|validation|eval|evaluation|test|predict)_dataloader$")
ROLES = {"train": "train", "training": "train", "val": "validation", "valid": "validation",
         "validation": "validation", "eval": "validation", "evaluation": "validation", "test": "test",
         "predict": "evaluation"}


def role_of_code(code):
    """The loader role a function's name declares (`get_eval_dataloader` -> validation), or None."""
    found = _ROLE_METHOD.match(code.co_name)
    return ROLES[found.group(1)] if found else None


def _library_dirs() -> tuple:
    dirs = set()
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            path = sysconfig.get_paths().get(name)
        except Exception:
            path = None
        if path:
            dirs.add(os.path.abspath(path) + os.sep)
    return tuple(dirs)


_LIBRARIES = None


def is_library(path: str) -> bool:
    global _LIBRARIES
    if _LIBRARIES is None:
        _LIBRARIES = _library_dirs()
    return path.startswith(_LIBRARIES) or f"{os.sep}site-packages{os.sep}" in path or \
        f"{os.sep}dist-packages{os.sep}" in path


def package_of(path: str):
    """The top-level package of a file inside site-packages/dist-packages, else None."""
    for marker in (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}"):
        if marker in path:
            rest = path.split(marker, 1)[1]
            first = rest.split(os.sep, 1)[0]
            return first[:-3] if first.endswith(".py") else first
    return None


def user_location(skip_dirs=(), depth: int = 2):
    """`file:line` of the first frame outside torch (skip_dirs) and gpuprof's probes, relative to the cwd
    when it lies below it; None when there is none."""
    return locate(skip_dirs, depth + 1)["where"]


def locate(skip_dirs=(), depth: int = 2) -> dict:
    """Where the call into torch came from: `where` (the user's own line: outside torch, installed
    packages and the standard library; else the first frame outside torch), `built_in` (the library
    line that made the call, when a library did; the role method's line where a framework's method
    named the loader's role), `framework` (a known framework anywhere on the stack, else the
    package that made the call), and, where a method named for a role is on the stack, `role` and
    `built_by` (that method's qualified name)."""
    skip = tuple(d for d in skip_dirs if d) + (_PROBES_DIR,)
    frame = sys._getframe(depth)
    first_outside = where = built_in = package = None
    inner = outer = None        # the known framework nearest the user's line, inside or outside it
    role = role_frame = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if role is None:
            role = role_of_code(frame.f_code)
            role_frame = frame if role else None
        if not filename.startswith("<"):
            path = os.path.abspath(filename)
            if not path.startswith(skip):
                here = f"{display_path(path)}:{frame.f_lineno}"
                first_outside = first_outside or here
                if is_library(path):
                    name = package_of(path)
                    if where is None:
                        if name is not None and built_in is None:
                            built_in, package = f"{library_display(path)}:{frame.f_lineno}", name
                        inner = FRAMEWORKS.get(name, inner)
                    elif outer is None:
                        outer = FRAMEWORKS.get(name)
                elif where is None:
                    where = here
        frame = frame.f_back
    framework = inner or outer or (package if where and built_in else None)
    found = {"where": where or first_outside, "built_in": built_in if where else None, "framework": framework}
    if role is not None:
        found.update(role=role, built_by=getattr(role_frame.f_code, "co_qualname", role_frame.f_code.co_name))
        path = os.path.abspath(role_frame.f_code.co_filename)
        if not is_library(path):
            # the user's own method built it: a library frame below it is the framework's wrapper of
            # DataLoader.__init__ (Lightning records the arguments to rebuild it), not its builder
            found.update(built_in=None, role_by_user=True)
        elif found["built_in"]:
            # the framework's method is the call to name beside the user's line (not a helper below it)
            found["built_in"] = f"{library_display(path)}:{role_frame.f_lineno}"
    return found


def library_display(path: str) -> str:
    """An installed file as its package path ('transformers/trainer.py'), else as `display_path` shows it."""
    for marker in (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}"):
        if marker in path:
            return path.split(marker, 1)[1]
    return display_path(path)


def display_path(filename: str) -> str:
    path = os.path.abspath(filename)
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
