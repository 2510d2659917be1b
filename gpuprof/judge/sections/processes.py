"""Who was who in the job: the Python processes the bootstrap registered."""

from gpuprof.record import kinds


def registered_processes(groups: list) -> list:
    out = []
    for events in groups:
        first = events[0] if events else {}
        if first.get("k") == kinds.PROCESS:
            out.append({k: first.get(k) for k in ("pid", "ppid", "argv", "origin", "t")})
    return sorted(out, key=lambda p: p.get("t") or 0)


def events_of_kind(groups: list, kind: str) -> list:
    """All events of one kind across processes, each tagged with the pid that wrote it."""
    found = []
    for events in groups:
        pid = events[0].get("pid") if events and events[0].get("k") == kinds.PROCESS else None
        for event in events:
            if event.get("k") == kind:
                if pid is not None and "pid" not in event:
                    event = dict(event, pid=pid)
                found.append(event)
    return found
