"""The running job `gpuprof attach PID` is pointed at: does it exist, which of its processes run
Python, and may this user read them. Each refusal is one line that says why and what to do."""

import os

from gpuprof.errors import UsageProblem

PROC = "/proc"


class AttachRefused(UsageProblem):
    """The kernel will not let gpuprof read the job's memory."""


def process_name(pid: int, proc: str = PROC) -> str:
    try:
        with open(f"{proc}/{pid}/comm", "r", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return "?"


def tree(pid: int, proc: str = PROC) -> list:
    """The pid and every descendant, parents before children."""
    children = {}
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            with open(f"{proc}/{entry}/stat", "r", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        parent = int(stat[stat.rfind(")") + 2:].split(" ", 3)[1])
        children.setdefault(parent, []).append(int(entry))
    out, stack = [], [pid]
    while stack:
        current = stack.pop(0)
        if current in out:
            continue
        out.append(current)
        stack.extend(sorted(children.get(current, ())))
    return out


def is_python(pid: int, proc: str = PROC):
    """True when the process runs a Python interpreter (its executable, or a libpython it mapped),
    False when it does not, None when the kernel will not say (another user's process)."""
    try:
        exe = os.readlink(f"{proc}/{pid}/exe")
    except PermissionError:
        return None
    except OSError:
        return False
    if os.path.basename(exe).startswith(("python", "pypy")):
        return True
    try:
        with open(f"{proc}/{pid}/maps", "rb") as handle:
            return any(b"libpython" in line for line in handle)
    except PermissionError:
        return None
    except OSError:
        return False


def check(pid: int, proc: str = PROC) -> list:
    """The job's processes that run Python (pid first when it does). Raises UsageProblem for a pid
    that does not exist or has no Python in its tree, AttachRefused where reading is not allowed."""
    if pid <= 0 or not os.path.isdir(f"{proc}/{pid}"):
        raise UsageProblem(f"no process with PID {pid} is running")
    if pid == os.getpid():
        raise UsageProblem("PID is gpuprof's own process")
    name = process_name(pid, proc)
    found = tree(pid, proc)
    pythons, unreadable = [], []
    for member in found:
        answer = is_python(member, proc)
        if answer:
            pythons.append(member)
        elif answer is None:
            unreadable.append(member)
    if not pythons and unreadable:
        raise AttachRefused(refusal(pid, name, proc))
    if not pythons:
        raise UsageProblem(f"PID {pid} ({name}) is not a Python program, and none of its "
                           f"{len(found) - 1} child processes is: gpuprof attach reads Python stacks")
    for member in pythons[:1]:
        if not may_read(member, proc):
            raise AttachRefused(refusal(member, process_name(member, proc), proc))
    return pythons


def may_read(pid: int, proc: str = PROC) -> bool:
    """Whether the kernel lets this process read pid's memory (the access a stack sampler needs):
    opening /proc/PID/mem asks the same ptrace check."""
    try:
        fd = os.open(f"{proc}/{pid}/mem", os.O_RDONLY)
    except PermissionError:
        return False
    except OSError:
        return True          # gone meanwhile: the sampler will say so
    os.close(fd)
    return True


def ptrace_scope(proc: str = PROC):
    try:
        with open(f"{proc}/sys/kernel/yama/ptrace_scope", "r") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


def refusal(pid: int, name: str, proc: str = PROC) -> str:
    """Why the kernel refuses to let this user read pid, and what to do, in one line."""
    try:
        owner = os.stat(f"{proc}/{pid}").st_uid
    except OSError:
        owner = None
    me = os.geteuid()
    head = f"cannot read PID {pid} ({name}): "
    if owner is not None and owner != me and me != 0:
        return head + (f"it belongs to {_user(owner)} and gpuprof runs as {_user(me)}; run gpuprof attach as "
                       f"{_user(owner)}, or with sudo")
    scope = ptrace_scope(proc)
    if scope is not None and scope >= 1 and me != 0:
        return head + (f"the kernel's ptrace_scope is {scope} (only a process's parent may read it); run "
                       "gpuprof attach with sudo, or as root set /proc/sys/kernel/yama/ptrace_scope to 0")
    return head + ("the kernel refused (a container without the SYS_PTRACE capability?); run the container with "
                   "--cap-add SYS_PTRACE, or run gpuprof attach inside the job's own container as its user")


def _user(uid: int) -> str:
    try:
        import pwd
        return f"user {pwd.getpwuid(uid).pw_name}"
    except (ImportError, KeyError):
        return f"uid {uid}"
