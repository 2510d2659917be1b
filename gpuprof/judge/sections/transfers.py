"""Host-to-device copies of the training process, and HDF5 reads summed over the job's processes.

Copy time is device time: the CUDA events around each copy. A copy the events did not time (the
first one, made before CUDA was initialised, or one whose events were never read back) is
estimated from the bytes per second of the timed ones, and the section says how many were. A copy
that held the host beyond its device time waited for the device (the kernels queued before it):
that is `device_wait_s`, never copy time. Only copies inside the steps' window count (start-up
copies and model moves are reported apart), and only the training process's: each rank's share
is against its own window (docs/how-it-works.md)."""

from gpuprof.stats.digits import FINE_DIGITS, REPORT_DIGITS

EMPTY = {"count": 0, "bytes": 0, "pageable_bytes": 0, "seconds": None, "observed": False}
_SUMMED = ("n", "bytes", "pageable_bytes", "pinned_bytes", "non_blocking", "small", "host_s", "gpu_s",
           "timed", "timed_bytes", "timed_host_s", "wait_s", "pin_n", "pin_bytes", "pin_s")


def _window(steps: dict):
    start, end = steps.get("window_start"), steps.get("window_end")
    if start is None or end is None or end <= start:
        return None
    return start, end


def in_window_fraction(event: dict, window) -> float:
    """The share of one block of copies made inside the steps' window, by the time its copies span
    (blocks a bounded read merged keep the first copy's time and the last's). A block without a span
    (written before blocks had one) counts whole, as copies were counted before."""
    if window is None:
        return 1.0
    t0, t1 = event.get("t0"), event.get("t1")
    if "t0" not in event and "t1" not in event:
        return 1.0
    if t0 is None or t1 is None:            # a block holding only late read-backs of earlier copies
        t0 = t1 = event.get("t")
    if t0 is None or t1 < t0:
        return 1.0
    start, end = window
    if t1 == t0:
        return 1.0 if start < t0 <= end else 0.0
    return max(min(t1, end) - max(t0, start), 0.0) / (t1 - t0)


def _sum(events, window, inside: bool) -> tuple:
    sums = {k: 0.0 for k in _SUMMED}
    dtypes: dict = {}
    for event in events:
        share = in_window_fraction(event, window)
        share = share if inside else 1.0 - share
        if share <= 0.0:
            continue
        for k in _SUMMED:
            sums[k] += (event.get(k) or 0) * share
        for dtype, nbytes in (event.get("dtypes") or {}).items():
            dtypes[dtype] = dtypes.get(dtype, 0) + nbytes * share
    return sums, {dtype: int(round(nbytes)) for dtype, nbytes in dtypes.items()}


def _seconds(sums: dict, everything: dict, legacy: bool) -> tuple:
    """(copy seconds, basis, copies estimated, bytes per second of the timed copies)."""
    count, timed = sums["n"], sums["timed"]
    if legacy:     # blocks without timed bytes: device time only when every copy was timed
        if timed and round(timed) >= round(count):
            return sums["gpu_s"], "device", 0, None
        return sums["host_s"], "host", 0, None
    timed_bytes, gpu_s = sums["timed_bytes"], sums["gpu_s"]
    if not timed_bytes:
        timed_bytes, gpu_s = everything["timed_bytes"], everything["gpu_s"]
        if not timed_bytes:
            return sums["host_s"], "host", 0, None
        untimed_bytes, estimated = sums["bytes"], count
        return untimed_bytes * gpu_s / timed_bytes, "device", estimated, timed_bytes / gpu_s if gpu_s else None
    untimed_bytes = max(sums["bytes"] - sums["timed_bytes"], 0.0)
    estimated = max(count - timed, 0.0)
    seconds = sums["gpu_s"] + untimed_bytes * gpu_s / timed_bytes
    return seconds, "device", estimated, timed_bytes / gpu_s if gpu_s else None


def _rounded(value, digits=FINE_DIGITS):
    return round(value, digits) if value is not None else None


def copied_values(events, steps: dict = None):
    """What the first large float copies of the training process held: {dtype, shape, where,
    uint8_candidate, uint8_form, looked_at} with `uint8_candidate` only when every one looked at could
    travel as uint8; None where none was looked at."""
    pid = (steps or {}).get("pid")
    own = [e for e in events or [] if pid is None or e.get("pid") == pid]
    if not own:
        return None
    first = max(own, key=lambda e: e.get("bytes") or 0)
    forms = {e.get("uint8_form") for e in own}
    return {"dtype": first.get("dtype"), "shape": first.get("shape"), "where": first.get("where"),
            "uint8_candidate": all(e.get("uint8_candidate") for e in own),
            "uint8_form": first.get("uint8_form") if len(forms) == 1 else None, "looked_at": len(own)}


