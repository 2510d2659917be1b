"""A /proc file the probes keep open and re-read cheaply, and that never touches a descriptor the
program has taken over: it is placed high in the table, checked by what it reads, and closed only
while it still names the file gpuprof opened."""

import os
import threading

from ...record.fds import close_if_mine, identity, open_private

_get_ident = threading.get_ident


class ProcFile:
    """A /proc file kept open for the thread that opened it; reopened when another thread asks (a
    forked child closes it first), read with one pread. None
    where it does not exist. The descriptor sits high in the table (gpuprof.record.fds); if the
    program closed it and reused the number, the read does not look like this file, and the number
    is left to the program (never closed) and the file opened again."""

    def __init__(self, path: str, size: int, looks_right):
        self.path = path
        self.size = size
        self.looks_right = looks_right
        self.key = None
        self.fd = None
        self.ident = None

    def read(self):
        key = _get_ident()
        if self.key != key:
            self.close()
            self._open(key)
        if self.fd is None:
            return None
        try:
            text = os.pread(self.fd, self.size, 0)
        except OSError:
            text = b""
        if not self.looks_right(text):
            self.fd = self.ident = None      # not ours any more: the program reused the number
            self._open(key)
            if self.fd is None:
                return None
            text = os.pread(self.fd, self.size, 0)
        return text

    def _open(self, key) -> None:
        try:
            self.fd = open_private(self.path, os.O_RDONLY)
            self.ident = identity(self.fd)
        except OSError:
            self.fd = self.ident = None
        self.key = key

    def fresh(self) -> bool:
        """True when the last read came from this very thread."""
        return self.key == _get_ident()

    def close(self) -> None:
        close_if_mine(self.fd, self.ident)
        self.key = None
        self.fd = None
        self.ident = None
