"""What a run was made of, beyond its command line: the git commit of the folder it ran in (and
whether the work tree had uncommitted changes), and the torch and CUDA versions it ran with. Read
by the supervisor once, when run.json is written, so that `gpuprof compare` can say what changed
between two runs.

Cheap and quiet by design: two `git` calls with a short timeout, and torch's version read from its
installed files (torch/version.py) without importing torch. Anything not known is left out, never
guessed: another interpreter's torch (a run whose program sees other packages than gpuprof's) is
not looked up. Ground floor: stdlib only."""

import importlib.util
import os
import re
import subprocess
import sys

GIT_TIMEOUT_S = 2.0
#: run kinds whose program runs in the folder gpuprof was started in
LOCAL_KINDS = ("script", "module", "command", "notebook")


def collect(kind: str, interpreter: dict = None, cwd: str = None) -> dict:
    """{"git": {...}, "torch": "2.3.1", "cuda": "12.1"} with only what is known; {} for an attach
    (its program runs elsewhere)."""
    if kind not in LOCAL_KINDS:
        return {}
    out = {}
    git = git_state(cwd or os.getcwd())
    if git:
        out["git"] = git
    if _same_packages(kind, interpreter):
        out.update(torch_versions())
    return out


def git_state(cwd: str) -> dict:
    """{"commit": sha, "dirty": bool} of the repository holding `cwd`, or {} outside one (or
    without git). Untracked files do not count as dirty: build outputs and run folders are."""
    commit = _git(cwd, "rev-parse", "HEAD")
    if not commit:
        return {}
    status = _git(cwd, "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def run_git(cwd: str, *args, timeout: float = GIT_TIMEOUT_S):
    """git's stdout as it printed it, or None where git is missing, fails or takes too long."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout if done.returncode == 0 else None


def _git(cwd: str, *args):
    out = run_git(cwd, *args)
    return None if out is None else out.strip()


def _same_packages(kind: str, interpreter) -> bool:
    """Whether the program saw gpuprof's own packages: a notebook cell runs in this process; a
    script or module run says so in its interpreter entry; a bare command may use any python."""
    if kind == "notebook":
        return True
    return isinstance(interpreter, dict) and interpreter.get("same_environment") is True


def torch_versions() -> dict:
    """{"torch": version, "cuda": version or None} from an imported torch, else from the text of
    its installed version.py; {} where torch is not installed."""
    torch = sys.modules.get("torch")
    version_module = getattr(torch, "version", None)
    if version_module is not None and getattr(version_module, "__version__", None):
        return {"torch": str(version_module.__version__), "cuda": getattr(version_module, "cuda", None)}
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = os.path.join(list(spec.submodule_search_locations)[0], "version.py")
    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read(4096)
    except OSError:
        return {}
    return parse_version_file(text)


def parse_version_file(text: str) -> dict:
    """torch/version.py's `__version__` and `cuda` (None on a CPU build)."""
    version = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    if not version:
        return {}
    cuda = re.search(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
    return {"torch": version.group(1), "cuda": cuda.group(1) if cuda else None}


def report_section(meta: dict) -> dict:
    """{"provenance": ...} for the report when run.json has it: what was recorded, with the
    python and gpuprof versions the run itself noted. Empty for runs recorded without it."""
    recorded = meta.get("provenance")
    if not isinstance(recorded, dict):
        return {}
    return {"provenance": dict(recorded, python=meta.get("python"), gpuprof_version=meta.get("gpuprof_version"))}
