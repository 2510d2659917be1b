"""What is left of a job once its main process has ended after a signal.

Under plain python, a DataLoader worker whose parent died notices it at its next check (torch's
watchdog polls the parent every 5 s, and only between batches: a worker in a long `__getitem__`
goes on until the item is done). A scheduler that sends TERM, TERM, KILL to the process it started
expects the job gone with it; under gpuprof that process is gpuprof, so gpuprof takes down what the
job left in its own process group (the workers, pools and helpers it started without a session of
their own) right after the job's main process ends, before any report work. Processes that started
a session of their own (daemons, `start_new_session=True`) are left alone, as a terminal hangup or
a group kill would have left them.
"""

import os
import signal


def end_leftovers(pgid: int, tracked=()) -> list:
    """SIGKILL what remains of the job's process group `pgid`, and each tracked descendant
    (pid, start ticks) that is still the same process, still in gpuprof's session and not a
    session leader. Returns the pids signalled. Never raises."""
    signalled = []
    try:
        members = _group_members(pgid)
        os.killpg(pgid, signal.SIGKILL)
        signalled.extend(members)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    own_session = _session_of(os.getpid())
    for pid, start_ticks in tracked:
        if pid in signalled or pid == os.getpid():
            continue
        stat = _stat(pid)
        if stat is None or stat["start_ticks"] != start_ticks or stat["state"] == "Z":
            continue
        if stat["session"] != own_session or stat["session"] == pid:
            continue
        try:
            os.kill(pid, signal.SIGKILL)
            signalled.append(pid)
        except OSError:
            pass
    return signalled


def _group_members(pgid: int) -> list:
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat["pgrp"] == pgid and stat["state"] != "Z":
                found.append(int(entry))
    return found


def _session_of(pid: int):
    stat = _stat(pid)
    return stat["session"] if stat else None


def _stat(pid: int):
    """state, pgrp, session and start time (clock ticks) from /proc/PID/stat, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    try:
        return {"state": fields[0], "pgrp": int(fields[2]), "session": int(fields[3]),
                "start_ticks": int(fields[19])}
    except (IndexError, ValueError):
        return None
