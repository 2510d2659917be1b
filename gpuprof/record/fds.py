"""Descriptors gpuprof opens inside the user's processes, kept out of the program's way.

They are close-on-exec and numbered from the top of the descriptor table down, so the program's
own `open()` gets the same numbers as under plain python, and a closed stdin/stdout/stderr is never
filled by one of gpuprof's files. Before gpuprof reads through or closes a descriptor it kept, it
checks the number still names its own file: the program may have closed it (`os.closerange`) and
reused the number for one of its own."""

import os

try:
    import fcntl as _fcntl
except ImportError:     # not POSIX
    _fcntl = None

_HIGH = {"base": None}


def _high_base() -> int:
    if _HIGH["base"] is None:
        try:
            import resource
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        except (ImportError, OSError, ValueError):
            soft = 1024
        if soft <= 0 or soft > 1 << 20:        # RLIM_INFINITY and friends
            soft = 1024
        _HIGH["base"] = max(3, min(soft, 4096) - 64)
    return _HIGH["base"]


def open_private(path: str, flags: int, mode: int = 0o644) -> int:
    """os.open, close-on-exec, moved to a high number when the descriptor table allows it."""
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), mode)
    if _fcntl is None:
        return fd
    try:
        high = _fcntl.fcntl(fd, _fcntl.F_DUPFD_CLOEXEC, _high_base())
    except OSError:
        try:
            high = _fcntl.fcntl(fd, _fcntl.F_DUPFD_CLOEXEC, 3) if fd < 3 else fd
        except OSError:
            high = fd
    if high != fd:
        os.close(fd)
    return high


def identity(fd: int):
    """(device, inode) of an open descriptor, or None."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def close_if_mine(fd: int, ident) -> None:
    """Close `fd` only if it still names the file gpuprof opened there."""
    if fd is not None and ident is not None and identity(fd) == ident:
        try:
            os.close(fd)
        except OSError:
            pass
