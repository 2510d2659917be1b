"""Files the user names for output (--json, --junit, --markdown): checked before anything runs,
written after, and a failure after the run costs one line, never the report or the exit status.

`-` names standard output."""

import os
import sys

from gpuprof.errors import UsageProblem
from gpuprof.record.atomic import write_text_atomic

STDOUT = "-"


def check_writable(path: str, option: str) -> None:
    """Raise UsageProblem unless `path` can be written the way write_output writes it (a temporary
    file beside it, renamed over it). Leaves nothing behind and changes no existing file."""
    if path == STDOUT:
        return
    if os.path.isdir(path):
        raise UsageProblem(f"cannot write {option} {path}: it is a folder")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageProblem(f"cannot write {option} {path}: folder {parent} does not exist")
    probe = os.path.join(parent, f".gpuprof-check-{os.getpid()}-{os.urandom(3).hex()}")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise UsageProblem(f"cannot write {option} {path}: {exc.strerror or exc}")
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass


def check_all(*pairs) -> None:
    for path, option in pairs:
        if path is not None:
            check_writable(path, option)


def write_output(path: str, text: str) -> None:
    """Write `text` to `path` atomically, or to stdout for `-`. Raises OSError."""
    if path == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_text_atomic(path, text)


def try_write(path: str, text: str, option: str) -> bool:
    """write_output, with a failure said in one line on stderr; True when written."""
    try:
        write_output(path, text)
        return True
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        sys.stderr.write(f"gpuprof: error: could not write {option} {path}: {reason}\n")
        return False