def analyse_copies(events, steps: dict = None, values=None) -> dict:
    """The copies section for the training process (`steps["pid"]`) against its steps' window; with
    `values` (COPY_VALUES events), what its large float copies held."""
    if not events:
        return dict(EMPTY)
    steps = steps or {}
    pid = steps.get("pid")
    own = [e for e in events if pid is None or e.get("pid") == pid]
    others = [e for e in events if pid is not None and e.get("pid") != pid]
    window = _window(steps)
    inside, dtypes = _sum(own, window, True)
    outside, _ = _sum(own, window, False)
    everything, _ = _sum(own, None, True)
    legacy = bool(own) and not any("timed_bytes" in e for e in own)
    seconds, basis, estimated, rate = _seconds(inside, everything, legacy)
    window_s = steps.get("window_s") if window is not None else None
    count = int(round(inside["n"]))
    out = {
        "observed": True,
        "count": count, "bytes": int(round(inside["bytes"])), "pageable_bytes": int(round(inside["pageable_bytes"])),
        "pinned_bytes": int(round(inside["pinned_bytes"])), "non_blocking": int(round(inside["non_blocking"])),
        "small": int(round(inside["small"])),
        "seconds": _rounded(seconds) if count else None, "basis": basis,
        "share": _rounded(seconds / window_s, REPORT_DIGITS) if count and window_s else None,
        "host_s": _rounded(inside["host_s"]), "gpu_s": _rounded(inside["gpu_s"]) if inside["timed"] else None,
        "timed": int(round(inside["timed"])), "estimated": int(round(estimated)),
        "bytes_per_s": round(rate) if rate else None,
        "device_wait_s": _rounded(inside["wait_s"]),
        "device_wait_share": _rounded(inside["wait_s"] / window_s, REPORT_DIGITS) if window_s else None,
        "dtypes": dtypes,
        "pin_memory": {"count": int(round(inside["pin_n"])), "bytes": int(round(inside["pin_bytes"])),
                       "seconds": _rounded(inside["pin_s"])},
        "outside_steps": {"count": int(round(outside["n"])), "bytes": int(round(outside["bytes"]))},
    }
    held = copied_values(values, steps)
    if held is not None:
        out["values"] = held
    if others:
        out["other_processes"] = {"processes": len({e.get("pid") for e in others}),
                                  "count": sum(e.get("n") or 0 for e in others),
                                  "bytes": sum(e.get("bytes") or 0 for e in others)}
    return out


def analyse_hdf5(descriptions, reads) -> list:
    latest: dict = {}
    for read in reads:   # each h5read event carries running totals for one process's data set
        key = (read.get("pid"), read.get("file"), read.get("name"))
        if key not in latest or read["calls"] >= latest[key]["calls"]:
            latest[key] = read
    merged: dict = {}
    for (_, file, name), read in latest.items():
        entry = merged.setdefault((file, name), {"calls": 0, "bytes": 0, "elements": 0, "chunks_touched": 0, "opens": 0,
                                                 "open_s": 0.0, "read_s": 0.0, "processes": 0})
        for k in ("calls", "bytes", "elements", "chunks_touched", "opens", "open_s", "read_s"):
            entry[k] += read.get(k) or 0
        entry["processes"] += 1
    out = []
    seen = set()
    for desc in descriptions:
        dataset = (desc.get("file"), desc.get("name"))
        if dataset in seen:
            continue
        seen.add(dataset)
        reads_of = merged.get(dataset, {"calls": 0, "bytes": 0, "elements": 0, "chunks_touched": 0, "opens": 0,
                                        "open_s": 0.0, "read_s": 0.0, "processes": 0})
        chunk_bytes = desc.get("chunk_bytes")
        cache = desc.get("rdcc_nbytes")
        decoded = reads_of["chunks_touched"] * chunk_bytes if chunk_bytes else None
        out.append({
            "file": desc.get("file"), "dataset": desc.get("name"), "shape": desc.get("shape"),
            "dtype": desc.get("dtype"), "chunks": desc.get("chunks"), "chunk_bytes": chunk_bytes,
            "compression": desc.get("compression"), "compression_opts": desc.get("compression_opts"),
            "rdcc_nbytes": cache, "rdcc_nslots": desc.get("rdcc_nslots"), "rdcc_w0": desc.get("rdcc_w0"),
            "cache_holds_a_chunk": (cache >= chunk_bytes) if cache is not None and chunk_bytes else None,
            "reads": reads_of["calls"], "bytes_read": reads_of["bytes"], "chunks_touched": reads_of["chunks_touched"],
            "read_amplification": decoded / reads_of["bytes"] if decoded and reads_of["bytes"] else None,
            "processes": reads_of["processes"],
            # Opened again for most reads (`f["images"][i]` in __getitem__): each new handle starts
            # with an empty chunk cache, so no cache size helps until the handle is kept.
            "opens": reads_of["opens"],
            "reopened_per_read": bool(reads_of["calls"]) and reads_of["opens"] * 2 > reads_of["calls"],
            **({"opened_at": desc["opened_at"]} if desc.get("opened_at") else {}),
            **({"open_s": round(reads_of["open_s"], FINE_DIGITS)} if reads_of.get("open_s") else {}),
            **({"read_s": round(reads_of["read_s"], FINE_DIGITS)} if reads_of.get("read_s") else {}),
        })
    return out
