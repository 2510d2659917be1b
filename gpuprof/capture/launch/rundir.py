"""Create the run folder: the one named by --out if it is free, otherwise a fresh one inside it."""

import json
import os
import time

from gpuprof.errors import UsageProblem
from gpuprof.record.hosts import host_name
from gpuprof.record.schema import EVENTS_DIR, RUN_FILE, RUN_FORMAT

def default_parent() -> str:
    """Where runs go without --out: a state folder of the user's, never the program's cwd (a run
    folder there would make `git status` dirty, and some programs refuse to run in a dirty tree).
    $XDG_STATE_HOME/gpuprof/runs, else ~/.local/state/gpuprof/runs."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "gpuprof", "runs")


def _fresh_name(label: str) -> str:
    """<script>-<host>-<time>-<random>: runs of one job on many nodes, written into one shared
    folder, never collide and say where each ran."""
    return f"{label}-{host_name()}-{time.strftime('%Y%m%d-%H%M%S')}-{os.urandom(3).hex()}"


def spans_nodes(argv=(), environ=None) -> bool:
    """Whether this run is one node of a job on several: Slurm says so (SLURM_NNODES or
    SLURM_JOB_NUM_NODES above 1), or the command is a torchrun with --nnodes other than 1."""
    environ = os.environ if environ is None else environ
    for name in ("SLURM_NNODES", "SLURM_JOB_NUM_NODES"):
        value = environ.get(name, "")
        if value.isdigit() and int(value) > 1:
            return True
    args = [str(a) for a in argv]
    for i, arg in enumerate(args):
        value = None
        if arg == "--nnodes" and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--nnodes="):
            value = arg.split("=", 1)[1]
        if value is not None and value.strip() not in ("1", "1:1"):
            return True
    return False


def _claim(path: str, placeholder: dict) -> bool:
    """Take `path` for this run by creating its run.json exclusively; False if another run has it."""
    try:
        fd = os.open(os.path.join(path, RUN_FILE), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as handle:
        json.dump(placeholder, handle)
    return True


def create_run_dir(out, label: str, per_node: bool = False) -> str:
    """`--out DIR` names the run folder; if DIR already holds a run, a new folder inside DIR is used,
    so neither earlier nor concurrent runs are ever overwritten. Without --out: a fresh folder in
    default_parent(). `per_node` (one node of a multi-node job): always a fresh folder inside DIR,
    so every node's run sits beside the others' and `gpuprof report DIR` merges them."""
    placeholder = {"format": RUN_FORMAT, "status": "running", "pid": os.getpid()}
    parent = out if out is not None else default_parent()
    try:
        os.makedirs(parent, exist_ok=True)
        if not os.access(parent, os.W_OK | os.X_OK):
            raise PermissionError(13, "permission denied")
        if out is not None and not per_node and _claim(parent, placeholder):
            path = parent
        else:
            while True:
                path = os.path.join(parent, _fresh_name(label))
                try:
                    os.makedirs(path)
                except FileExistsError:
                    continue
                if _claim(path, placeholder):
                    break
        os.makedirs(os.path.join(path, EVENTS_DIR), exist_ok=True)
    except NotADirectoryError:
        raise UsageProblem(f"cannot use --out {parent}: it is a file, not a folder")
    except OSError as exc:
        raise UsageProblem(f"cannot write run folder {parent}: {exc.strerror or exc}")
    return path
