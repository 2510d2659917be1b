"""`try --cold`: the files a run read, and their eviction from the page cache before the next run,
so a data set larger than memory is measured as the user meets it, not warmed by the run before.

Eviction asks the kernel to drop the clean cached pages of each file (posix_fadvise DONTNEED);
it needs no privilege and touches nothing else on the machine."""

import os

from gpuprof.record import kinds


def files_of(events) -> set:
    """The files the probes saw a run read (the paths of its `files_read` events)."""
    out = set()
    for event in events or ():
        if event.get("k") == kinds.FILES_READ:
            out.update(p for p in event.get("paths") or () if isinstance(p, str))
    return out


def evict(paths) -> tuple:
    """(files evicted, files that could not be). Files that went away since are skipped."""
    done = failed = 0
    for path in sorted(paths):
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        except OSError:
            failed += 1
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            done += 1
        except (OSError, AttributeError):
            failed += 1
        finally:
            os.close(fd)
    return done, failed
