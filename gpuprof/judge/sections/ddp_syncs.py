"""How many gradient all-reduces a DDP step makes: DDP counts only the iterations it synchronises
(those run under no_sync() are not counted), and the probe notes that count beside the optimizer
steps taken so far. A program that accumulates k micro-batches per optimizer step without no_sync()
makes k all-reduces a step; one that uses no_sync() makes one."""

#: Synced iterations between the first and last note below which the ratio is not trusted: DDP
#: updates its count only on the iterations it samples (10, 100, 200, ...), so a short run's ratio
#: is off by up to one sampling interval.
MIN_SYNCED = 200


def syncs_per_step(events: list):
    """All-reduces per optimizer step (one decimal) from the `ddp_comm` events of one process, or
    None when the run is too short to tell or the notes lack a step count."""
    noted = sorted((e for e in events if isinstance(e.get("iteration"), int) and isinstance(e.get("steps"), int)),
                   key=lambda e: e.get("t") or 0.0)
    if len(noted) < 2:
        return None
    first, last = noted[0], noted[-1]
    synced, stepped = last["iteration"] - first["iteration"], last["steps"] - first["steps"]
    if synced < MIN_SYNCED or stepped <= 0:
        return None
    return round(synced / stepped, 1)
