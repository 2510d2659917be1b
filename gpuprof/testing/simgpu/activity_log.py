"""Every process's activity records in one device folder, read as the files grow.

The NVML face is polled ten times a second per GPU for a whole run; reading every process's
`proc-<pid>.log` from the start each time would cost more with every minute of the run. Files only
grow by whole records, and only their last record changes in place (state.ActivityWriter extends it
while work continues back to back), so each read parses just the bytes from that last record on.
Records in a file are in the order they end, which lets a windowed read skip the older ones."""

import bisect
import os

from . import state


class _File:
    def __init__(self):
        self.records = []
        self.ends = []
        self.ordered = True          # ends non-decreasing: a windowed read may bisect


class ActivityLog:
    def __init__(self, folder: str):
        self.folder = folder
        self._files = {}             # file name -> _File

    def records(self, since: float = None) -> list:
        """[(start, end, sm_active, kind, bytes)] of every process, only those ending after `since`
        when given (all of them when None)."""
        out = []
        for name in _log_names(self.folder):
            known = self._files.setdefault(name, _File())
            self._refresh(name, known)
            if since is None:
                out.extend(known.records)
            elif known.ordered:
                out.extend(known.records[bisect.bisect_right(known.ends, since):])
            else:
                out.extend(r for r in known.records if r[1] > since)
        return out

    def _refresh(self, name: str, known: _File) -> None:
        size = state.RECORD.size
        first = max(0, len(known.records) - 1)      # the last record read may have grown since
        try:
            with open(os.path.join(self.folder, name), "rb") as source:
                source.seek(first * size)
                data = source.read()
        except OSError:
            return
        usable = len(data) - len(data) % size
        fresh = [state.RECORD.unpack_from(data, o) for o in range(0, usable, size)]
        if not fresh:
            return
        del known.records[first:], known.ends[first:]
        for record in fresh:
            if known.ends and record[1] < known.ends[-1]:
                known.ordered = False
            known.records.append(record)
            known.ends.append(record[1])


def _log_names(folder: str):
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(n for n in names if n.startswith("proc-") and n.endswith(".log"))
